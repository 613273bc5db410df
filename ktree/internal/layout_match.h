// File: ktree/internal/layout_match.h
//
// Which of vdsolab's built-in page layouts a kernel tree's vDSO reads,
// derived from the tree itself: a probe translation unit, compiled against
// the tree's headers like the vDSO code, prints offsetof/sizeof of the page
// structs as assembler comments (no code is run; the kernel's asm-offsets
// works the same way). The offsets are matched field by field against the
// built-in layouts; the semantics come from the version the tree says it
// is, cross-checked with the structure.
//
// Struct generations (include/vdso/datapage.h):
//   5.3-6.9    struct vdso_data, no max_cycles       layouts 5.3, 6.1, 6.5
//   6.10-6.14  struct vdso_data with max_cycles      layout 6.10
//   6.15-6.16  struct vdso_time_data + vdso_clock    layout 6.15
//   6.17+      ... with aux_clock_data               layout upstream
// C cannot ask whether a member exists, so the probe is tried from the
// largest struct generation down; the first that compiles is the tree's.

#ifndef VDSOLAB_KTREE_INTERNAL_LAYOUT_MATCH_H_
#define VDSOLAB_KTREE_INTERNAL_LAYOUT_MATCH_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ktree/internal/source.h"

namespace vdsolab::ktree::internal {

struct ProbeAttempt {
  bool time_data = false;   // struct vdso_time_data (6.15+)
  bool max_cycles = false;  // struct vdso_data with max_cycles (6.10+)
  bool aux = false;         // aux_clock_data (6.17+)
  std::string Describe() const;
};

// Largest first.
std::vector<ProbeAttempt> ProbeAttempts();
// The probe function, appended to the wrapper translation unit.
std::string ProbeSource(const ProbeAttempt& attempt);
// "name value" pairs of the "# vdsolab-probe" comments in the assembly.
std::map<std::string, uint64_t> ParseProbe(std::string_view assembly);

struct LayoutMatch {
  std::string base;  // The built-in variant: "6.1", "6.10", ...
  // Where the kernel code's data pointer points, from the simulated page.
  uint32_t data_offset = 0;
  // Page offsets of every seq word (the glue's retry bookkeeping).
  std::vector<uint32_t> seq_offsets;
  // The clock ids the tree's VDSO_HRES | VDSO_COARSE | VDSO_RAW serve.
  std::vector<int32_t> clocks;
  // Declared semantics (plugin ABI values).
  uint32_t counter_semantics = 0;
  uint32_t semantics_flags = 0;
  std::string description;  // "struct vdso_data (248 bytes) at vvar+128"
};

// Matches the probe's values against the built-in layouts. No match is an
// InvalidArgument error naming the first differing field.
absl::StatusOr<LayoutMatch> MatchLayout(
    const std::map<std::string, uint64_t>& probe, const ProbeAttempt& attempt,
    const KernelVersion& version);

}  // namespace vdsolab::ktree::internal

#endif  // VDSOLAB_KTREE_INTERNAL_LAYOUT_MATCH_H_
