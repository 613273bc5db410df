// The minimiser's reruns: a failure of a call the watchdog stopped is
// rerun once (each rerun that reaches it costs the watchdog's bound: 30 s
// for a plugin blocked in a sleep at the default --call-timeout), so its
// replay keeps the readers and events the run had; any other failure is
// cut down to the readers and events it needs. Both replays reproduce.

#include <gtest/gtest.h>

#include "sim/run.h"
#include "sim/scenario.h"
#include "tests/broken_readers.h"

namespace vdsolab::sim {
namespace {

// The failing reader (MONOTONIC), a reader that does not need to be there
// (MONOTONIC_RAW), and an event before the failure.
Scenario TwoReaders() {
  Scenario s;
  s.run.duration_ns = 20000000;  // 20 ms.
  s.readers = {ReaderSpec{}, ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonicRaw};
  s.readers[1].clocks = {kClockRealtime, kClockMonotonic};
  s.readers[1].period_ns = 2000000;  // The first MONOTONIC call at ~2 ms.
  EventSpec e;
  e.kind = EventKind::kAdjtimexFrequency;
  e.at_ns = 1000000;
  e.freq_scaled_ppm = 100 << 16;
  s.events = {e};
  return s;
}

const Scenario& ReplayOf(const Outcome& out) {
  EXPECT_FALSE(out.replays.empty());
  EXPECT_TRUE(out.replays.front().scenario.has_value())
      << out.replays.front().error;
  return *out.replays.front().scenario;
}

TEST(Minimize, AWatchdogStopIsRerunOnceAndKeepsTheRest) {
  const variants::Variant& v = testing::MonotonicStoppedByTheWatchdogVariant();
  absl::StatusOr<Outcome> out = sim::Run(TwoReaders(), v);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->failed);
  ASSERT_TRUE(out->random->violations.front().watchdog_stopped);
  const Scenario& replay = ReplayOf(*out);
  EXPECT_EQ(replay.readers.size(), 2u);
  EXPECT_EQ(replay.events.size(), 1u);
  // Cut right after the failing call starts.
  EXPECT_LT(replay.run.duration_ns, TwoReaders().run.duration_ns);
  absl::StatusOr<ReplayOutcome> again = sim::Replay(replay, v);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->reproduced);
}

TEST(Minimize, AnyOtherFailureIsCutToWhatItNeeds) {
  const variants::Variant& v = testing::WrongClockFallbackVariant();
  absl::StatusOr<Outcome> out = sim::Run(TwoReaders(), v);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->failed);
  ASSERT_FALSE(out->random->violations.front().watchdog_stopped);
  const Scenario& replay = ReplayOf(*out);
  EXPECT_EQ(replay.readers.size(), 1u);
  EXPECT_EQ(replay.events.size(), 0u);
  absl::StatusOr<ReplayOutcome> again = sim::Replay(replay, v);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->reproduced);
}

}  // namespace
}  // namespace vdsolab::sim
