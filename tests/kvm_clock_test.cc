// kvm-clock machines end to end: the vDSO reads in PVCLOCK mode through
// vCPU 0's pvclock page while the hypervisor rewrites it mid-call. The
// upstream reader holds every property (under relaxed ordering too); a
// vread_pvclock() that skips the version re-check is torn, in program
// order, with a replay that shows it again; one that re-checks without
// virt_rmb() first is torn only when loads may be reordered; the
// exhaustive strategy finds the unchecked read in a window with a
// rewrite; a reader on a CPU whose TSC the stable bit wrongly promises
// synchronised is a violated precondition, not a defect. Several seeds,
// each printed.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>

#include "sim/engine.h"
#include "sim/exhaustive.h"
#include "sim/run.h"
#include "sim/scenario.h"
#include "tests/broken_readers.h"
#include "timekeeper/timex.h"
#include "variants/registry.h"
#include "variants/upstream.h"

namespace vdsolab::sim {
namespace {

// Two readers on two CPUs at 0.3 and 1 us periods, preempted for
// microseconds; the writer stalls between stores; the hypervisor rewrites
// vCPU 0's pvti every 500 us; the stable bit is cleared for 50 ms.
Scenario KvmRacing(uint64_t seed, bool reorder) {
  Scenario s;
  s.name = "kvm-clock-test";
  s.machine.clocksource = "kvm-clock";
  s.machine.pvclock_period_ns = 500000;
  s.machine.cpus = {CpuCounterSpec{}, CpuCounterSpec{}};
  s.kernel.hz = 1000;
  s.timing.preempt_ppm = 200000;
  s.timing.preempt_max_ns = 3000;
  s.timing.writer_stall_ppm = 200000;
  s.timing.writer_stall_max_ns = 5000;
  s.faults.reorder_ppm = reorder ? 1000000 : 0;
  EventSpec unstable;
  unstable.kind = EventKind::kPvclockUpdate;
  unstable.at_ns = 100000000;
  unstable.pvclock_stable = false;
  EventSpec stable = unstable;
  stable.at_ns = 150000000;
  stable.pvclock_stable = true;
  s.events = {unstable, stable};
  s.readers = {ReaderSpec{}, ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonic, kClockRealtime, kClockMonotonicRaw,
                         kClockBoottime};
  s.readers[0].period_ns = 300;
  s.readers[1].cpu = 1;
  s.readers[1].clocks = {kClockMonotonic, kClockMonotonicRaw};
  s.readers[1].period_ns = 1000;
  s.run.duration_ns = 400000000;
  s.run.seed = seed;
  return s;
}

uint64_t Defects(const RunResult& r) {
  uint64_t n = 0;
  for (const PropertyStats& st : r.stats) n += st.defects;
  return n;
}

uint64_t Of(const RunResult& r, Property p) {
  return r.stats[static_cast<size_t>(p) - 1].defects;
}

constexpr uint64_t kSeeds[] = {1, 2, 3};

TEST(KvmClock, TheUpstreamReaderHoldsEveryPropertyWhileThePageIsRewritten) {
  for (uint64_t seed : kSeeds) {
    for (bool reorder : {false, true}) {
      absl::StatusOr<RunResult> r =
          RunRandom(KvmRacing(seed, reorder), variants::UpstreamVariant(), {});
      ASSERT_TRUE(r.ok()) << r.status();
      std::printf(
          "seed %llu%s: %llu calls through the pvclock page, %llu raced a "
          "rewrite, %llu fell back; %llu defects\n",
          static_cast<unsigned long long>(seed), reorder ? " (reordered)" : "",
          static_cast<unsigned long long>(r->coverage.pvclock_reads),
          static_cast<unsigned long long>(r->coverage.pvclock_raced),
          static_cast<unsigned long long>(r->coverage.fallbacks),
          static_cast<unsigned long long>(Defects(*r)));
      EXPECT_EQ(Defects(*r), 0u) << "seed " << seed;
      EXPECT_FALSE(r->failed) << "seed " << seed;
      EXPECT_GT(r->coverage.pvclock_reads, 100000u);
      EXPECT_GT(r->coverage.pvclock_raced, 0u) << "seed " << seed;
      // The stable bit cleared: the vDSO sends the hres clocks to the
      // syscall for 50 ms.
      EXPECT_GT(r->coverage.fallbacks, 10000u);
    }
  }
}

// Every built-in reader of the kernel's clocks, by era (the 4.16 and 4.20
// vread_pvclock() clamped or not, 5.3-6.10 without a negative-delta
// clamp, 6.5+ masked): it reads kvm-clock from the page and holds every
// property while the page is rewritten.
TEST(KvmClock, EveryEraReadsThePvclockPageAndHoldsEveryProperty) {
  for (const char* name :
       {"5.3", "6.1", "6.5", "6.10", "6.15", "x86-4.16", "vasdias-v1",
        "vasdias-rdtscp", "vasdias-rc5-2", "sverdlin-v2"}) {
    absl::StatusOr<const variants::Variant*> v = variants::FindVariant(name);
    ASSERT_TRUE(v.ok()) << v.status();
    for (bool reorder : {false, true}) {
      absl::StatusOr<RunResult> r = RunRandom(KvmRacing(4, reorder), **v, {});
      ASSERT_TRUE(r.ok()) << r.status();
      std::printf("%s%s: %llu calls through the pvclock page, %llu defects\n",
                  name, reorder ? " (reordered)" : "",
                  static_cast<unsigned long long>(r->coverage.pvclock_reads),
                  static_cast<unsigned long long>(Defects(*r)));
      EXPECT_EQ(Defects(*r), 0u) << name;
      EXPECT_GT(r->coverage.pvclock_reads, 10000u) << name;
    }
  }
}

TEST(KvmClock, AReadThatSkipsTheVersionRecheckIsTornWithAReplay) {
  const variants::Variant& broken = testing::NoPvclockRecheckVariant();
  for (uint64_t seed : kSeeds) {
    absl::StatusOr<RunResult> r = RunRandom(KvmRacing(seed, false), broken, {});
    ASSERT_TRUE(r.ok()) << r.status();
    std::printf("seed %llu: %llu inexact, %llu torn calls\n",
                static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(Of(*r, Property::kExact)),
                static_cast<unsigned long long>(Of(*r, Property::kTorn)));
    EXPECT_GT(Of(*r, Property::kExact), 0u) << "seed " << seed;
    EXPECT_GT(Of(*r, Property::kTorn), 0u) << "seed " << seed;
  }
  // The first failure's replay shows it again, and the upstream reader on
  // the same schedule does not.
  absl::StatusOr<Outcome> out = sim::Run(KvmRacing(kSeeds[0], false), broken);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_FALSE(out->replays.empty());
  const FailureReplay& first = out->replays.front();
  ASSERT_TRUE(first.scenario.has_value()) << first.error;
  absl::StatusOr<ReplayOutcome> again = Replay(*first.scenario, broken);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->reproduced) << again->text;
  EXPECT_NE(again->text.find("pvti.version"), std::string::npos) << again->text;
  absl::StatusOr<ReplayOutcome> fixed =
      Replay(*first.scenario, variants::UpstreamVariant());
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_FALSE(fixed->reproduced) << fixed->text;
}

TEST(KvmClock, AMissingVirtRmbBeforeTheRecheckIsTornOnlyWhenLoadsReorder) {
  const variants::Variant& broken = testing::NoPvclockBarrierVariant();
  for (uint64_t seed : kSeeds) {
    absl::StatusOr<RunResult> relaxed =
        RunRandom(KvmRacing(seed, true), broken, {});
    ASSERT_TRUE(relaxed.ok()) << relaxed.status();
    absl::StatusOr<RunResult> ordered =
        RunRandom(KvmRacing(seed, false), broken, {});
    ASSERT_TRUE(ordered.ok()) << ordered.status();
    std::printf("seed %llu: %llu torn calls reordered, %llu in order\n",
                static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(Of(*relaxed, Property::kTorn)),
                static_cast<unsigned long long>(Defects(*ordered)));
    EXPECT_GT(Of(*relaxed, Property::kTorn), 0u) << "seed " << seed;
    EXPECT_EQ(Defects(*ordered), 0u) << "seed " << seed;
  }
}

// With the stable bit cleared, vread_pvclock() returns U64_MAX without
// reading the TSC; a vdso_cycles_ok() that lets it through answers the
// base time: every such call is inexact (it read no counter), not only
// the few that step back.
TEST(KvmClock, ACyclesOkThatTakesUnstableForACounterIsInexact) {
  absl::StatusOr<RunResult> r =
      RunRandom(KvmRacing(1, false), testing::CyclesOkNonZeroVariant(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  std::printf("%llu inexact calls\n",
              static_cast<unsigned long long>(Of(*r, Property::kExact)));
  // 50 ms of calls without the stable bit, 4 of every 6 on hres clocks.
  EXPECT_GT(Of(*r, Property::kExact), 10000u);
  bool named = false;
  for (const Violation& v : r->violations) {
    named |= v.why.find("without reading the counter") != std::string::npos;
  }
  EXPECT_TRUE(named);
}

// Without PVCLOCK_TSC_STABLE_BIT the page's kvm-clock is not valid from
// every CPU: a vread_pvclock() that ignores the bit answers exactly what
// the page gives the TSC it read (exact could not tell), so the bit is
// checked itself. Before, such a reader passed every scenario.
TEST(KvmClock, AReaderIgnoringTheStableBitIsInexact) {
  absl::StatusOr<RunResult> r = RunRandom(
      KvmRacing(1, false), testing::NoPvclockStableCheckVariant(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(Of(*r, Property::kExact), 1000u);
  bool named = false;
  for (const Violation& v : r->violations) {
    named |= v.why.find("without PVCLOCK_TSC_STABLE_BIT") != std::string::npos;
  }
  EXPECT_TRUE(named);
  // The upstream reader on the same run: none.
  absl::StatusOr<RunResult> up =
      RunRandom(KvmRacing(1, false), variants::UpstreamVariant(), {});
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_EQ(Of(*up, Property::kExact), 0u);
}

// A broken aux clock reader on kvm-clock, on CPUs whose TSCs agree: what
// it gets wrong are defects, none excused as cross-CPU skew (the aux
// record's kvm-clock read is judged as kvm-clock, not as a TSC value).
TEST(KvmClock, AnAuxReaderWithoutItsSeqRetryIsADefectNotSkew) {
  Scenario s = KvmRacing(1, false);
  s.kernel.aux_clocks = true;
  EventSpec enable;
  enable.kind = EventKind::kAuxEnable;
  enable.at_ns = 1000000;
  enable.aux = 2;
  EventSpec steer;
  steer.kind = EventKind::kAdjtimex;
  steer.at_ns = 2000000;
  steer.clock = kClockAux + 2;
  steer.modes = timekeeper::kAdjFrequency;
  steer.freq = 300ll << 16;
  s.events.push_back(enable);
  s.events.push_back(steer);
  for (ReaderSpec& r : s.readers) r.clocks = {kClockAux + 2, kClockMonotonic};
  absl::StatusOr<RunResult> r = RunRandom(s, testing::NoAuxRetryVariant(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  uint64_t preconditions = 0;
  for (const PropertyStats& st : r->stats) preconditions += st.preconditions;
  std::printf("%llu defects, %llu preconditions\n",
              static_cast<unsigned long long>(Defects(*r)),
              static_cast<unsigned long long>(preconditions));
  EXPECT_GT(Defects(*r), 0u);
  EXPECT_EQ(preconditions, 0u);
}

// The hypervisor keeps what the checker needs and no more, however long
// the run: through a NO_HZ idle (no ticks, the rewrites go on) and a
// day-long VM pause (no rewrites, skipped in one step).
TEST(KvmClock, RewriteStatesStayBoundedThroughIdleAndPauses) {
  Scenario s = KvmRacing(1, false);
  s.machine.pvclock_period_ns = 100000;
  s.events.clear();
  EventSpec idle;
  idle.kind = EventKind::kIdle;
  idle.at_ns = 10000000;
  idle.duration_ns = 4000000000;
  EventSpec pause;
  pause.kind = EventKind::kPause;
  pause.at_ns = 4100000000;
  pause.duration_ns = 86400ull * 1000000000;
  s.events = {idle, pause};
  for (ReaderSpec& r : s.readers) r.period_ns = 200000;
  s.run.duration_ns = pause.at_ns + pause.duration_ns + 100000000;
  absl::StatusOr<RunResult> r = RunRandom(s, variants::UpstreamVariant(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  std::printf("at most %llu pvclock states held\n",
              static_cast<unsigned long long>(r->retained.pvclock_states));
  EXPECT_FALSE(r->failed);
  // A second of 100 us rewrites, and the few after it.
  EXPECT_LE(r->retained.pvclock_states, 10100u);
  EXPECT_GT(r->retained.pvclock_states, 0u);
}

// A vread_pvclock() without the virt_rmb() after its first version load:
// that load may see a rewrite complete while the fields after it still
// show the state before, which the re-check then accepts. Torn only when
// some loads see the newest state and some do not (reordering in part of
// the chances: a load always reordered never sees the newest state).
TEST(KvmClock, AMissingVirtRmbAfterTheBeginLoadIsTornUnderPartialReordering) {
  const variants::Variant& broken = testing::NoPvclockBeginBarrierVariant();
  for (uint64_t seed : kSeeds) {
    Scenario partly = KvmRacing(seed, true);
    partly.faults.reorder_ppm = 400000;
    absl::StatusOr<RunResult> relaxed = RunRandom(partly, broken, {});
    ASSERT_TRUE(relaxed.ok()) << relaxed.status();
    absl::StatusOr<RunResult> ordered =
        RunRandom(KvmRacing(seed, false), broken, {});
    ASSERT_TRUE(ordered.ok()) << ordered.status();
    std::printf("seed %llu: %llu torn calls partly reordered, %llu in order\n",
                static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(Of(*relaxed, Property::kTorn)),
                static_cast<unsigned long long>(Defects(*ordered)));
    EXPECT_GT(Of(*relaxed, Property::kTorn), 0u) << "seed " << seed;
    EXPECT_EQ(Defects(*ordered), 0u) << "seed " << seed;
  }
}

// One MONOTONIC call against the next two updates, from a point where the
// hypervisor's rewrite is among them.
Scenario KvmExhaustive() {
  Scenario s;
  s.name = "kvm-clock-exhaustive";
  s.machine.clocksource = "kvm-clock";
  s.machine.pvclock_period_ns = 1000000;
  s.kernel.hz = 1000;
  s.run.strategy = Strategy::kExhaustive;
  s.run.exhaustive_at_ns = 20000000;
  s.run.exhaustive_updates = 2;
  s.run.exhaustive_reduction = Reduction::kPor;
  return s;
}

TEST(KvmClock, TheExhaustiveStrategyRacesTheRewriteToo) {
  absl::StatusOr<ExploreResult> good =
      Explore(KvmExhaustive(), variants::UpstreamVariant(), {});
  ASSERT_TRUE(good.ok()) << good.status();
  absl::StatusOr<ExploreResult> bad =
      Explore(KvmExhaustive(), testing::NoPvclockRecheckVariant(), {});
  ASSERT_TRUE(bad.ok()) << bad.status();
  std::printf(
      "%u updates (%u stores): upstream %llu interleavings, %llu failing; "
      "unchecked pvti %llu interleavings, %llu failing\n",
      good->updates, good->stores,
      static_cast<unsigned long long>(good->interleavings),
      static_cast<unsigned long long>(good->failing),
      static_cast<unsigned long long>(bad->interleavings),
      static_cast<unsigned long long>(bad->failing));
  EXPECT_TRUE(good->complete);
  EXPECT_EQ(good->failing, 0u);
  EXPECT_GT(bad->failing, 0u);
  ASSERT_TRUE(bad->minimal.has_value());
  // The minimal interleaving lets a pvclock rewrite land mid-call.
  EXPECT_GT(bad->minimal_call.pvclock_stores_during, 0u);
}

TEST(KvmClock, ASkewedTscUnderTheStableBitIsAPreconditionNotADefect) {
  Scenario s = KvmRacing(1, false);
  s.machine.cpus[1].offset_cycles = 5000;
  absl::StatusOr<RunResult> r = RunRandom(s, variants::UpstreamVariant(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  uint64_t preconditions = 0;
  for (const PropertyStats& st : r->stats) preconditions += st.preconditions;
  EXPECT_EQ(Defects(*r), 0u);
  EXPECT_GT(preconditions, 0u);
  bool skew_named = false;
  for (const Violation& v : r->violations) {
    if (v.why.find("cross-CPU counter skew") != std::string::npos) {
      skew_named = true;
    }
  }
  EXPECT_TRUE(skew_named);
}

}  // namespace
}  // namespace vdsolab::sim
