// A reader that answers one clock with another clock's syscall returns a
// value the syscall really answered, so comparing the call's answer with
// its own fallback's is not enough: the checker also compares the clock
// the fallback asked for with the call's (property `exact`), in both
// strategies, and the upstream reader, whose fallback passes its clock on,
// is not flagged.

#include <gtest/gtest.h>

#include <string>

#include "sim/engine.h"
#include "sim/exhaustive.h"
#include "sim/scenario.h"
#include "tests/broken_readers.h"
#include "variants/upstream.h"

namespace vdsolab::sim {
namespace {

Scenario Readers() {
  Scenario s;
  s.run.duration_ns = 50000000;  // 0.05 s.
  s.readers = {ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonic, kClockRealtime};
  return s;
}

bool HasWrongClock(const std::vector<Violation>& violations) {
  for (const Violation& v : violations) {
    if (v.property == Property::kExact &&
        v.why == "the call fell back to the syscall for another clock") {
      return true;
    }
  }
  return false;
}

TEST(FallbackClock, ARandomRunCatchesAFallbackWithAnotherClock) {
  absl::StatusOr<RunResult> r = RunRandom(
      Readers(), testing::WrongClockFallbackVariant(), RandomOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->failed);
  EXPECT_TRUE(HasWrongClock(r->violations));
  // CLOCK_REALTIME's calls fall back (or not) with their own clock: the
  // defects are CLOCK_MONOTONIC's only.
  for (const Violation& v : r->violations) {
    if (v.why == "the call fell back to the syscall for another clock") {
      EXPECT_NE(v.detail.find("made the syscall for CLOCK_MONOTONIC_RAW"),
                std::string::npos)
          << v.detail;
    }
  }
}

TEST(FallbackClock, AnExplorationCatchesAFallbackWithAnotherClock) {
  Scenario s = Readers();
  s.run.strategy = Strategy::kExhaustive;
  s.run.exhaustive_at_ns = 10000000;
  s.run.exhaustive_updates = 1;
  s.readers[0].clocks = {kClockMonotonic};
  absl::StatusOr<ExploreResult> r =
      Explore(s, testing::WrongClockFallbackVariant(), ExploreOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->failing, 0u);
  EXPECT_TRUE(HasWrongClock(r->minimal_violations));
}

TEST(FallbackClock, TheUpstreamReaderIsNotFlagged) {
  Scenario s = Readers();
  // Every call falls back: the vDSO is off for the clocksource.
  s.machine.clocksource = "hpet";
  absl::StatusOr<RunResult> r =
      RunRandom(s, variants::UpstreamVariant(), RandomOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->coverage.fallbacks, 0u);
  EXPECT_FALSE(HasWrongClock(r->violations));
  EXPECT_FALSE(r->failed);
}

}  // namespace
}  // namespace vdsolab::sim
