// The default job's races (default_races.h).

#include "cli/default_races.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace vdsolab::cli {
namespace {

constexpr char kRaces[] = "the races with updates";

// The machine both stages share with the oracle check.
sim::Scenario OnTheMachine(uint64_t tsc_hz, uint64_t seed) {
  sim::Scenario s;
  s.machine.clocksource = "tsc";
  s.machine.counter_hz = tsc_hz;
  s.run.seed = seed;
  return s;
}

std::string Names(const std::vector<ClockId>& clocks) {
  return absl::StrJoin(clocks, ", ", [](std::string* out, ClockId c) {
    out->append(sim::ClockShortName(c));
  });
}

// The clocks among `clocks` that read the counter (not the coarse ones).
std::vector<ClockId> CounterClocks(const std::vector<ClockId>& clocks) {
  std::vector<ClockId> counted;
  for (ClockId c : clocks) {
    if (((kVdsoHres | kVdsoRaw) & (1u << c)) != 0) counted.push_back(c);
  }
  return counted;
}

// Negative motion. The timekeeping CPU takes cycle_last from its own
// counter; a reader on a CPU whose TSC is behind it (the "TSC wobbles" that
// x86's vdso_calc_delta() (-6.9) and vdso_calc_ns() (6.10+) clamp) reads a
// counter below cycle_last for a while after every update. Without the
// clamp that delta converts as ~2^64 cycles. The syscall path clamps too
// (clocksource_delta()), so the oracle expects the update's base time.
RaceStage NegativeMotionStage(const std::vector<ClockId>& clocks,
                              uint64_t tsc_hz, uint64_t seed) {
  constexpr uint64_t kBehindNs = 20000;
  sim::Scenario s = OnTheMachine(tsc_hz, seed);
  s.name = "default-negative-motion";
  s.description =
      "The default job's negative motion: one reader on CPU 1, whose TSC "
      "is 20 us behind the timekeeping CPU 0's, reads every 2 us, so the "
      "first reads after each update (HZ 1000) see a counter below the "
      "page's cycle_last.";
  sim::CpuCounterSpec behind;
  // tsc_hz is at most 10 GHz (ValidateOracleRunConfig()): no overflow.
  behind.offset_cycles = -static_cast<int64_t>(tsc_hz * kBehindNs / 1000000000);
  s.machine.cpus = {sim::CpuCounterSpec{}, behind};
  s.kernel.hz = 1000;
  sim::ReaderSpec reader;
  reader.cpu = 1;
  reader.clocks = clocks;
  reader.period_ns = 2000;
  reader.period_jitter_ns = 500;
  s.readers = {reader};
  s.run.duration_ns = 50000000;
  return {std::move(s),
          absl::StrFormat("%s, 50 ms of a reader on a CPU whose counter is "
                          "20 us behind the timekeeping CPU's (negative "
                          "motion)",
                          Names(clocks)),
          "the reads on a CPU whose counter lags the timekeeping CPU's"};
}

}  // namespace

std::vector<RaceStage> DefaultRaceStages(const std::vector<ClockId>& clocks,
                                         uint64_t tsc_hz, uint64_t seed) {
  std::vector<RaceStage> stages;
  // One exhaustive search per clock: the strategy races the first
  // reader's first clock. Across a second boundary (rollover), where a
  // sec loaded outside the seq loop is a whole second off.
  for (ClockId clock : clocks) {
    sim::Scenario s = OnTheMachine(tsc_hz, seed);
    s.name = absl::StrCat("default-exhaustive-",
                          absl::AsciiStrToLower(sim::ClockShortName(clock)));
    s.description = absl::StrFormat(
        "The default job's race: every distinct interleaving of one "
        "clock_gettime(CLOCK_%s) with the first two timekeeper updates "
        "after 900 ms of which one carries it into a new second.",
        sim::ClockShortName(clock));
    s.kernel.hz = 250;
    s.readers = {sim::ReaderSpec{}};
    s.readers[0].clocks = {clock};
    s.run.duration_ns = 2000000000;
    s.run.strategy = sim::Strategy::kExhaustive;
    s.run.exhaustive_at_ns = 900000000;
    s.run.exhaustive_updates = 2;
    s.run.exhaustive_rollover = true;
    s.run.exhaustive_reduction = sim::Reduction::kPor;
    stages.push_back(
        {std::move(s),
         absl::StrFormat("CLOCK_%s, one call against every interleaving of "
                         "the next two updates across a second boundary",
                         sim::ClockShortName(clock)),
         kRaces});
  }
  if (clocks.empty()) return stages;
  // Random: preemption before any load lets a whole update land mid-call,
  // writer stalls let part of one, and relaxed ordering lets a load see
  // the page as it was before stores that landed since the reader's last
  // barrier (a missing smp_rmb()).
  sim::Scenario s = OnTheMachine(tsc_hz, seed);
  s.name = "default-races";
  s.description =
      "The default job's race: two readers on two CPUs, preempted before "
      "two hooks in ten, against a writer that stalls before two stores "
      "in ten, with relaxed ordering (three loads in five may see the page "
      "as it was before the stores since the reader's last barrier), HZ "
      "1000 and an NTP frequency change at 50 ms.";
  s.machine.cpus = {sim::CpuCounterSpec{}, sim::CpuCounterSpec{}};
  s.kernel.hz = 1000;
  s.timing.preempt_ppm = 200000;
  s.timing.preempt_max_ns = 3000;
  s.timing.writer_stall_ppm = 200000;
  s.timing.writer_stall_max_ns = 5000;
  s.faults.reorder_ppm = 600000;
  sim::EventSpec ntp;
  ntp.kind = sim::EventKind::kAdjtimexFrequency;
  ntp.at_ns = 50000000;
  ntp.freq_scaled_ppm = int64_t{180} << 16;
  s.events = {ntp};
  sim::ReaderSpec fast;
  fast.cpu = 0;
  fast.clocks = clocks;
  fast.period_ns = 300;
  sim::ReaderSpec jittered;
  jittered.cpu = 1;
  jittered.clocks = clocks;
  jittered.period_ns = 1000;
  jittered.period_jitter_ns = 700;
  s.readers = {fast, jittered};
  s.run.duration_ns = 200000000;
  stages.push_back(
      {std::move(s),
       absl::StrFormat("%s, 200 ms of two preempted readers on two CPUs "
                       "against a stalling writer, relaxed ordering",
                       Names(clocks)),
       kRaces});
  if (std::vector<ClockId> counted = CounterClocks(clocks); !counted.empty()) {
    stages.push_back(NegativeMotionStage(counted, tsc_hz, seed));
  }
  return stages;
}

}  // namespace vdsolab::cli
