// The exhaustive strategy against one reader call and k updates: it must
// catch a reader without the seq retry with a minimal interleaving, and find
// the upstream reader clean over every interleaving of the same bounded
// configuration.

#include "sim/exhaustive.h"

#include <gtest/gtest.h>

#include "absl/strings/str_format.h"
#include "sim/run.h"
#include "sim/run_report.h"
#include "sim/scenario.h"
#include "tests/broken_readers.h"
#include "variants/upstream.h"

namespace vdsolab::sim {
namespace {

Scenario OneCall(ClockId clock, int updates) {
  Scenario s;
  s.name = "exhaustive";
  s.run.strategy = Strategy::kExhaustive;
  s.run.duration_ns = 1000000000;
  s.run.exhaustive_at_ns = 100000000;
  s.run.exhaustive_updates = updates;
  s.readers = {ReaderSpec{}};
  s.readers[0].clocks = {clock};
  return s;
}

const variants::Variant& Broken() { return testing::NoSeqRetryVariant(); }

TEST(Exhaustive, CatchesAReaderWithoutSeqRetryMinimally) {
  auto r = Explore(OneCall(kClockMonotonic, 1), Broken());
  ASSERT_TRUE(r.ok()) << r.status();
  std::printf("broken reader: %llu interleavings, %llu failing\n",
              static_cast<unsigned long long>(r->interleavings),
              static_cast<unsigned long long>(r->failing));
  EXPECT_TRUE(r->complete);
  EXPECT_GT(r->failing, 0u);
  ASSERT_TRUE(r->minimal.has_value());
  // One writer store landing in the middle of the call is enough.
  EXPECT_EQ(r->minimal_splits, 1u);
  ASSERT_FALSE(r->minimal_violations.empty());
  bool torn = false;
  for (const Violation& v : r->minimal_violations) {
    torn |= v.property == Property::kTorn && v.verdict == Verdict::kDefect;
  }
  EXPECT_TRUE(torn) << FormatExploreReport(OneCall(kClockMonotonic, 1), *r);
}

TEST(Exhaustive, UpstreamReaderIsCleanForTheSameConfiguration) {
  for (ClockId clock : {kClockMonotonic, kClockMonotonicRaw, kClockRealtime,
                        kClockMonotonicCoarse}) {
    for (int updates : {1, 2}) {
      auto r = Explore(OneCall(clock, updates), variants::UpstreamVariant());
      ASSERT_TRUE(r.ok()) << r.status();
      std::printf(
          "upstream %s vs %d update(s): %llu interleavings, %llu "
          "failing\n",
          ClockName(clock).c_str(), updates,
          static_cast<unsigned long long>(r->interleavings),
          static_cast<unsigned long long>(r->failing));
      EXPECT_TRUE(r->complete);
      EXPECT_GT(r->interleavings, 10u);
      EXPECT_EQ(r->failing, 0u)
          << FormatExploreReport(OneCall(clock, updates), *r);
    }
  }
}

// A seconds load outside the seq loop is wrong only in the window where an
// update moves basetime sec: the rollover window finds it for every hres
// clock (each rolls over at its own instant), the fixed one at 100 ms not.
TEST(Exhaustive, TheRolloverWindowCatchesASecondsLoadOutsideTheLoop) {
  for (ClockId clock :
       {kClockMonotonic, kClockRealtime, kClockBoottime, kClockTai}) {
    Scenario fixed = OneCall(clock, 2);
    auto plain = Explore(fixed, testing::SecAfterLoopVariant());
    ASSERT_TRUE(plain.ok()) << plain.status();
    EXPECT_EQ(plain->failing, 0u) << "the 100 ms window moved no seconds";
    Scenario rollover = fixed;
    rollover.run.exhaustive_rollover = true;
    rollover.run.duration_ns = 3000000000;
    auto r = Explore(rollover, testing::SecAfterLoopVariant());
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_GT(r->start_ns, fixed.run.exhaustive_at_ns);
    EXPECT_TRUE(r->complete);
    EXPECT_GT(r->failing, 0u) << FormatExploreReport(rollover, *r);
    // The report names where the window slid to.
    EXPECT_NE(
        FormatExploreReport(rollover, *r)
            .find(absl::StrFormat("from %d.%09d s", r->start_ns / 1000000000,
                                  r->start_ns % 1000000000)),
        std::string::npos);
    auto upstream = Explore(rollover, variants::UpstreamVariant());
    ASSERT_TRUE(upstream.ok()) << upstream.status();
    EXPECT_EQ(upstream->start_ns, r->start_ns);
    EXPECT_EQ(upstream->failing, 0u)
        << FormatExploreReport(rollover, *upstream);
  }
}

TEST(Exhaustive, ARolloverWindowTheRunCannotReachIsBadInput) {
  Scenario s = OneCall(kClockMonotonic, 2);
  s.run.exhaustive_rollover = true;
  s.run.duration_ns = 200000000;  // No second boundary before the end.
  s.run.exhaustive_at_ns = 100000000;
  auto r = Explore(s, variants::UpstreamVariant());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("exhaustive_rollover"),
            std::string::npos);
}

TEST(Exhaustive, TheMinimalInterleavingReplaysExactly) {
  // Through the entry point: Run() makes the replay, Replay() runs it.
  const Scenario s = OneCall(kClockMonotonic, 1);
  auto out = sim::Run(s, Broken());
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->failed);
  ASSERT_EQ(out->replays.size(), 1u);
  ASSERT_TRUE(out->replays[0].scenario.has_value());
  const Scenario& replay = *out->replays[0].scenario;
  EXPECT_EQ(replay.replay.decisions, *out->exhaustive->minimal);
  auto text = Replay(replay, Broken());
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(text->reproduced) << text->text;
  EXPECT_NE(text->text.find("writer (update"), std::string::npos) << text->text;
  // The same choices on the upstream reader do not fail.
  auto clean = Replay(replay, variants::UpstreamVariant());
  ASSERT_TRUE(clean.ok());
  EXPECT_FALSE(clean->reproduced) << clean->text;
}

}  // namespace
}  // namespace vdsolab::sim
