// A wrong value from a call that saw one page state throughout (no store
// landed during it, no load reordered, an even seq), or that the call also
// gives on a page holding the state it validated, is the reader's
// arithmetic: property `exact` reports it and `torn` does not (called torn
// too, it pointed kernel developers and plugin authors at barriers). A
// reader that really mixes states (no seq retry, racing a stalling writer)
// is still torn.

#include <gtest/gtest.h>

#include "common/timespec.h"
#include "sim/engine.h"
#include "sim/exhaustive.h"
#include "sim/scenario.h"
#include "tests/broken_readers.h"

namespace vdsolab::sim {
namespace {

// The upstream reader, one nanosecond late on CLOCK_MONOTONIC: an
// arithmetic bug, whatever the page's state.
template <vdso::VdsoAccess A>
std::optional<ClockResult> OneNsLateClockGettime(A& acc, const uint8_t* vd,
                                                 ClockId clock) {
  std::optional<ClockResult> r = vdso::upstream::ClockGettime(acc, vd, clock);
  if (r && r->ret == 0 && clock == kClockMonotonic) {
    r->ts = SetNormalizedTimespec64(r->ts.tv_sec, r->ts.tv_nsec + 1);
  }
  return r;
}

const variants::Variant& OneNsLateVariant() {
  static const variants::Variant* v = testing::BrokenUpstream(
      "test-one-ns-late", "MONOTONIC one ns late (tests only)",
      variants::MakeStateless<OneNsLateClockGettime<vdso::HookedAccess>,
                              OneNsLateClockGettime<vdso::QuietAccess>>);
  return *v;
}

const PropertyStats& Stats(const RunResult& r, Property p) {
  return r.stats[static_cast<size_t>(p) - 1];
}

// Calls that race the writer: a reader every 300 ns at HZ 1000 on CPU 0,
// slow and stalling stores, readers preempted before one hook in ten.
Scenario RacingScenario(uint64_t duration_ns) {
  Scenario s;
  s.run.duration_ns = duration_ns;
  s.kernel.hz = 1000;
  s.readers[0].clocks = {kClockMonotonic};
  s.readers[0].period_ns = 300;
  s.timing.store_ns = 200;
  s.timing.writer_stall_ppm = 300000;
  s.timing.writer_stall_max_ns = 5000;
  s.timing.preempt_ppm = 100000;
  s.timing.preempt_max_ns = 3000;
  return s;
}

TEST(TornVsExact, AnArithmeticBugIsInexactNotTorn) {
  Scenario s;
  s.run.duration_ns = 20000000;
  s.readers[0].clocks = {kClockMonotonic, kClockRealtime};
  absl::StatusOr<RunResult> r = RunRandom(s, OneNsLateVariant());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(Stats(*r, Property::kExact).defects, 0u);
  EXPECT_GT(Stats(*r, Property::kTorn).checked, 0u);
  EXPECT_EQ(Stats(*r, Property::kTorn).defects, 0u);
}

// Raced calls too: preempted readers retry after whole updates landed
// mid-call, and a stalling writer leaves updates half done. A wrong answer
// that the call also gives on a page holding the state it validated, whole,
// is the arithmetic (sim/settled_answers.h), in a time namespace as well.
TEST(TornVsExact, AnArithmeticBugInRacedCallsIsNotTorn) {
  Scenario s = RacingScenario(200000000);
  s.machine.cpus = {CpuCounterSpec{}, CpuCounterSpec{}};
  s.kernel.boot_offset = Timespec64{50, 0};
  s.kernel.timens_monotonic = Timespec64{-50, 250000000};
  ReaderSpec inside = s.readers[0];
  inside.cpu = 1;
  inside.period_ns = 500;
  inside.timens = true;
  s.readers.push_back(inside);
  absl::StatusOr<RunResult> r = RunRandom(s, OneNsLateVariant());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->coverage.raced, 200u) << r->coverage.raced;
  EXPECT_GT(r->coverage.retries, 100u) << r->coverage.retries;
  EXPECT_GT(r->coverage.timens_calls, 1000u);
  EXPECT_GT(Stats(*r, Property::kExact).defects, 1000u);
  EXPECT_GT(Stats(*r, Property::kTorn).checked, 200u);
  EXPECT_EQ(Stats(*r, Property::kTorn).defects, 0u);
}

// With `exact` off nothing reports the arithmetic, so the settled page does
// not excuse it: the raced calls stay torn.
TEST(TornVsExact, WithExactOffAWrongAnswerStaysTorn) {
  Scenario s = RacingScenario(100000000);
  s.checks.exact = false;
  absl::StatusOr<RunResult> r = RunRandom(s, OneNsLateVariant());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Stats(*r, Property::kExact).checked, 0u);
  EXPECT_GT(Stats(*r, Property::kTorn).defects, 0u);
}

// The same in every interleaving of one call with two updates: each call
// that raced them and gives the arithmetic's answer on its validated state
// is inexact, not torn; a reader without its seq retry is torn there.
TEST(TornVsExact, ExhaustivelyTooAnArithmeticBugIsNotTorn) {
  Scenario s;
  s.readers[0].clocks = {kClockMonotonic};
  s.run.duration_ns = 200000000;
  s.run.strategy = Strategy::kExhaustive;
  s.run.exhaustive_at_ns = 100000000;
  s.run.exhaustive_updates = 2;
  absl::StatusOr<ExploreResult> late = Explore(s, OneNsLateVariant());
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_GT(late->interleavings, 100u);
  EXPECT_EQ(late->failing, late->interleavings);
  EXPECT_GT(late->stats[static_cast<size_t>(Property::kTorn) - 1].checked,
            late->interleavings / 2);
  EXPECT_EQ(late->stats[static_cast<size_t>(Property::kTorn) - 1].defects, 0u);
  absl::StatusOr<ExploreResult> torn = Explore(s, testing::NoSeqRetryVariant());
  ASSERT_TRUE(torn.ok()) << torn.status();
  EXPECT_GT(torn->stats[static_cast<size_t>(Property::kTorn) - 1].defects, 0u);
}

TEST(TornVsExact, AReaderWithoutItsSeqRetryIsStillTorn) {
  // The racing scenario at the default HZ.
  Scenario s = RacingScenario(200000000);
  s.kernel.hz = Scenario{}.kernel.hz;
  absl::StatusOr<RunResult> r = RunRandom(s, testing::NoSeqRetryVariant());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(Stats(*r, Property::kTorn).defects, 0u);
}

// A torn call that validated an odd seq says so (it read during an update,
// which takes long here: 20 us between stores): "torn" alone did not point
// at a missing odd check.
TEST(TornVsExact, ATornCallOnAnOddSeqSaysItDidNotWait) {
  Scenario s;
  s.run.duration_ns = 200000000;
  s.readers[0].clocks = {kClockMonotonic};
  s.readers[0].period_ns = 300;
  s.timing.store_ns = 20000;
  absl::StatusOr<RunResult> r = RunRandom(s, testing::NoSeqRetryVariant());
  ASSERT_TRUE(r.ok()) << r.status();
  int odd = 0;
  for (const Violation& v : r->violations) {
    if (v.property == Property::kTorn &&
        v.detail.find("the seq it validated was odd") != std::string::npos) {
      ++odd;
    }
  }
  EXPECT_GT(odd, 0);
}

}  // namespace
}  // namespace vdsolab::sim
