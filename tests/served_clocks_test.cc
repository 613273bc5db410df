// What each built-in variant says it serves from the page
// (Variant::vdso_clocks: `vdsolab variants`, the plugin records, the
// benchmark's clock list) against what its reader does in a steady run on a
// TSC machine: every kernel clock it lists is answered from the page on
// every call, every other clock id (kernel clocks it does not list, and
// ids of every range no page clock has) by the syscall on every call. A
// variant whose declaration and reader disagree is caught whichever is
// wrong.

#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "common/clockid.h"
#include "sim/engine.h"
#include "variants/registry.h"
#include "variants/variant.h"

namespace vdsolab {
namespace {

// Every kernel clock id, and ids no kernel clock has: negative ones (CPU
// and fd clocks), 12..15 (below MAX_CLOCKS, unassigned), the aux range
// 16..23, the ids where a `1 << id` mask test wraps (32, 63, 64) and the
// ends of int. The ones no variant declares must take the syscall on every
// call, whatever a reader's mask arithmetic does with them.
std::vector<ClockId> AllIds() {
  std::vector<ClockId> ids;
  for (ClockId c = 0; c <= 16; ++c) ids.push_back(c);
  for (ClockId c : {23, 24, 31, 32, 33, 63, 64, 65, 1000, INT_MAX, -1, -2, -3,
                    -6, INT_MIN}) {
    ids.push_back(c);
  }
  return ids;
}

TEST(ServedClocks, EveryVariantServesFromThePageExactlyWhatItDeclares) {
  const std::vector<ClockId> ids = AllIds();
  int checked = 0;
  for (const variants::Variant* v : variants::AllVariants()) {
    if (v->own_clocks_only) continue;  // No kernel clocks to read.
    sim::Scenario s;
    s.run.duration_ns = 20000000;
    s.readers[0].period_ns = 2000;
    s.readers[0].clocks = ids;
    absl::StatusOr<sim::RunResult> r = sim::RunRandom(s, *v);
    ASSERT_TRUE(r.ok()) << v->name << ": " << r.status();
    // No verdict check: a variant may report a documented defect (the trace
    // clocks' -EINVAL for ids they do not handle); this test is only about
    // which path answers.
    for (ClockId c : ids) {
      const auto it = r->coverage.per_clock.find(c);
      ASSERT_NE(it, r->coverage.per_clock.end())
          << v->name << " " << ClockName(c);
      const auto& [page, syscall, errors] = it->second;
      ASSERT_GT(page + syscall + errors, 100u)
          << v->name << " " << ClockName(c);
      if (variants::ServesFromPage(*v, c)) {
        EXPECT_EQ(syscall + errors, 0u)
            << v->name << " declares " << ClockName(c);
      } else {
        // An error answer is not from the page either: it counts with the
        // syscall as "not served".
        EXPECT_EQ(page, 0u) << v->name << " does not declare " << ClockName(c);
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 12);
}

}  // namespace
}  // namespace vdsolab
