// A reader that never gets past its retry (a patched re-check that always
// fails) spends the loop budget on every call: each call, and in the
// exhaustive strategy each interleaving, costs the whole budget, and a
// kernel tree patched so ran a compare for over ten minutes. Both
// strategies stop early once it is clear, say why, and fail the run; a
// run where calls are abandoned now and then still runs to its end.

#include <gtest/gtest.h>

#include "sim/engine.h"
#include "sim/exhaustive.h"
#include "sim/scenario.h"
#include "tests/broken_readers.h"
#include "variants/upstream.h"

namespace vdsolab::sim {
namespace {

Scenario Readers() {
  Scenario s;
  s.run.duration_ns = 200000000;  // 0.2 s.
  s.readers = {ReaderSpec{}, ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonic, kClockRealtimeCoarse,
                         kClockMonotonicRaw};
  s.readers[1].clocks = {kClockMonotonic, kClockRealtime};
  s.readers[1].period_ns = 7000;
  return s;
}

TEST(LivelockStop, ARandomRunStopsAfterCallsInARowSpendTheirBudget) {
  RandomOptions options;
  options.max_livelocks_in_a_row = 50;
  absl::StatusOr<RunResult> r =
      RunRandom(Readers(), testing::NeverPastTheRetryVariant(), options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->failed);
  EXPECT_TRUE(r->stopped_early);
  EXPECT_EQ(r->coverage.calls, 50u);
  EXPECT_EQ(r->coverage.livelocks, 50u);
  EXPECT_NE(r->stop_reason.find("50 calls in a row spent their loop budget"),
            std::string::npos)
      << r->stop_reason;
}

// A reader stuck on one clock only: its abandoned calls alternate with
// answered ones, so they are never many in a row; counted per clock, the
// run still stops once that clock has made no progress 50 times.
TEST(LivelockStop, ARandomRunStopsWhenOneClockMakesNoProgress) {
  RandomOptions options;
  options.max_livelocks_in_a_row = 50;
  absl::StatusOr<RunResult> r =
      RunRandom(Readers(), testing::CoarseNeverPastTheRetryVariant(), options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->failed);
  EXPECT_TRUE(r->stopped_early);
  EXPECT_EQ(r->coverage.livelocks, 50u);
  EXPECT_GT(r->coverage.calls, 100u);  // The other clocks answered.
  EXPECT_EQ(r->stop_reason,
            "50 calls of REALTIME_COARSE in a row spent their loop budget: "
            "the reader makes no progress on that clock");
}

TEST(LivelockStop, ARunWithCallsAbandonedNowAndThenRunsToItsEnd) {
  Scenario s = Readers();
  s.checks.livelock_budget = 2;  // The least: most retries are abandoned.
  s.timing.store_ns = 40;
  s.timing.writer_stall_ppm = 200000;
  s.timing.writer_stall_max_ns = 200000;
  s.timing.preempt_ppm = 20000;
  s.timing.preempt_max_ns = 20000;
  RandomOptions options;
  options.max_livelocks_in_a_row = 50;
  absl::StatusOr<RunResult> r =
      RunRandom(s, variants::UpstreamVariant(), options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->stopped_early) << r->stop_reason;
  EXPECT_GT(r->coverage.livelocks, 0u);
  EXPECT_GT(r->coverage.calls, 50 * r->coverage.livelocks);
}

TEST(LivelockStop, AnExplorationStopsAfterInterleavingsSpendTheirBudget) {
  Scenario s;
  s.run.strategy = Strategy::kExhaustive;
  s.run.exhaustive_at_ns = 100000000;
  s.run.exhaustive_updates = 1;
  s.readers = {ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonic};
  s.checks.livelock_budget = 50;  // Short calls: the test stays small.
  // Every interleaving of this reader loops; the writer progresses under
  // its repeating loop (sim/exhaustive.cc), so there are only a handful.
  ExploreOptions options;
  options.max_livelocks = 3;
  absl::StatusOr<ExploreResult> r =
      Explore(s, testing::NeverPastTheRetryVariant(), options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->complete);
  EXPECT_EQ(r->failing, 3u);
  EXPECT_EQ(r->stop_reason, "3 interleavings spent the loop budget");
  // The upstream reader never spends it: the same exploration completes.
  absl::StatusOr<ExploreResult> clean =
      Explore(s, variants::UpstreamVariant(), options);
  ASSERT_TRUE(clean.ok()) << clean.status();
  EXPECT_TRUE(clean->complete) << clean->stop_reason;
  EXPECT_EQ(clean->failing, 0u);
}

}  // namespace
}  // namespace vdsolab::sim
