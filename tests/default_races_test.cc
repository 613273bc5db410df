// The default job's stages after its oracle check (cli/default_races.h):
// the upstream reader holds every one, and each stage finds the kind of
// reader defect it is there for, which the oracle check's reads between
// updates on one CPU cannot see.

#include "cli/default_races.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "sim/run.h"
#include "tests/broken_readers.h"
#include "variants/registry.h"
#include "variants/upstream.h"

namespace vdsolab {
namespace {

constexpr uint64_t kTscHz = 2600000000;
constexpr uint64_t kSeed = 1;

std::vector<cli::RaceStage> Stages(bool timens = true) {
  return cli::DefaultRaceStages(
      std::vector<ClockId>(std::begin(kVdsoServedClocks),
                           std::end(kVdsoServedClocks)),
      kTscHz, kSeed, timens);
}

// The outcome of the stage named `name` for `variant`.
sim::Outcome RunStage(const std::string& name,
                      const variants::Variant& variant) {
  for (const cli::RaceStage& stage : Stages()) {
    if (stage.scenario.name != name) continue;
    absl::StatusOr<sim::Outcome> out = sim::Run(stage.scenario, variant);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : sim::Outcome{};
  }
  ADD_FAILURE() << "no stage " << name;
  return sim::Outcome{};
}

TEST(DefaultRaces, TheUpstreamReaderHoldsEveryStage) {
  for (const cli::RaceStage& stage : Stages()) {
    absl::StatusOr<sim::Outcome> out =
        sim::Run(stage.scenario, variants::UpstreamVariant());
    ASSERT_TRUE(out.ok()) << stage.scenario.name << ": " << out.status();
    EXPECT_FALSE(out->failed) << stage.scenario.name;
    EXPECT_TRUE(out->complete) << stage.scenario.name;
  }
}

TEST(DefaultRaces, TheLaggingCpuReadsACounterBehindCycleLast) {
  const sim::Outcome out =
      RunStage("default-negative-motion", variants::UpstreamVariant());
  ASSERT_TRUE(out.random.has_value());
  EXPECT_GT(out.random->coverage.negative_motion, 100u);
}

// Without a suspend BOOTTIME is MONOTONIC: only the races' suspend tells a
// reader that answers one from the other's base.
TEST(DefaultRaces, TheSuspendFindsBoottimeFromMonotonicsBase) {
  const sim::Outcome out =
      RunStage("default-races", testing::BoottimeFromMonotonicVariant());
  EXPECT_TRUE(out.failed);
  ASSERT_TRUE(out.random.has_value());
  bool boottime = false;
  for (const sim::Violation& v : out.random->violations) {
    boottime |= v.property == sim::Property::kExact &&
                absl::StrContains(v.detail, "CLOCK_BOOTTIME");
  }
  EXPECT_TRUE(boottime);
}

// Every clock turns a second on a read: each one's normalisation is seen
// at exactly 10^9 ns.
TEST(DefaultRaces, TheSecondBoundaryFindsANormalisationOffByOne) {
  const sim::Outcome out =
      RunStage("default-second-boundary", testing::NsecNotNormalisedVariant());
  EXPECT_TRUE(out.failed);
  ASSERT_TRUE(out.random.has_value());
  const uint64_t sane =
      out.random->stats[static_cast<int>(sim::Property::kSane) - 1].defects;
  // One call per clock that reads the counter: REALTIME, MONOTONIC,
  // MONOTONIC_RAW, BOOTTIME, TAI.
  EXPECT_EQ(sane, 5u);
}

// A spin on a counter behind cycle_last says so: the watchdog's "spun for
// 1.0 s" alone did not point at the missing clamp.
TEST(DefaultRaces, ASpinBehindCycleLastIsNamedNegativeMotion) {
  const sim::Outcome out = RunStage("default-negative-motion",
                                    testing::SpinsBehindCycleLastVariant());
  EXPECT_TRUE(out.failed);
  ASSERT_TRUE(out.random.has_value());
  bool named = false;
  for (const sim::Violation& v : out.random->violations) {
    if (v.property != sim::Property::kLivelock) continue;
    named = true;
    EXPECT_TRUE(
        absl::StrContains(v.detail, "cycles behind the page's cycle_last"))
        << v.detail;
  }
  EXPECT_TRUE(named);
}

// Reads after the pause convert deltas past max_cycles: the overflow-safe
// multiply of 6.10+ (no other stage reaches it), which a pre-6.10 reader
// lacks (its product wraps, as its era documents: a failure unless known
// behaviour is accepted).
TEST(DefaultRaces, ThePauseReadsDeltasPastMaxCycles) {
  const sim::Outcome out =
      RunStage("default-past-max-cycles", variants::UpstreamVariant());
  ASSERT_TRUE(out.random.has_value());
  EXPECT_FALSE(out.failed);
  EXPECT_GT(out.random->coverage.beyond_max_cycles, 100u);
  absl::StatusOr<const variants::Variant*> pre610 =
      variants::FindVariant("6.5");
  ASSERT_TRUE(pre610.ok()) << pre610.status();
  EXPECT_TRUE(RunStage("default-past-max-cycles", **pre610).failed);
}

// A reader that waits on the wrong seq bit spins on an even seq: every
// turn of its loop was a point the writer could stall at once more, an
// exploration without end (the default job hung on such a kernel patch).
// The writer must progress under a loop that repeats itself, as under an
// odd seq: the search ends, and finds the defect.
TEST(DefaultRaces, TheExhaustiveRaceEndsOnASpinOnAnEvenSeq) {
  for (const cli::RaceStage& stage : Stages()) {
    if (stage.scenario.name != "default-exhaustive-monotonic") continue;
    sim::RunOptions options;
    options.max_interleavings = 100000;
    absl::StatusOr<sim::Outcome> out =
        sim::Run(stage.scenario, testing::WaitsOnBitOneVariant(), options);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_TRUE(out->exhaustive.has_value());
    EXPECT_TRUE(out->failed);
    EXPECT_LT(out->exhaustive->interleavings + out->exhaustive->cut, 20000u)
        << out->exhaustive->stop_reason;
    uint64_t defects = 0;
    for (const sim::PropertyStats& p : out->stats) defects += p.defects;
    EXPECT_GT(defects, 0u);
    return;
  }
  ADD_FAILURE() << "no exhaustive MONOTONIC stage";
}

TEST(DefaultRaces, TheExhaustiveRaceFindsAMissingSeqRetry) {
  const sim::Outcome out =
      RunStage("default-exhaustive-monotonic", testing::NoSeqRetryVariant());
  EXPECT_TRUE(out.failed);
}

const sim::PropertyStats& FastPath(const sim::Outcome& out) {
  return out.random->stats[static_cast<int>(sim::Property::kFastPath) - 1];
}

// The counter's bit 63: 6.5+ masks it off and answers from the page; a
// reader that falls back on it (the masking fix reverted) loses the fast
// path while the counter is near the top. Before 6.5 those fallbacks are
// the era's own (vdso_cycles_ok()): checked, and no defect.
TEST(DefaultRaces, TheCounterTopFindsAFallbackOnBit63) {
  const sim::Outcome lost = RunStage(
      "default-counter-top",
      testing::FastPathLostVariant<testing::FastPathLoss::kBit63>(
          "test-fallback-on-bit-63",
          "the upstream reader falling back on a counter with bit 63 set "
          "(tests only)"));
  ASSERT_TRUE(lost.random.has_value());
  EXPECT_TRUE(lost.failed);
  EXPECT_GT(FastPath(lost).defects, 1000u);

  const sim::Outcome upstream =
      RunStage("default-counter-top", variants::UpstreamVariant());
  ASSERT_TRUE(upstream.random.has_value());
  EXPECT_FALSE(upstream.failed);
  EXPECT_EQ(upstream.random->coverage.fallbacks, 0u);
  EXPECT_GT(upstream.random->coverage.counter_wrapped, 1000u);

  absl::StatusOr<const variants::Variant*> pre65 = variants::FindVariant("6.1");
  ASSERT_TRUE(pre65.ok()) << pre65.status();
  const sim::Outcome era = RunStage("default-counter-top", **pre65);
  ASSERT_TRUE(era.random.has_value());
  EXPECT_GT(FastPath(era).checked, 1000u);
  EXPECT_EQ(FastPath(era).defects, 0u);

  // The same falling-back reader judged as a pre-6.5 reader: excused where
  // its era tests the sign, a defect where it does not (the 4.16 family's
  // vread_tsc(), or a plugin on its layout).
  variants::Variant signed_era =
      testing::FastPathLostVariant<testing::FastPathLoss::kBit63>(
          "test-fallback-on-bit-63", "");
  signed_era.semantics = (*pre65)->semantics;
  const sim::Outcome excused = RunStage("default-counter-top", signed_era);
  EXPECT_GT(FastPath(excused).checked, 1000u);
  EXPECT_EQ(FastPath(excused).defects, 0u);
  variants::Variant unsigned_era = signed_era;
  unsigned_era.sign_tested_counter = false;
  const sim::Outcome unexcused = RunStage("default-counter-top", unsigned_era);
  EXPECT_GT(FastPath(unexcused).defects, 1000u);
}

// kvm-clock: the fallback is right while the stable bit is clear and
// wrong while it is set.
TEST(DefaultRaces, KvmClockFindsAFallbackUnderTheStableBit) {
  const sim::Outcome lost = RunStage(
      "default-kvm-clock",
      testing::FastPathLostVariant<testing::FastPathLoss::kPvclock>(
          "test-pvclock-unread",
          "the upstream reader falling back in PVCLOCK mode (tests only)"));
  ASSERT_TRUE(lost.random.has_value());
  EXPECT_TRUE(lost.failed);
  EXPECT_GT(FastPath(lost).defects, 1000u);
  EXPECT_LT(FastPath(lost).defects, FastPath(lost).checked);

  const sim::Outcome upstream =
      RunStage("default-kvm-clock", variants::UpstreamVariant());
  ASSERT_TRUE(upstream.random.has_value());
  EXPECT_FALSE(upstream.failed);
  EXPECT_GT(upstream.random->coverage.pvclock_reads, 1000u);
  EXPECT_GT(FastPath(upstream).checked, 1000u);
  EXPECT_EQ(FastPath(upstream).defects, 0u);
}

// kvm-clock with the TSC's bit 63 set: a pre-6.5 reader's sign test
// looks at vread_pvclock()'s value in PVCLOCK mode, so the top bit of the
// TSC excuses no fallback there, whatever the era.
TEST(DefaultRaces, TheTscTopBitExcusesNoFallbackInPvclockMode) {
  sim::Scenario top;
  for (const cli::RaceStage& stage : Stages()) {
    if (stage.scenario.name == "default-kvm-clock") top = stage.scenario;
  }
  ASSERT_EQ(top.machine.clocksource, "kvm-clock");
  // Bit 63 set for the whole run (it wraps 1 s after boot).
  top.machine.counter_start = 0 - kTscHz;
  absl::StatusOr<const variants::Variant*> pre65 = variants::FindVariant("6.1");
  ASSERT_TRUE(pre65.ok()) << pre65.status();
  variants::Variant signed_era =
      testing::FastPathLostVariant<testing::FastPathLoss::kPvclockBit63>(
          "test-pvclock-sign-test", "");
  signed_era.semantics = (*pre65)->semantics;
  ASSERT_TRUE(signed_era.sign_tested_counter);
  absl::StatusOr<sim::Outcome> lost = sim::Run(top, signed_era);
  ASSERT_TRUE(lost.ok()) << lost.status();
  ASSERT_TRUE(lost->random.has_value());
  EXPECT_TRUE(lost->failed);
  EXPECT_GT(FastPath(*lost).defects, 1000u);

  absl::StatusOr<sim::Outcome> era = sim::Run(top, **pre65);
  ASSERT_TRUE(era.ok()) << era.status();
  ASSERT_TRUE(era->random.has_value());
  EXPECT_GT(era->random->coverage.pvclock_reads, 1000u);
  EXPECT_EQ(FastPath(*era).defects, 0u);
}

// The exhaustive namespace stage crosses the page's second, not the
// namespace's (its offset is 49.75 s): a sec loaded before
// do_hres_timens()'s seq loop is a second off in some interleavings, which
// the random namespace stage and the exhaustive stages outside a namespace
// all missed.
TEST(DefaultRaces, TheExhaustiveNamespaceStageFindsASecBeforeTheLoop) {
  const sim::Outcome broken = RunStage("default-exhaustive-timens",
                                       testing::TimensSecOutsideLoopVariant());
  ASSERT_TRUE(broken.exhaustive.has_value());
  EXPECT_TRUE(broken.failed);
  EXPECT_GT(broken.exhaustive->failing, 0u);
  for (const cli::RaceStage& stage : Stages()) {
    if (stage.scenario.name == "default-exhaustive-timens") continue;
    absl::StatusOr<sim::Outcome> out =
        sim::Run(stage.scenario, testing::TimensSecOutsideLoopVariant());
    ASSERT_TRUE(out.ok()) << stage.scenario.name << ": " << out.status();
    EXPECT_FALSE(out->failed) << stage.scenario.name;
  }

  const sim::Outcome upstream =
      RunStage("default-exhaustive-timens", variants::UpstreamVariant());
  ASSERT_TRUE(upstream.exhaustive.has_value());
  EXPECT_FALSE(upstream.failed);
  EXPECT_GT(upstream.exhaustive->interleavings, 100u);
}

// A cycle delta truncated to 32 bits is right for every delta a tick
// bounds; the long idle's deltas past 2^32 cycles find it (exact), where
// the stages with ticks do not.
TEST(DefaultRaces, TheLongIdleFindsA32BitDelta) {
  const sim::Outcome broken =
      RunStage("default-long-idle", testing::Delta32Variant());
  ASSERT_TRUE(broken.random.has_value());
  EXPECT_TRUE(broken.failed);
  EXPECT_GT(
      broken.stats[static_cast<size_t>(sim::Property::kExact) - 1].defects,
      1000u);
  for (const char* ticking : {"default-races", "default-second-boundary"}) {
    const sim::Outcome held = RunStage(ticking, testing::Delta32Variant());
    EXPECT_FALSE(held.failed) << ticking;
  }
}

// A time namespace: lib/vdso's namespace paths never fall back.
TEST(DefaultRaces, TheNamespaceStageFindsAFallbackInANamespace) {
  const sim::Outcome lost = RunStage(
      "default-time-namespace",
      testing::FastPathLostVariant<testing::FastPathLoss::kTimens>(
          "test-timens-fallback",
          "the upstream reader falling back in a time namespace (tests "
          "only)"));
  ASSERT_TRUE(lost.random.has_value());
  EXPECT_TRUE(lost.failed);
  EXPECT_GT(FastPath(lost).defects, 1000u);
  bool named = false;
  for (const sim::Violation& v : lost.random->violations) {
    named |= v.property == sim::Property::kFastPath &&
             absl::StrContains(v.detail, "in a time namespace");
  }
  EXPECT_TRUE(named);

  const sim::Outcome upstream =
      RunStage("default-time-namespace", variants::UpstreamVariant());
  ASSERT_TRUE(upstream.random.has_value());
  EXPECT_FALSE(upstream.failed);
  EXPECT_GT(upstream.random->coverage.timens_calls, 1000u);

  // A variant without the namespace path is not run there.
  for (const cli::RaceStage& stage : Stages(/*timens=*/false)) {
    EXPECT_NE(stage.scenario.name, "default-time-namespace");
  }
}

}  // namespace
}  // namespace vdsolab
