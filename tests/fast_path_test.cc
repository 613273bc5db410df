// Property fast_path (sim/checker.h) on a clocksource switch: while the
// timekeeper runs on the HPET (vDSO clock mode NONE) every era's reader
// goes to the syscall, which the property accepts, the state still being
// written at either edge included; on the TSC a fallback loses the fast
// path. The upstream reader passes with its fallbacks judged; a reader that
// always falls back fails on exactly its calls outside the HPET window.

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "common/clock_result.h"
#include "sim/engine.h"
#include "tests/broken_readers.h"
#include "variants/upstream.h"

namespace vdsolab {
namespace {

constexpr uint64_t kHpetAt = 20000000;
constexpr uint64_t kTscAt = 40000000;

sim::Scenario SwitchToHpetAndBack() {
  sim::Scenario s;
  s.name = "fast-path-hpet";
  sim::EventSpec hpet;
  hpet.kind = sim::EventKind::kClocksource;
  hpet.at_ns = kHpetAt;
  hpet.clocksource = "hpet";
  sim::EventSpec tsc = hpet;
  tsc.at_ns = kTscAt;
  tsc.clocksource = "tsc";
  s.events = {hpet, tsc};
  s.kernel.hz = 1000;
  s.timing.preempt_ppm = 100000;
  s.timing.preempt_max_ns = 3000;
  s.timing.writer_stall_ppm = 200000;
  s.timing.writer_stall_max_ns = 2000;
  s.readers[0].clocks = {kClockMonotonic, kClockRealtime, kClockMonotonicRaw,
                         kClockMonotonicCoarse};
  s.readers[0].period_ns = 2000;
  s.run.duration_ns = 60000000;
  return s;
}

const sim::PropertyStats& FastPath(const sim::RunResult& r) {
  return r.stats[static_cast<int>(sim::Property::kFastPath) - 1];
}

// The upstream reader with every hres call sent to the syscall after a
// look at seq and the clock mode (loads that relaxed ordering may reorder).
template <vdso::VdsoAccess A>
std::optional<ClockResult> AlwaysFallsBack(A& acc, const uint8_t* vd,
                                           ClockId clock) {
  const uint8_t* vc = testing::HresRecord(vd, clock);
  if (vc == nullptr) return vdso::upstream::ClockGettime(acc, vd, clock);
  // Loaded through the access policy's hooks; the values do not matter.
  (void)acc.template Load<uint32_t>(vc + vdso::kVcSeq);
  (void)acc.template Load<uint32_t>(vc + vdso::kVcClockMode);
  return acc.Fallback(clock);
}

TEST(FastPath, TheUpstreamReadersFallbacksOnTheHpetAreAccepted) {
  absl::StatusOr<sim::RunResult> r =
      sim::RunRandom(SwitchToHpetAndBack(), variants::UpstreamVariant());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->failed);
  // About a third of the hres calls fall in the 20 ms on the HPET.
  EXPECT_GT(r->coverage.fallbacks, 1000u);
  EXPECT_EQ(FastPath(*r).checked, r->coverage.fallbacks);
  EXPECT_EQ(FastPath(*r).defects, 0u);
}

TEST(FastPath, AReaderThatAlwaysFallsBackFailsOnlyOnTheTsc) {
  const variants::Variant& always =
      testing::BrokenVariant<AlwaysFallsBack<vdso::HookedAccess>,
                             AlwaysFallsBack<vdso::QuietAccess>>(
          "test-always-falls-back",
          "the upstream reader sending every hres call to the syscall (tests "
          "only)");
  sim::Scenario s = SwitchToHpetAndBack();
  absl::StatusOr<sim::RunResult> r = sim::RunRandom(s, always);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->failed);
  const sim::PropertyStats& fast = FastPath(*r);
  // Two thirds of the 60 ms are on the TSC: most calls fail, the HPET
  // window's pass.
  EXPECT_GT(fast.defects, fast.checked / 2);
  EXPECT_LT(fast.defects, fast.checked - 1000);
  ASSERT_FALSE(r->violations.empty());
  for (const sim::Violation& v : r->violations) {
    if (v.property != sim::Property::kFastPath) continue;
    // The first of each kind is kept: it is on the TSC, before the switch.
    EXPECT_LT(v.t_ns, kHpetAt);
  }
  // Without the switch every hres call fails, a call whose loads were
  // reordered or that was preempted long too (its window reaches updates
  // the writer has retired: their clock modes are kept).
  s.events.clear();
  s.faults.reorder_ppm = 600000;
  s.timing.preempt_max_ns = 300000;
  r = sim::RunRandom(s, always);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(FastPath(*r).defects, FastPath(*r).checked);
  EXPECT_GT(FastPath(*r).checked, 500u);
  EXPECT_GT(r->coverage.reordered_loads, 20u);
}

}  // namespace
}  // namespace vdsolab
