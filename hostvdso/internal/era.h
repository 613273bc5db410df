// File: hostvdso/internal/era.h
//
// Which built-in variant's page layout and writer a kernel version's vDSO
// reads, and whether the image really reads it: a probe runs the image on
// pages that built-in variant's writer published and compares every answer
// with that variant's reader, bit for bit.

#ifndef VDSOLAB_HOSTVDSO_INTERNAL_ERA_H_
#define VDSOLAB_HOSTVDSO_INTERNAL_ERA_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "hostvdso/internal/image_process.h"
#include "variants/variant.h"

namespace vdsolab::hostvdso::internal {

// The built-in variant of Linux major.minor: "upstream" (6.17+), "6.15",
// "6.10", "6.5", "6.1", "5.3"; InvalidArgument for versions whose layout
// vdsolab has no variant for (before 5.3; 6.13 and 6.14, whose struct
// vdso_data sits at the start of the time page instead of at +128).
absl::StatusOr<const variants::Variant*> EraVariantFor(int major, int minor,
                                                       const std::string& what);

// Where the layout's first seq word is in the time page (128 for struct
// vdso_data, 0 for struct vdso_time_data).
uint32_t FirstRecordOffset(const variants::Layout& layout);

struct ProbeResult {
  int agreed = 0;  // Calls whose answer was the built-in reader's.
  // The image's own misbehaviour on the probe (a crash or a spin), which
  // is not a layout question: the simulation reports it as a finding. A
  // clock that faulted is not probed again; a spin ends the probe.
  std::string fault;  // "" if none.
};

// Runs the image on pages `era`'s writer published (a 2.6 GHz TSC, HZ 250,
// ticks and an NTP frequency change) at counters in range, for every clock
// id it serves and an invalid one, and compares with `era`'s reader. An
// error names the first difference: the image does not read that layout.
absl::StatusOr<ProbeResult> ProbeImage(const PreparedImage* image,
                                       const variants::Variant& era,
                                       const std::string& what);

}  // namespace vdsolab::hostvdso::internal

#endif  // VDSOLAB_HOSTVDSO_INTERNAL_ERA_H_
