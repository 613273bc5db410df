// Relaxed ordering (faults.reorder_ppm) against a reader that leaves out
// one barrier: vdso_read_retry()'s smp_rmb(). The simulation must find it
// torn only when loads may be reordered (in program order the reader is
// right, which is why no other check sees it), with a replay that fails
// the same way; and the upstream reader, with every barrier, must hold
// every property under the same reordering. Over several seeds, each
// printed, so a miss is visible as a seed to replay.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "sim/engine.h"
#include "sim/run.h"
#include "sim/scenario.h"
#include "sim/scenario_toml.h"
#include "tests/broken_readers.h"
#include "variants/upstream.h"

namespace vdsolab::sim {
namespace {

// Readers preempted for microseconds and a writer that stalls between its
// stores, so that stores land while calls run; every load reordered where
// no barrier forbids it when `reorder`.
Scenario Racing(uint64_t seed, bool reorder) {
  Scenario s;
  s.name = "relaxed-ordering-test";
  s.kernel.hz = 1000;
  s.timing.preempt_ppm = 200000;
  s.timing.preempt_max_ns = 3000;
  s.timing.writer_stall_ppm = 200000;
  s.timing.writer_stall_max_ns = 5000;
  s.faults.reorder_ppm = reorder ? 1000000 : 0;
  s.readers = {ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonic, kClockRealtime, kClockMonotonicRaw};
  s.readers[0].period_ns = 300;
  s.run.duration_ns = 1000000000;
  s.run.seed = seed;
  return s;
}

uint64_t Defects(const RunResult& r) {
  uint64_t n = 0;
  for (const PropertyStats& st : r.stats) n += st.defects;
  return n;
}

constexpr uint64_t kSeeds[] = {1, 2, 3, 4, 5};

TEST(RelaxedOrdering, AMissingRetryBarrierIsTornOnlyWhenLoadsReorder) {
  const variants::Variant& broken = testing::NoRetryBarrierVariant();
  for (uint64_t seed : kSeeds) {
    absl::StatusOr<RunResult> relaxed =
        RunRandom(Racing(seed, true), broken, RandomOptions{});
    ASSERT_TRUE(relaxed.ok()) << relaxed.status();
    absl::StatusOr<RunResult> ordered =
        RunRandom(Racing(seed, false), broken, RandomOptions{});
    ASSERT_TRUE(ordered.ok()) << ordered.status();
    std::printf(
        "seed %llu: %llu reordered loads, %llu torn calls; in "
        "program order %llu defects\n",
        static_cast<unsigned long long>(seed),
        static_cast<unsigned long long>(relaxed->coverage.reordered_loads),
        static_cast<unsigned long long>(
            relaxed->stats[static_cast<int>(Property::kTorn) - 1].defects),
        static_cast<unsigned long long>(Defects(*ordered)));
    EXPECT_GT(relaxed->coverage.reordered_loads, 0u) << "seed " << seed;
    EXPECT_GT(relaxed->stats[static_cast<int>(Property::kTorn) - 1].defects, 0u)
        << "seed " << seed;
    EXPECT_EQ(ordered->coverage.reordered_loads, 0u);
    EXPECT_EQ(Defects(*ordered), 0u) << "seed " << seed;
  }
}

TEST(RelaxedOrdering, TheUpstreamReaderHoldsEveryProperty) {
  for (uint64_t seed : kSeeds) {
    absl::StatusOr<RunResult> r = RunRandom(
        Racing(seed, true), variants::UpstreamVariant(), RandomOptions{});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_GT(r->coverage.reordered_loads, 0u) << "seed " << seed;
    EXPECT_EQ(Defects(*r), 0u) << "seed " << seed;
  }
}

TEST(RelaxedOrdering, TheFailureReplaysWithTheReorderedLoad) {
  const variants::Variant& broken = testing::NoRetryBarrierVariant();
  absl::StatusOr<Outcome> out = sim::Run(Racing(kSeeds[0], true), broken);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->failed);
  ASSERT_FALSE(out->replays.empty());
  ASSERT_TRUE(out->replays[0].scenario.has_value()) << out->replays[0].error;
  // The minimal replay keeps the reordering that made the failure...
  EXPECT_NE(out->replays[0].scenario->faults.reorder_ppm, 0u);
  absl::StatusOr<ReplayOutcome> again =
      sim::Replay(*out->replays[0].scenario, broken);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->reproduced) << again->text;
  // ...and its trace shows the load that saw an earlier page state.
  EXPECT_NE(again->text.find("reordered"), std::string::npos) << again->text;
  // The upstream reader on the same schedule: not reproduced (its calls
  // take other times: the minimised run may end before the call, which
  // says nothing of a fix, and the replay says so).
  absl::StatusOr<ReplayOutcome> fixed =
      sim::Replay(*out->replays[0].scenario, variants::UpstreamVariant());
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_FALSE(fixed->reproduced) << fixed->text;
  if (fixed->diverged) {
    EXPECT_NE(fixed->text.find("NOT COMPARABLE"), std::string::npos)
        << fixed->text;
  }
}

// A replay whose call its own variant never makes is a bad file; for the
// same variant with its code changed since (a plugin rebuilt with a fix
// under the same name) it is a schedule that diverged: not comparable, not
// bad input (a new user's fixed plugin got exit 2 and a blamed file).
TEST(RelaxedOrdering, ACallNeverMadeIsBadInputUnlessTheCodeChanged) {
  const variants::Variant& broken = testing::NoRetryBarrierVariant();
  absl::StatusOr<Outcome> out = sim::Run(Racing(kSeeds[0], true), broken);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_FALSE(out->replays.empty());
  ASSERT_TRUE(out->replays[0].scenario.has_value()) << out->replays[0].error;
  Scenario past = *out->replays[0].scenario;
  past.replay.call = uint64_t{1} << 40;
  // The fix under the file's name (a plugin rebuilt in place).
  variants::Variant fixed = variants::UpstreamVariant();
  fixed.name = broken.name;
  absl::StatusOr<ReplayOutcome> same = sim::Replay(past, fixed, false);
  EXPECT_EQ(same.status().code(), absl::StatusCode::kInvalidArgument)
      << same.status();
  absl::StatusOr<ReplayOutcome> changed = sim::Replay(past, fixed, true);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(changed->diverged) << changed->text;
  EXPECT_FALSE(changed->reproduced) << changed->text;
  EXPECT_NE(changed->text.find("NOT COMPARABLE"), std::string::npos)
      << changed->text;
}

// A replay that diverges with another variant is judged by the scenario
// it was cut from (run.origin), run whole with the file's seed: FIXED when
// every property holds there, NOT FIXED when that run fails, and NOT
// COMPARABLE only when there is no such file to run (a new user's fixed
// plugin got NOT COMPARABLE, exit 1, for the most common fix).
TEST(RelaxedOrdering, ADivergedReplayIsJudgedByTheScenarioItCameFrom) {
  const variants::Variant& broken = testing::NoRetryBarrierVariant();
  absl::StatusOr<Outcome> out = sim::Run(Racing(kSeeds[0], true), broken);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_FALSE(out->replays.empty());
  ASSERT_TRUE(out->replays[0].scenario.has_value()) << out->replays[0].error;
  // A call no variant reaches: every replay below diverges.
  Scenario replay = *out->replays[0].scenario;
  replay.replay.call = uint64_t{1} << 40;
  // The origin: the scenario `out` ran (and failed).
  const Scenario origin = Racing(kSeeds[0], true);
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path =
      std::string(tmp != nullptr ? tmp : "/tmp") + "/origin.toml";
  std::ofstream(path) << ScenarioToToml(origin);
  replay.run.origin = path;

  variants::Variant fixed = variants::UpstreamVariant();
  fixed.name = broken.name;  // Rebuilt in place under the file's name.
  absl::StatusOr<ReplayOutcome> good = sim::Replay(replay, fixed, true);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_TRUE(good->diverged);
  EXPECT_TRUE(good->origin_ran);
  EXPECT_FALSE(good->origin_failed);
  EXPECT_NE(good->text.find("FIXED: no defect there, every property held"),
            std::string::npos)
      << good->text;
  EXPECT_EQ(good->text.find("NOT COMPARABLE"), std::string::npos) << good->text;

  // The broken code again, as if changed, on a replay run too short to
  // fail: the origin run fails.
  replay.run.duration_ns = 100000;
  absl::StatusOr<ReplayOutcome> bad = sim::Replay(replay, broken, true);
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_TRUE(bad->origin_ran);
  EXPECT_TRUE(bad->origin_failed);
  EXPECT_NE(bad->text.find("NOT FIXED: it fails there: reader "),
            std::string::npos)
      << bad->text;

  // An origin that is itself a replay (a short, minimised run): not
  // trusted either.
  Scenario cut = replay;
  cut.replay.present = true;
  const std::string replay_path = path + ".replay.toml";
  std::ofstream(replay_path) << ScenarioToToml(cut);
  replay.run.origin = replay_path;
  absl::StatusOr<ReplayOutcome> nested = sim::Replay(replay, fixed, true);
  ASSERT_TRUE(nested.ok()) << nested.status();
  EXPECT_FALSE(nested->origin_ran);
  EXPECT_NE(nested->text.find("is itself a replay"), std::string::npos)
      << nested->text;
  EXPECT_NE(nested->text.find("NOT COMPARABLE"), std::string::npos)
      << nested->text;

  // No file where the replay says: NOT COMPARABLE, saying why.
  replay.run.origin = path + ".gone";
  absl::StatusOr<ReplayOutcome> lost = sim::Replay(replay, fixed, true);
  ASSERT_TRUE(lost.ok()) << lost.status();
  EXPECT_FALSE(lost->origin_ran);
  EXPECT_NE(lost->text.find("cannot be read"), std::string::npos) << lost->text;
  EXPECT_NE(lost->text.find("NOT COMPARABLE"), std::string::npos) << lost->text;
}

}  // namespace
}  // namespace vdsolab::sim
