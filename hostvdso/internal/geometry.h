// File: hostvdso/internal/geometry.h
//
// Where a vDSO image expects its data pages: the x86 vDSO reaches them
// RIP-relative at fixed distances below its text, which the kernel's
// linker script sets per version. vdsolab maps each simulated page
// (vdso::VvarPage: time, time namespace, random, arch, pvclock, Hyper-V)
// where the image expects the page of that role.
//
// Found, in order of trust:
//   1. the image's own symbols (a .dbg file's .symtab): vvar_page,
//      pvclock_page, hvclock_page, timens_page (x86 until 6.12), or
//      vdso_u_time_data, vdso_u_rng_data, vdso_u_arch_data, pvclock_page,
//      hvclock_page (6.13+);
//   2. else the arrangement of the image's kernel version (its version
//      note): 6.13+ six pages [time, timens, rng, arch, pvclock, hvclock];
//      5.6-6.12 four pages [vvar (data at +128), pvclock, hvclock,
//      timens]; 5.3-5.5 three [vvar, pvclock, hvclock];
//   3. then checked against the code itself: every RIP-relative reference
//      below the image must land in a page mapped here, and one must be
//      the first clock record of the layout the version implies (vvar+128
//      for struct vdso_data, the time page's start for vdso_time_data).
// Verified on the running 6.18 image (no symbols: the version's
// arrangement, confirmed by the [vvar]/[vvar_vclock] mappings) and on
// Debian's 6.1 and 6.12 vdso64.so.dbg files (symbols).

#ifndef VDSOLAB_HOSTVDSO_INTERNAL_GEOMETRY_H_
#define VDSOLAB_HOSTVDSO_INTERNAL_GEOMETRY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "host/vdso_image.h"
#include "host/vdso_sites.h"
#include "hostvdso/internal/child.h"

namespace vdsolab::hostvdso::internal {

// Simulated pages (vdso::VvarPage) by role.
inline constexpr int kSimTime = 0;
inline constexpr int kSimTimens = 1;
inline constexpr int kSimRng = 2;
inline constexpr int kSimArch = 3;
inline constexpr int kSimPvclock = 4;
inline constexpr int kSimHvclock = 5;

struct Geometry {
  int view_pages = 0;  // Pages below the image.
  // For view page i (0 = lowest address, view_pages pages below the
  // image start): the simulated page, or -1.
  int8_t sim_page[kMaxViewPages] = {-1, -1, -1, -1, -1, -1, -1, -1};
  std::string source;  // "symbols vvar_page, ..." or "Linux 6.18 arrangement"

  // "time -0x6000, timens -0x5000, ..., pvclock -0x2000, hvclock -0x1000".
  std::string Describe() const;
};

absl::StatusOr<Geometry> FindGeometry(const host::VdsoImage& image);

// Checks the code's references against the geometry; `first_record` is
// the offset of the layout's first seq word in the simulated time page.
absl::Status CheckReferences(const Geometry& geometry,
                             const host::CodeScan& scan, uint32_t first_record);

}  // namespace vdsolab::hostvdso::internal

#endif  // VDSOLAB_HOSTVDSO_INTERNAL_GEOMETRY_H_
