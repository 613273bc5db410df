// What each built-in variant says it serves from the page
// (Variant::vdso_clocks: `vdsolab variants`, the plugin records, the
// benchmark's clock list) against what its reader does in a steady run on a
// TSC machine: every kernel clock it lists is answered from the page on
// every call, every other kernel clock id by the syscall on every call. A
// variant whose declaration and reader disagree is caught whichever is
// wrong.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/clockid.h"
#include "sim/engine.h"
#include "variants/registry.h"
#include "variants/variant.h"

namespace vdsolab {
namespace {

TEST(ServedClocks, EveryVariantServesFromThePageExactlyWhatItDeclares) {
  int checked = 0;
  for (const variants::Variant* v : variants::AllVariants()) {
    if (v->own_clocks_only) continue;  // No kernel clocks to read.
    sim::Scenario s;
    s.run.duration_ns = 20000000;
    s.readers[0].period_ns = 2000;
    s.readers[0].clocks.clear();
    for (ClockId c = 0; c <= kClockTai; ++c) s.readers[0].clocks.push_back(c);
    absl::StatusOr<sim::RunResult> r = sim::RunRandom(s, *v);
    ASSERT_TRUE(r.ok()) << v->name << ": " << r.status();
    // No verdict check: a variant may report a documented defect (the trace
    // clocks' -EINVAL for ids they do not handle); this test is only about
    // which path answers.
    for (ClockId c = 0; c <= kClockTai; ++c) {
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
