// The exhaustive strategy against one reader call and k updates: it must
// catch a reader without the seq retry with a minimal interleaving, and find
// the upstream reader clean over every interleaving of the same bounded
// configuration.

#include "sim/exhaustive.h"

#include <gtest/gtest.h>

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
