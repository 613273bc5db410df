#include "sim/engine.h"

#include <gtest/gtest.h>

#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "sim/entry_points_test_reader.h"
#include "sim/exhaustive.h"
#include "variants/upstream.h"
#include "variants/variant.h"
#include "vdso/upstream_reader.h"

namespace vdsolab::sim {
namespace {

std::string Summary(const RunResult& r) {
  std::string out;
  for (int i = 0; i < kNumProperties; ++i) {
    const PropertyStats& s = r.stats[static_cast<size_t>(i)];
    absl::StrAppendFormat(&out,
                          "%s: %d checked, %d defects, %d preconditions, "
                          "%d known\n",
                          PropertyName(static_cast<Property>(i + 1)), s.checked,
                          s.defects, s.preconditions, s.known_kernel);
  }
  for (const Violation& v : r.violations) {
    absl::StrAppendFormat(&out, "  %s [%s] %s: %s\n", PropertyName(v.property),
                          VerdictName(v.verdict), v.why, v.detail);
  }
  return out;
}

Scenario Basic() {
  Scenario s;
  s.run.duration_ns = 200000000;  // 0.2 s.
  s.readers = {ReaderSpec{}, ReaderSpec{}};
  s.readers[0].clocks = {
      kClockMonotonic, kClockBoottime,        kClockRealtime,
      kClockTai,       kClockMonotonicRaw,    kClockRealtimeCoarse,
      kClockRealtime,  kClockMonotonicCoarse, kClockMonotonic};
  s.readers[1].clocks = {kClockMonotonic, kClockRealtime};
  s.readers[1].period_ns = 7000;
  return s;
}

const variants::Variant& Upstream() { return variants::UpstreamVariant(); }

TEST(Engine, UpstreamReaderPassesEveryCheckOnACleanMachine) {
  auto r = RunRandom(Basic(), Upstream());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->failed) << Summary(*r);
  EXPECT_TRUE(r->violations.empty()) << Summary(*r);
  EXPECT_GT(r->coverage.calls, 10000u);
  EXPECT_GT(r->updates, 40u);
  for (Property p : {Property::kExact, Property::kMonotonic, Property::kCausal,
                     Property::kSane, Property::kRawRate, Property::kCrossClock,
                     Property::kTorn, Property::kLivelock}) {
    EXPECT_GT(r->stats[static_cast<size_t>(p) - 1].checked, 0u)
        << PropertyName(p) << "\n"
        << Summary(*r);
  }
}

TEST(Engine, PreemptionAndWriterStallsMakeRacesTheReaderSurvives) {
  Scenario s = Basic();
  s.timing.preempt_ppm = 20000;
  s.timing.preempt_max_ns = 8000000;
  s.timing.writer_stall_ppm = 50000;
  s.timing.writer_stall_max_ns = 20000;
  EventSpec ntp;
  ntp.kind = EventKind::kAdjtimexFrequency;
  ntp.at_ns = 50000000;
  ntp.freq_scaled_ppm = 100 << 16;
  s.events.push_back(ntp);
  auto r = RunRandom(s, Upstream());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->failed) << Summary(*r);
  EXPECT_GT(r->coverage.raced, 0u);
  EXPECT_GT(r->coverage.retries, 0u);
  EXPECT_GT(r->coverage.preemptions, 0u);
}

// A reader's other entry points are probed after each update, before a
// call (sim/entry_points.h): their answers count under exact, and the run's
// own calls are as without probes. One broken entry point fails the run
// with one kept violation per view (the initial one's and the time
// namespace's), the rest counted. The exhaustive strategy probes the page
// before the raced updates.
TEST(Engine, ProbesTheOtherEntryPointsOnSettledPages) {
  using testing::Break;
  using testing::WithEntryPoints;
  Scenario s;
  s.run.duration_ns = 20000000;
  s.kernel.timens_monotonic = Timespec64{3600, 0};
  s.readers = {ReaderSpec{}, ReaderSpec{}};
  s.readers[1].timens = true;
  absl::StatusOr<RunResult> plain = RunRandom(s, variants::UpstreamVariant());
  absl::StatusOr<RunResult> good =
      RunRandom(s, WithEntryPoints<Break::kNone>());
  ASSERT_TRUE(plain.ok() && good.ok());
  EXPECT_FALSE(good->failed);
  const auto exact = [](const RunResult& r) {
    return r.stats[static_cast<size_t>(Property::kExact) - 1];
  };
  // Every other property, the coverage and the calls' violations (none)
  // are the run's without probes.
  for (size_t p = 1; p < kNumProperties; ++p) {
    EXPECT_EQ(good->stats[p].checked, plain->stats[p].checked) << p;
    EXPECT_EQ(good->stats[p].defects, plain->stats[p].defects) << p;
  }
  EXPECT_EQ(good->coverage.calls, plain->coverage.calls);
  EXPECT_EQ(good->coverage.retries, plain->coverage.retries);
  // Per probe gettimeofday() (both pointers, tz NULL, tv NULL), time() and
  // one clock_getres() id, each with its pointer argument and with NULL;
  // every id (40) both ways on each view's first probe.
  ASSERT_GE(exact(*good).checked, exact(*plain).checked + 2 * 85);
  const uint64_t added = exact(*good).checked - exact(*plain).checked;
  const uint64_t probes = (added - 2 * 78) / 7;
  EXPECT_EQ(added, 7 * probes + 2 * 78);
  EXPECT_GE(probes, 5u);  // 20 ms at HZ=250.

  struct Case {
    const variants::Variant& variant;
    const char* entry;
  };
  for (const Case& c :
       {Case{WithEntryPoints<Break::kLateTime>(), "time()"},
        Case{WithEntryPoints<Break::kUsecShift>(), "gettimeofday()"},
        Case{WithEntryPoints<Break::kCoarseRes>(), "clock_getres("},
        Case{WithEntryPoints<Break::kNullRes>(), ", NULL)"}}) {
    absl::StatusOr<RunResult> bad = RunRandom(s, c.variant);
    ASSERT_TRUE(bad.ok());
    EXPECT_TRUE(bad->failed) << c.entry;
    EXPECT_GT(exact(*bad).defects, 0u) << c.entry;
    int kept = 0;
    bool in_namespace = false;
    for (const Violation& v : bad->violations) {
      EXPECT_NE(v.why.find(c.entry), std::string::npos) << v.why;
      ++kept;
      in_namespace = in_namespace || v.detail.find("time namespace's view") !=
                                         std::string::npos;
    }
    EXPECT_EQ(kept, 2) << c.entry;
    EXPECT_TRUE(in_namespace) << c.entry;
  }
  // time() is wrong at every probe, time(NULL) too.
  absl::StatusOr<RunResult> late =
      RunRandom(s, WithEntryPoints<Break::kLateTime>());
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(exact(*late).defects, 2 * probes);

  Scenario one;
  one.run.strategy = Strategy::kExhaustive;
  one.readers[0].clocks = {kClockMonotonic};
  absl::StatusOr<ExploreResult> e =
      Explore(one, WithEntryPoints<Break::kLateTime>());
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->entry_points_checked, 85u);
  EXPECT_EQ(e->entry_points_wrong, 2u);  // time() and time(NULL).
  ASSERT_EQ(e->entry_point_violations.size(), 1u);
  EXPECT_NE(e->entry_point_violations[0].why.find("time()"), std::string::npos);
}

// A reader that makes its fallback system call a million times for
// MONOTONIC, each answer right: at the syscall's simulated cost the one
// call would take the whole run (0.25 s), and the clock it answers wrong
// (REALTIME, 0) would never be checked. The loop is a livelock finding,
// and the run goes on to find the wrong answers.
std::optional<ClockResult> FallsBackInALoop(vdso::HookedAccess& access,
                                            const uint8_t* page,
                                            ClockId clock) {
  if (clock != kClockMonotonic) return ClockResult::Ok(Timespec64{0, 0});
  ClockResult r = ClockResult::Error(-22);
  for (int i = 0; i < 1000000; ++i) r = access.Fallback(clock);
  (void)page;
  return r;
}

// gettimeofday() is judged against the era's CLOCK_REALTIME, not the
// reader's own: a REALTIME bug both share fails the probe though no call
// of the run reads REALTIME. And a reader that asks may_retry() before its
// first pass is no livelock on a settled page.
TEST(Engine, ProbesJudgeGettimeofdayAgainstTheModel) {
  using testing::Break;
  using testing::WithEntryPoints;
  Scenario s;
  s.run.duration_ns = 20000000;
  s.readers = {ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonic};
  absl::StatusOr<RunResult> late =
      RunRandom(s, WithEntryPoints<Break::kLateRealtime>());
  ASSERT_TRUE(late.ok());
  EXPECT_TRUE(late->failed);
  bool named = false;
  for (const Violation& v : late->violations) {
    named = named ||
            absl::StrContains(v.why, "gettimeofday() differs from the model's");
  }
  EXPECT_TRUE(named) << Summary(*late);

  absl::StatusOr<RunResult> asks =
      RunRandom(s, WithEntryPoints<Break::kAsksFirst>());
  ASSERT_TRUE(asks.ok());
  EXPECT_FALSE(asks->failed) << Summary(*asks);
  EXPECT_GT(asks->stats[static_cast<size_t>(Property::kExact) - 1].checked,
            asks->coverage.calls);
}

TEST(Engine, FallbackSystemCallsInALoopAreALivelock) {
  variants::Variant looping = Upstream();
  looping.make_sim_reader = variants::MakeStateless<FallsBackInALoop>;
  Scenario s = Basic();
  s.run.duration_ns = 100000000;  // 0.1 s.
  s.readers.resize(1);
  s.readers[0].clocks = {kClockMonotonic, kClockRealtime};
  auto r = RunRandom(s, looping);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->failed);
  EXPECT_GT(r->stats[static_cast<size_t>(Property::kLivelock) - 1].defects, 0u)
      << Summary(*r);
  EXPECT_GT(r->stats[static_cast<size_t>(Property::kExact) - 1].defects, 0u)
      << Summary(*r);
  bool named = false;
  for (const Violation& v : r->violations) {
    named = named || absl::StrContains(v.why, "fallback system call in a loop");
  }
  EXPECT_TRUE(named) << Summary(*r);
}

// CLOCK_AUX (16) answered from CLOCK_MONOTONIC's record while no aux
// clock is enabled: the syscall refuses it (-EINVAL), so any answer from
// the page is inexact, whatever torn says of its fields.
std::optional<ClockResult> AnswersAuxFromMonotonic(vdso::HookedAccess& access,
                                                   const uint8_t* page,
                                                   ClockId clock) {
  return vdso::upstream::ClockGettime(
      access, page, clock == kClockAux ? kClockMonotonic : clock);
}

TEST(Engine, AnAuxClockNotEnabledIsTheSyscallsAlone) {
  Scenario s = Basic();
  s.run.duration_ns = 20000000;  // 20 ms.
  s.readers.resize(1);
  s.readers[0].clocks = {kClockMonotonic, kClockAux};
  auto good = RunRandom(s, Upstream());
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_FALSE(good->failed) << Summary(*good);
  variants::Variant broken = Upstream();
  broken.make_sim_reader = variants::MakeStateless<AnswersAuxFromMonotonic>;
  auto r = RunRandom(s, broken);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->failed);
  bool named = false;
  for (const Violation& v : r->violations) {
    named = named || (v.property == Property::kExact &&
                      absl::StrContains(v.why, "a clock only the syscall can"));
  }
  EXPECT_TRUE(named) << Summary(*r);
}

// Two reads a few ns apart may see counter values a cycle apart (each is
// the counter floored to its last cycle): on a counter of HPET's 70 ns or
// ACPI PM's 279 ns cycle, read by the vDSO, that is more than the time
// between the reads, and no drift between the clocks.
TEST(Engine, ClocksReadACycleApartOnASlowCounterHaveNotDrifted) {
  for (const auto& [hz, bits] : {std::tuple<uint64_t, int>{14318180, 64},
                                 {3579545, 64},
                                 {3579545, 24}}) {
    Scenario s;
    s.run.duration_ns = 5000000;
    s.machine.counter_hz = hz;
    s.machine.width_bits = bits;
    if (bits < 64) s.machine.counter_start &= (uint64_t{1} << bits) - 1;
    s.readers = {ReaderSpec{}};
    s.readers[0].clocks = {kClockRealtime, kClockMonotonic, kClockBoottime,
                           kClockTai};
    s.readers[0].period_ns = 20;
    auto r = RunRandom(s, Upstream());
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_GT(r->stats[static_cast<size_t>(Property::kCrossClock) - 1].checked,
              10000u)
        << hz;
    EXPECT_TRUE(r->violations.empty()) << hz << "\n" << Summary(*r);
  }
}

TEST(Engine, SameSeedSameResult) {
  Scenario s = Basic();
  s.timing.preempt_ppm = 20000;
  s.timing.preempt_max_ns = 8000000;
  auto a = RunRandom(s, Upstream());
  auto b = RunRandom(s, Upstream());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Summary(*a), Summary(*b));
  EXPECT_EQ(a->coverage.raced, b->coverage.raced);
  EXPECT_EQ(a->coverage.calls, b->coverage.calls);
}

TEST(Engine, CrossCpuSkewIsAPreconditionNotADefect) {
  Scenario s = Basic();
  s.machine.cpus = {CpuCounterSpec{}, CpuCounterSpec{}};
  s.machine.cpus[1].offset_cycles = -2600000;  // 1 ms behind CPU 0.
  s.readers[0].migrate_ppm = 200000;
  s.readers[1].cpu = 1;
  auto r = RunRandom(s, Upstream());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->failed) << Summary(*r);
  uint64_t preconditions = 0;
  for (const PropertyStats& st : r->stats) preconditions += st.preconditions;
  EXPECT_GT(preconditions, 0u) << Summary(*r);
  EXPECT_GT(r->coverage.negative_motion, 0u);
  // CPU 1's counter is below the boot value for its first ms: behind, not
  // wrapped (a 64-bit counter from near 0 never wraps in 0.2 s).
  EXPECT_EQ(r->coverage.counter_wrapped, 0u);
}

// Two readers on two CPUs, both ahead of the timekeeping CPU by different
// amounts: what orders their answers is the skew between the two, and the
// precondition names that pair, not either one against the timekeeping CPU.
TEST(Engine, CausalSkewNamesTheTwoCpusThatOrderedTheReads) {
  Scenario s = Basic();
  s.machine.cpus = {CpuCounterSpec{}, CpuCounterSpec{}, CpuCounterSpec{}};
  s.machine.cpus[1].offset_cycles = 52000;  // 20 us ahead of CPU 0.
  s.machine.cpus[2].offset_cycles = 2600;   // 1 us ahead.
  s.readers[0].cpu = 1;
  s.readers[1].cpu = 2;
  auto r = RunRandom(s, Upstream());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->failed) << Summary(*r);
  int causal = 0;
  for (const Violation& v : r->violations) {
    if (v.property != Property::kCausal) continue;
    ++causal;
    EXPECT_EQ(v.verdict, Verdict::kPrecondition) << v.why;
    // The earlier call's CPU (1) was ahead of the later one's (2).
    EXPECT_TRUE(absl::StrContains(
        v.why,
        "CPU 1's counter is 49400 cycles ahead of CPU 2's (+52000 and +2600 "
        "against the timekeeping CPU 0's)"))
        << v.why;
  }
  EXPECT_GT(causal, 0) << Summary(*r);
}

// An early (unordered) counter read can precede the cycle_last of the page
// state the reader then validates: negative motion on a single CPU. The
// upstream reader clamps it to the base time, as the syscall does, so every
// check still holds.
TEST(Engine, UpstreamReaderSurvivesUnorderedCounterReads) {
  Scenario s = Basic();
  s.faults.unordered_counter_read = true;
  s.faults.speculation_ns = 5000;
  s.timing.preempt_ppm = 100000;
  s.timing.preempt_max_ns = 3000;
  s.readers[1].period_ns = 300;
  auto r = RunRandom(s, Upstream());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->failed) << Summary(*r);
  EXPECT_GT(r->coverage.negative_motion, 0u) << Summary(*r);
}

// Two readers on two skewed CPUs (violated preconditions to keep), one
// migrating and both preempted, NTP steering, a VM pause over a quarter of
// the run and a NO_HZ idle over a sixteenth: the same shape at any length.
Scenario LongRunShape(uint64_t duration_ns) {
  Scenario s = Basic();
  s.run.duration_ns = duration_ns;
  s.machine.cpus = {CpuCounterSpec{}, CpuCounterSpec{}};
  s.machine.cpus[1].offset_cycles = -2600000;
  s.readers[0].period_ns = 500000;
  s.readers[0].migrate_ppm = 100000;
  s.readers[1].period_ns = 700000;
  s.readers[1].cpu = 1;
  s.timing.preempt_ppm = 20000;
  s.timing.preempt_max_ns = 3000000;
  EventSpec ntp;
  ntp.kind = EventKind::kAdjtimexFrequency;
  ntp.at_ns = duration_ns / 8;
  ntp.freq_scaled_ppm = 50 << 16;
  EventSpec pause;
  pause.kind = EventKind::kPause;
  pause.at_ns = duration_ns / 4;
  pause.duration_ns = duration_ns / 4;
  EventSpec idle;
  idle.kind = EventKind::kIdle;
  idle.at_ns = duration_ns / 8 * 5;
  idle.duration_ns = duration_ns / 16;
  s.events = {ntp, pause, idle};
  return s;
}

// Memory flat in simulated duration: what a run holds (the writer's updates
// and pending stores, the checker's per-reader and per-clock state, the
// violations kept) is bounded by the scenario's readers, clocks and events,
// not by its length. Counted in records, not bytes.
TEST(Engine, RetainedStateDoesNotGrowWithDuration) {
  auto one = RunRandom(LongRunShape(2000000000), Upstream());
  auto many = RunRandom(LongRunShape(64000000000), Upstream());
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE(many.ok()) << many.status();
  EXPECT_FALSE(many->failed) << Summary(*many);
  EXPECT_GT(many->coverage.calls, 30 * one->coverage.calls);
  EXPECT_GT(many->updates, 30 * one->updates);
  uint64_t preconditions = 0;
  for (const PropertyStats& st : many->stats) preconditions += st.preconditions;
  EXPECT_GT(preconditions, 1000u) << Summary(*many);

  const Retained& a = one->retained;
  const Retained& b = many->retained;
  // Retire() keeps the newest update ended and those after it: a few.
  EXPECT_LE(b.updates, 4u);
  EXPECT_LE(b.aux_records, 2u * kMaxAuxClocks);
  // Stores of the updates since the last call, and committed ones not yet
  // erased (PopPending()): independent of the length.
  EXPECT_LE(b.stores, a.stores + 64) << a.stores;
  // Per (reader, clock), per reader and per clock: 2 readers, 9 clocks.
  EXPECT_LE(b.checker_states, 2u * 9 + 2 * 9 + 9 + 2 + 2 + 9);
  EXPECT_EQ(b.divergence_points, 0u);  // No clock without an oracle.
  // Capped: 20 per kind (failures, preconditions), plus the first of each
  // property and verdict.
  EXPECT_LE(b.violations, 2u * 20 + 3u * kNumProperties);
  EXPECT_LE(b.outcomes, 3u);  // At most one per event.
}

}  // namespace
}  // namespace vdsolab::sim
