// The default job's races (default_races.h).

#include "cli/default_races.h"

#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "timekeeper/clocksource.h"

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

// A clock's short name ("MONOTONIC"), or a variant's own clock's name.
std::string Short(ClockId c, const ClockNames& own) {
  const auto it = own.find(c);
  return it != own.end() ? it->second : sim::ClockShortName(c);
}
// Its full name ("CLOCK_MONOTONIC"), or a variant's own clock's name.
std::string Full(ClockId c, const ClockNames& own) {
  const auto it = own.find(c);
  return it != own.end() ? it->second
                         : absl::StrCat("CLOCK_", sim::ClockShortName(c));
}

std::string Names(const std::vector<ClockId>& clocks, const ClockNames& own) {
  return absl::StrJoin(clocks, ", ", [&own](std::string* out, ClockId c) {
    out->append(Short(c, own));
  });
}

// num / den cycles of a `tsc_hz` TSC in ns, rounded up past the next whole
// ms: in 128 bits (tsc_hz is at least 1 MHz, ValidateOracleRunConfig(),
// and the cycles a 64-bit count times a small factor).
uint64_t WholeMsPast(unsigned __int128 num, unsigned __int128 den,
                     uint64_t tsc_hz) {
  const unsigned __int128 ns = num * kNsecPerSec / (den * tsc_hz);
  return (static_cast<uint64_t>(ns) / 1000000 + 1) * 1000000;
}

sim::EventSpec Event(sim::EventKind kind, uint64_t at_ns,
                     uint64_t duration_ns) {
  sim::EventSpec e;
  e.kind = kind;
  e.at_ns = at_ns;
  e.duration_ns = duration_ns;
  return e;
}

// One reader on CPU 0, the timekeeping CPU.
sim::ReaderSpec ReaderOnCpu0(const std::vector<ClockId>& clocks,
                             uint64_t period_ns) {
  sim::ReaderSpec reader;
  reader.cpu = 0;
  reader.clocks = clocks;
  reader.period_ns = period_ns;
  return reader;
}

// The clocks among `clocks` that read the counter (not the coarse ones):
// the kernel's hres clocks and RAW, and a variant's own clocks.
std::vector<ClockId> CounterClocks(const std::vector<ClockId>& clocks,
                                   const ClockNames& own) {
  std::vector<ClockId> counted;
  for (ClockId c : clocks) {
    const bool kernel_counted =
        c >= 0 && c < 32 && ((kVdsoHres | kVdsoRaw) & (1u << c)) != 0;
    if (kernel_counted || own.count(c) != 0) counted.push_back(c);
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
                              const ClockNames& own, uint64_t tsc_hz,
                              uint64_t seed) {
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
                          Names(clocks, own)),
          "the reads on a CPU whose counter lags the timekeeping CPU's"};
}

// Reads at the exact nanosecond a clock turns a second. The normalisation
// of nanoseconds into a timespec (__iter_div_u64_rem()) has one value a
// `> NSEC_PER_SEC` test instead of `>=` gets wrong, 10^9 itself, which a
// read converts to only at exactly that nanosecond: on the oracle check's
// machine, about once in 10^9 reads. Here a 1 GHz counter converts
// exactly (mult = 2^shift), and at true time 1 s every kernel clock turns
// a second (RAW counts from 0 at boot, MONOTONIC and BOOTTIME from 1 s,
// REALTIME and TAI from a whole second). A VM pause (no ticks, no calls)
// carries the run to 1.5 us before it; then each clock's own reader reads
// every nanosecond at no cost (whatever the seed's stagger of its first
// call: drawn modulo the period), across the turn.
RaceStage SecondBoundaryStage(const std::vector<ClockId>& clocks,
                              const ClockNames& own, uint64_t seed) {
  constexpr uint64_t kBefore = 1500;
  sim::Scenario s = OnTheMachine(1000000000, seed);
  s.name = "default-second-boundary";
  s.description =
      "The default job's second boundaries: a 1 GHz counter (one cycle, one "
      "ns) and the clocks at whole seconds at boot, a VM pause to 1.5 us "
      "before true time 1 s, where every clock turns a second, then one "
      "reader per clock reading every nanosecond at no cost until 1.5 us "
      "after it.";
  s.kernel.hz = 250;
  s.kernel.boot_offset = Timespec64{1, 0};
  s.kernel.boot_realtime = Timespec64{1764460800, 0};
  s.timing.load_ns = 0;
  s.timing.counter_read_ns = 0;
  sim::EventSpec pause;
  pause.kind = sim::EventKind::kPause;
  pause.at_ns = kBefore;
  pause.duration_ns = kNsecPerSec - 2 * kBefore;
  s.events = {pause};
  s.machine.cpus.assign(clocks.size(), sim::CpuCounterSpec{});
  s.readers.clear();
  for (size_t i = 0; i < clocks.size(); ++i) {
    sim::ReaderSpec reader;
    reader.cpu = static_cast<int>(i);
    reader.clocks = {clocks[i]};
    // Its clock alone: every nanosecond, not every (1 + own clocks)th.
    reader.own_clocks = false;
    reader.period_ns = 1;
    s.readers.push_back(reader);
  }
  s.run.duration_ns = kNsecPerSec + kBefore;
  return {std::move(s),
          absl::StrFormat("%s, a read every nanosecond across the turn of a "
                          "second (1 GHz counter)",
                          Names(clocks, own)),
          "the reads at the turn of a second"};
}

// Deltas past max_cycles. A VM pause longer than the TSC clocksource's
// max_cycles, and past the point where delta * mult passes 2^64 (max_cycles
// leaves the NTP headroom, ~11%, below it), then the timekeeping CPU idle
// (NO_HZ) for 30 ms: until the next tick every read converts such a delta,
// through the vDSO's overflow-safe multiply (6.10+:
// mul_u64_u32_add_u64_shr(), the code no other stage reaches). Before 6.10
// the product wraps, as the era documents. The shape of
// scenarios/pause-past-max-cycles.toml, on the oracle check's TSC.
std::optional<RaceStage> PastMaxCyclesStage(const std::vector<ClockId>& clocks,
                                            const ClockNames& own,
                                            uint64_t tsc_hz, uint64_t seed) {
  absl::StatusOr<timekeeper::Clocksource> tsc =
      timekeeper::MakeTscClocksource(static_cast<uint32_t>(tsc_hz / 1000));
  if (!tsc.ok() || tsc->max_cycles == 0) return std::nullopt;
  // A quarter past max_cycles.
  const uint64_t pause_ns = WholeMsPast(
      static_cast<unsigned __int128>(tsc->max_cycles) * 5, 4, tsc_hz);
  constexpr uint64_t kPauseAt = 500000000;
  constexpr uint64_t kIdleNs = 30000000;
  sim::Scenario s = OnTheMachine(tsc_hz, seed);
  s.name = "default-past-max-cycles";
  s.description = absl::StrFormat(
      "The default job's deltas past max_cycles: the VM pauses for %.1f "
      "minutes, a quarter longer than the TSC clocksource's max_cycles, and "
      "on resume the timekeeping CPU stays idle (NO_HZ) for 30 ms, so the "
      "reads convert such deltas until the next tick.",
      static_cast<double>(pause_ns) / 60e9);
  s.kernel.hz = 250;
  s.events = {Event(sim::EventKind::kPause, kPauseAt, pause_ns),
              Event(sim::EventKind::kIdle, kPauseAt + pause_ns, kIdleNs)};
  s.readers = {ReaderOnCpu0(clocks, 20000)};
  s.run.duration_ns = kPauseAt + pause_ns + kIdleNs + 70000000;
  return RaceStage{
      std::move(s),
      absl::StrFormat("%s, reads after a VM pause past the TSC's max_cycles "
                      "(%.1f minutes), with the timekeeping CPU idle",
                      Names(clocks, own), static_cast<double>(pause_ns) / 60e9),
      "the reads past max_cycles"};
}

// Deltas past 2^32 cycles, well under max_cycles: the timekeeping CPU
// idles (NO_HZ) with no tick for twice 2^32 cycles (3.3 s at 2.6 GHz), so
// the reads convert deltas of up to 2^33 cycles. Every era multiplies the
// whole 64-bit delta; a delta or product truncated to 32 bits reads whole
// seconds short, which the pause past max_cycles (where every pre-6.10 era
// wraps by design) showed only as a different wrong value. The shape of
// scenarios/long-idle.toml.
std::optional<RaceStage> LongIdleStage(const std::vector<ClockId>& clocks,
                                       const ClockNames& own, uint64_t tsc_hz,
                                       uint64_t seed) {
  absl::StatusOr<timekeeper::Clocksource> tsc =
      timekeeper::MakeTscClocksource(static_cast<uint32_t>(tsc_hz / 1000));
  constexpr uint64_t kTwo32 = uint64_t{1} << 32;
  if (!tsc.ok() || tsc->max_cycles <= 4 * kTwo32) return std::nullopt;
  const uint64_t idle_ns = WholeMsPast(2 * kTwo32, 1, tsc_hz);
  constexpr uint64_t kIdleAt = 300000000;
  sim::Scenario s = OnTheMachine(tsc_hz, seed);
  s.name = "default-long-idle";
  s.description = absl::StrFormat(
      "The default job's long deltas: the timekeeping CPU idles (NO_HZ) "
      "with no tick for %.3f s, twice 2^32 cycles of the TSC and well under "
      "its max_cycles, while a reader reads every 200 us.",
      static_cast<double>(idle_ns) / 1e9);
  s.kernel.hz = 250;
  s.events = {Event(sim::EventKind::kIdle, kIdleAt, idle_ns)};
  s.readers = {ReaderOnCpu0(clocks, 200000)};
  s.run.duration_ns = kIdleAt + idle_ns + 100000000;
  return RaceStage{
      std::move(s),
      absl::StrFormat("%s, reads through %.1f s with no tick (deltas past "
                      "2^32 cycles, under max_cycles)",
                      Names(clocks, own), static_cast<double>(idle_ns) / 1e9),
      "the reads past 2^32 cycles"};
}

// The counter's top bit. A TSC 30 ms before it wraps past 2^64 (a large
// TSC offset after a VM migration): bit 63 is set until the wrap, which
// lands halfway between two ticks. 6.5+ masks the read to 63 bits and
// answers from the page throughout; 4.20 to 6.4 send each read with bit
// 63 set to the syscall (`(s64)cycles < 0`, vdso_cycles_ok() from 5.8;
// 4.16 answers from the page), and before 6.5 time stands still at the
// base after the wrap until the next tick (each as the era documents).
// The shape of scenarios/counter-wrap.toml.
RaceStage CounterTopStage(const std::vector<ClockId>& clocks,
                          const ClockNames& own, uint64_t tsc_hz,
                          uint64_t seed) {
  constexpr uint64_t kWrapAtNs = 30000000;
  sim::Scenario s = OnTheMachine(tsc_hz, seed);
  s.name = "default-counter-top";
  s.description =
      "The default job's counter top: CPU 0's TSC starts 30 ms before it "
      "wraps past 2^64 (bit 63 set until then), HZ 250, one reader every "
      "2 us for 60 ms.";
  // tsc_hz is at most 10 GHz (ValidateOracleRunConfig()): no overflow.
  s.machine.counter_start = 0 - tsc_hz / 1000 * (kWrapAtNs / 1000000);
  s.kernel.hz = 250;
  sim::ReaderSpec reader;
  reader.cpu = 0;
  reader.clocks = clocks;
  reader.period_ns = 2000;
  reader.period_jitter_ns = 500;
  s.readers = {reader};
  s.run.duration_ns = 2 * kWrapAtNs;
  return {std::move(s),
          absl::StrFormat("%s, 30 ms of reads with the counter's bit 63 set, "
                          "then 30 ms past its wrap past 2^64",
                          Names(clocks, own)),
          "the reads with the counter's top bit set"};
}

// kvm-clock. The clocksource kvm-clock puts the page in PVCLOCK mode: the
// vDSO scales the TSC with vCPU 0's pvclock page (vread_pvclock()) while
// its stable bit is set, and falls back to the syscall while it is clear.
// Here the hypervisor flips the bit every 1.1 ms while two preempted
// readers race its rewrites: a reader that ignores the bit answers from a
// page it must not use (exact), one that falls back while it is set loses
// the fast path (fast_path). The shape of scenarios/kvm-stable-toggle.toml.
RaceStage KvmClockStage(const std::vector<ClockId>& clocks,
                        const ClockNames& own, uint64_t tsc_hz, uint64_t seed) {
  constexpr uint64_t kToggleNs = 1137000;
  constexpr int kToggles = 17;
  sim::Scenario s = OnTheMachine(tsc_hz, seed);
  s.name = "default-kvm-clock";
  s.description =
      "The default job's kvm-clock: the clocksource kvm-clock (PVCLOCK "
      "mode), a pvclock rewrite every 2 ms and PVCLOCK_TSC_STABLE_BIT "
      "flipped every 1.137 ms, two readers on two CPUs preempted before "
      "one hook in ten, HZ 1000, 20 ms.";
  s.machine.clocksource = "kvm-clock";
  s.machine.pvclock_period_ns = 2000000;
  s.machine.cpus = {sim::CpuCounterSpec{}, sim::CpuCounterSpec{}};
  s.kernel.hz = 1000;
  s.timing.preempt_ppm = 100000;
  s.timing.preempt_max_ns = 5000;
  for (int i = 1; i <= kToggles; ++i) {
    sim::EventSpec e;
    e.kind = sim::EventKind::kPvclockUpdate;
    e.at_ns = kToggleNs * static_cast<uint64_t>(i);
    e.pvclock_stable = i % 2 == 0;
    s.events.push_back(e);
  }
  sim::ReaderSpec fast;
  fast.cpu = 1;
  fast.clocks = clocks;
  fast.period_ns = 1000;
  sim::ReaderSpec slow;
  slow.cpu = 0;
  slow.clocks = clocks;
  slow.period_ns = 3000;
  s.readers = {fast, slow};
  s.run.duration_ns = kToggleNs * (kToggles + 1);
  return {std::move(s),
          absl::StrFormat("%s, 20 ms of two preempted readers on kvm-clock, "
                          "its pvclock page's stable bit flipping",
                          Names(clocks, own)),
          "the reads on kvm-clock"};
}

// A time namespace (CONFIG_TIME_NS). A task in one maps the namespace's
// page where the vvar page was (seq 1, VDSO_CLOCKMODE_TIMENS); lib/vdso
// follows it to do_hres_timens()/do_coarse_timens(), which read the real
// page and add the offsets, and never fall back for it. Two readers in a
// namespace (MONOTONIC 49.75 s behind, BOOTTIME an hour and a second less
// 1 ns ahead), one outside, a stalling writer, an NTP change and a
// settime. The shape of scenarios/time-namespace.toml.
RaceStage TimeNamespaceStage(const std::vector<ClockId>& clocks,
                             const ClockNames& own, uint64_t tsc_hz,
                             uint64_t seed) {
  sim::Scenario s = OnTheMachine(tsc_hz, seed);
  s.name = "default-time-namespace";
  s.description =
      "The default job's time namespace: readers in a namespace whose "
      "MONOTONIC is 49.75 s behind and BOOTTIME 3600.999999999 s ahead "
      "and one outside, against a writer that stalls before one store in "
      "twenty, preempted before one hook in two hundred, HZ 1000, an NTP "
      "frequency change at 20 ms and a settime at 40 ms, 60 ms.";
  s.machine.cpus = {sim::CpuCounterSpec{}, sim::CpuCounterSpec{}};
  s.kernel.hz = 1000;
  s.kernel.boot_offset = Timespec64{50, 0};
  s.kernel.timens_monotonic = Timespec64{-50, 250000000};
  s.kernel.timens_boottime = Timespec64{3600, 999999999};
  s.timing.preempt_ppm = 5000;
  s.timing.preempt_max_ns = 20000;
  s.timing.writer_stall_ppm = 50000;
  s.timing.writer_stall_max_ns = 5000;
  sim::EventSpec ntp;
  ntp.kind = sim::EventKind::kAdjtimexFrequency;
  ntp.at_ns = 20000000;
  ntp.freq_scaled_ppm = int64_t{180} << 16;
  sim::EventSpec settime;
  settime.kind = sim::EventKind::kSetTime;
  settime.at_ns = 40000000;
  settime.realtime = Timespec64{1764470000, 250000000};
  s.events = {ntp, settime};
  sim::ReaderSpec inside;
  inside.cpu = 0;
  inside.clocks = clocks;
  inside.period_ns = 3000;
  inside.timens = true;
  sim::ReaderSpec inside_other = inside;
  inside_other.cpu = 1;
  inside_other.period_ns = 5000;
  sim::ReaderSpec outside;
  outside.cpu = 1;
  outside.clocks = clocks;
  outside.period_ns = 7000;
  s.readers = {inside, inside_other, outside};
  s.run.duration_ns = 60000000;
  return {std::move(s),
          absl::StrFormat("%s, 60 ms of readers in a time namespace and one "
                          "outside, across an NTP change and a settime",
                          Names(clocks, own)),
          "the reads in a time namespace"};
}

// The exhaustive race in a time namespace: do_hres_timens() and
// do_coarse_timens() have seq loops of their own, which the stages above
// race only at random. Across the page's second boundary (the namespace's
// own is elsewhere: a fractional offset), where a sec loaded outside the
// namespace path's loop is a whole second off.
RaceStage ExhaustiveTimeNamespaceStage(const std::vector<ClockId>& clocks,
                                       const ClockNames& own, uint64_t tsc_hz,
                                       uint64_t seed) {
  ClockId clock = clocks.front();
  for (ClockId c : clocks) {
    if (c == kClockMonotonic) clock = c;
  }
  sim::Scenario s = OnTheMachine(tsc_hz, seed);
  s.name = "default-exhaustive-timens";
  s.description = absl::StrFormat(
      "The default job's race in a time namespace whose MONOTONIC is "
      "49.75 s behind: every distinct interleaving of one "
      "clock_gettime(%s) with the first two timekeeper updates after "
      "900 ms of which one carries the page's basetime into a new second.",
      Full(clock, own));
  s.kernel.hz = 250;
  s.kernel.boot_offset = Timespec64{50, 0};
  s.kernel.timens_monotonic = Timespec64{-50, 250000000};
  s.readers = {sim::ReaderSpec{}};
  s.readers[0].clocks = {clock};
  s.readers[0].timens = true;
  s.run.duration_ns = 2000000000;
  s.run.strategy = sim::Strategy::kExhaustive;
  s.run.exhaustive_at_ns = 900000000;
  s.run.exhaustive_updates = 2;
  s.run.exhaustive_rollover = true;
  s.run.exhaustive_reduction = sim::Reduction::kPor;
  return {std::move(s),
          absl::StrFormat("%s in a time namespace, one call against "
                          "every interleaving of the next two updates across "
                          "the page's second boundary",
                          Full(clock, own)),
          "the reads in a time namespace"};
}

}  // namespace

std::vector<RaceStage> DefaultRaceStages(const std::vector<ClockId>& clocks,
                                         uint64_t tsc_hz, uint64_t seed,
                                         bool timens, const ClockNames& own) {
  std::vector<RaceStage> stages;
  // One exhaustive search per clock: the strategy races the first
  // reader's first clock. Across a second boundary (rollover), where a
  // sec loaded outside the seq loop is a whole second off.
  for (ClockId clock : clocks) {
    sim::Scenario s = OnTheMachine(tsc_hz, seed);
    s.name = absl::StrCat("default-exhaustive-",
                          absl::AsciiStrToLower(Short(clock, own)));
    s.description = absl::StrFormat(
        "The default job's race: every distinct interleaving of one "
        "clock_gettime(%s) with the first two timekeeper updates "
        "after 900 ms of which one carries it into a new second.",
        Full(clock, own));
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
         absl::StrFormat("%s, one call against every interleaving of "
                         "the next two updates across a second boundary",
                         Full(clock, own)),
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
      "1000, a TAI offset of 37 s from 20 ms, an NTP frequency change at "
      "50 ms and a suspend of 30 ms at 120 ms.";
  s.machine.cpus = {sim::CpuCounterSpec{}, sim::CpuCounterSpec{}};
  s.kernel.hz = 1000;
  s.timing.preempt_ppm = 200000;
  s.timing.preempt_max_ns = 3000;
  s.timing.writer_stall_ppm = 200000;
  s.timing.writer_stall_max_ns = 5000;
  s.faults.reorder_ppm = 600000;
  sim::EventSpec tai;
  tai.kind = sim::EventKind::kSetTai;
  tai.at_ns = 20000000;
  tai.tai = 37;
  sim::EventSpec ntp;
  ntp.kind = sim::EventKind::kAdjtimexFrequency;
  ntp.at_ns = 50000000;
  ntp.freq_scaled_ppm = int64_t{180} << 16;
  sim::EventSpec suspend;
  suspend.kind = sim::EventKind::kSuspend;
  suspend.at_ns = 120000000;
  suspend.duration_ns = 30000000;
  // The TAI offset and a suspend make TAI and BOOTTIME differ from
  // REALTIME and MONOTONIC, which the oracle check's machine never does: a
  // reader that took one clock's base for the other passed there. The TSC
  // keeps counting in suspend, so resume injects the whole 30 ms (the RTC
  // alone would inject only whole seconds it saw pass: none).
  s.kernel.tsc_nonstop = true;
  s.events = {tai, ntp, suspend};
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
  // 800 ms: a reader missing one smp_rmb() tears only where a reordered
  // load meets a store that landed mid-call; 200 ms missed a tracer's such
  // clock at some seeds (about half), 800 ms at none of those tried.
  s.run.duration_ns = 800000000;
  stages.push_back(
      {std::move(s),
       absl::StrFormat("%s, 800 ms of two preempted readers on two CPUs "
                       "against a stalling writer, relaxed ordering, a TAI "
                       "offset and a suspend",
                       Names(clocks, own)),
       kRaces});
  if (std::vector<ClockId> counted = CounterClocks(clocks, own);
      !counted.empty()) {
    stages.push_back(NegativeMotionStage(counted, own, tsc_hz, seed));
    stages.push_back(SecondBoundaryStage(counted, own, seed));
    if (std::optional<RaceStage> idle =
            LongIdleStage(counted, own, tsc_hz, seed)) {
      stages.push_back(std::move(*idle));
    }
    if (std::optional<RaceStage> past =
            PastMaxCyclesStage(counted, own, tsc_hz, seed)) {
      stages.push_back(std::move(*past));
    }
    stages.push_back(CounterTopStage(counted, own, tsc_hz, seed));
    stages.push_back(KvmClockStage(counted, own, tsc_hz, seed));
  }
  if (timens) {
    stages.push_back(TimeNamespaceStage(clocks, own, tsc_hz, seed));
    stages.push_back(ExhaustiveTimeNamespaceStage(clocks, own, tsc_hz, seed));
  }
  return stages;
}

}  // namespace vdsolab::cli
