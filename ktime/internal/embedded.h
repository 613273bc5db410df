// File: ktime/internal/embedded.h
// The glue sources compiled into every tree build, embedded in the binary
// (generated from ktime/internal/*.c and ktime_abi.h by a genrule).
#ifndef VDSOLAB_KTIME_INTERNAL_EMBEDDED_H_
#define VDSOLAB_KTIME_INTERNAL_EMBEDDED_H_

namespace vdsolab::ktime::internal {

struct EmbeddedFile {
  const char* name;
  const char* text;
};
// Null-terminated list.
extern const EmbeddedFile kEmbeddedFiles[];

}  // namespace vdsolab::ktime::internal

#endif  // VDSOLAB_KTIME_INTERNAL_EMBEDDED_H_
