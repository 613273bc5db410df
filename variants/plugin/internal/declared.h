// File: variants/plugin/internal/declared.h
//
// What a version-2 plugin record declares about its era and counter read
// (struct vdsolab_plugin2's counter_semantics, semantics_flags,
// counter_read and vdso_clocks), checked against the ABI's definitions and
// turned into the variant's Semantics. Internal to the loader; apart from
// it so that a property test can run it over every value of each field.

#ifndef VDSOLAB_VARIANTS_PLUGIN_INTERNAL_DECLARED_H_
#define VDSOLAB_VARIANTS_PLUGIN_INTERNAL_DECLARED_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "variants/variant.h"
#include "vdso/access.h"

namespace vdsolab::variants::plugin_internal {

struct DeclaredEra {
  uint32_t counter_semantics = 0;   // enum vdsolab_counter_semantics
  uint32_t semantics_flags = 0;     // VDSOLAB_SEM_*
  uint32_t counter_read = 0;        // enum vdsolab_counter_read
  const int32_t* clocks = nullptr;  // vdso_clocks
  uint32_t n_clocks = 0;
};

// The fields in range: every enum and flag the ABI defines, and clock ids
// the kernel has; else InvalidArgument naming `path` and the field.
absl::Status CheckDeclared(const DeclaredEra& d, const std::string& path);
// For a record CheckDeclared() accepted.
Semantics DeclaredSemantics(const DeclaredEra& d);
vdso::CounterRead DeclaredCounterRead(const DeclaredEra& d);

// Whether `c` may be in a name a record gives (a variant's, an own
// clock's): letters, digits and . _ + @ -, which reports, file names and
// --variant carry as they are.
inline bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' ||
         c == '@' || c == '-';
}

// A version-4 record's own clock (struct vdsolab_own_clock), copied out
// of the plugin's memory.
struct OwnClockDecl {
  int32_t id = 0;
  std::string name;
  uint32_t kind = 0;  // enum vdsolab_own_clock_kind
  int32_t same_as = 0;
  uint32_t flags = 0;  // VDSOLAB_OWN_*
};
inline constexpr uint32_t kMaxOwnClocks = 16;

// The own clocks well-formed: ids past the kernel's and unique, names
// printable and unique and not a kernel clock's, kinds and flags the ABI
// defines, `same_as` a kernel clock one can stand for; else
// InvalidArgument naming `path` and the field.
absl::Status CheckOwnClocks(const std::vector<OwnClockDecl>& clocks,
                            const std::string& path);
// Their definitions, for clocks CheckOwnClocks() accepted; the names are
// views of `clocks`' strings.
std::vector<ClockDef> OwnClockDefs(const std::vector<OwnClockDecl>& clocks);

// What a record says of itself beyond its era.
struct DeclaredRecord {
  const char* name = nullptr;        // Not null (the loader checks).
  const char* provenance = nullptr;  // May be null: "(plugin)".
  const char* summary = nullptr;     // May be null: "".
  bool declares_semantics = false;   // Version 2.
  DeclaredEra era;                   // clocks: the vdso_clocks it serves.
};

// The variant a plugin is, made from the built-in variant whose layout it
// reads (`base`): that layout, writer and (version 1) era; the record's
// name, provenance, summary, clocks and (version 2) era; none of the
// base's own clocks or its syscall for them, which are the base reader's,
// not the plugin's. The reader (make_sim_reader, native_loop) is the
// loader's to set.
Variant PluginVariantFrom(const Variant& base, const DeclaredRecord& r);

}  // namespace vdsolab::variants::plugin_internal

#endif  // VDSOLAB_VARIANTS_PLUGIN_INTERNAL_DECLARED_H_
