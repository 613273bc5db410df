#include "sim/scenario.h"

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "common/limits.h"
#include "common/math64.h"
#include "sim/durations.h"

namespace vdsolab::sim {
namespace {

absl::Status Bad(const std::string& message) {
  return absl::InvalidArgumentError(message);
}

constexpr uint64_t kMaxDurationNs = kMaxSimulatedNs;

}  // namespace

int ReaderId(const Scenario& scenario, size_t index) {
  const int id = scenario.readers[index].id;
  return id >= 0 ? id : static_cast<int>(index);
}

const char* EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kAdjtimexFrequency:
      return "adjtimex_frequency";
    case EventKind::kAdjtimexTick:
      return "adjtimex_tick";
    case EventKind::kSetTime:
      return "settime";
    case EventKind::kIdle:
      return "idle";
    case EventKind::kPause:
      return "pause";
  }
  return "?";
}

const char* StrategyName(Strategy strategy) {
  return strategy == Strategy::kRandom ? "random" : "exhaustive";
}

std::string ClockShortName(ClockId clock) {
  std::string name = ClockName(clock);
  if (absl::StartsWith(name, "CLOCK_")) return name.substr(6);
  return absl::StrFormat("%d", clock);
}

absl::Status ValidateScenario(const Scenario& s) {
  const MachineSpec& m = s.machine;
  if (m.clocksource != "tsc" && m.clocksource != "hpet" &&
      m.clocksource != "acpi_pm") {
    return Bad(absl::StrFormat(
        "machine.clocksource = \"%s\": want \"tsc\", \"hpet\" or \"acpi_pm\"",
        m.clocksource));
  }
  if (m.counter_hz < 1000 || m.counter_hz > 10000000000ull) {
    return Bad(absl::StrFormat("machine.counter_hz = %d: want 1 kHz .. 10 GHz",
                               m.counter_hz));
  }
  if (m.calibrated_hz != 0 &&
      (m.calibrated_hz < 1000 || m.calibrated_hz > 10000000000ull)) {
    return Bad(absl::StrFormat(
        "machine.calibrated_hz = %d: want 0 (= counter_hz) or 1 kHz .. 10 GHz",
        m.calibrated_hz));
  }
  if (m.width_bits < 16 || m.width_bits > 64) {
    return Bad(absl::StrFormat("machine.width_bits = %d: want 16 .. 64",
                               m.width_bits));
  }
  if (m.cpus.empty() || m.cpus.size() > 64) {
    return Bad(
        absl::StrFormat("machine.cpus: %d CPUs, want 1 .. 64", m.cpus.size()));
  }
  for (size_t i = 0; i < m.cpus.size(); ++i) {
    const CpuCounterSpec& c = m.cpus[i];
    if (c.drift_ppb < -100000000 || c.drift_ppb > 100000000) {
      return Bad(absl::StrFormat(
          "machine.cpu[%d].drift_ppb = %d: want within +/-10%% (1e8 ppb)", i,
          c.drift_ppb));
    }
    if (c.wobble_cycles != 0 && c.wobble_period_ns < 2) {
      return Bad(absl::StrFormat(
          "machine.cpu[%d].wobble_period_ns must be >= 2 when wobble_cycles "
          "is set",
          i));
    }
    if (c.wobble_cycles > (1ull << 40) || c.jitter_cycles > (1ull << 40)) {
      return Bad(absl::StrFormat(
          "machine.cpu[%d]: wobble_cycles and jitter_cycles must be < 2^40",
          i));
    }
  }
  const KernelSpec& k = s.kernel;
  if (k.hz < 10 || k.hz > 10000) {
    return Bad(absl::StrFormat("kernel.hz = %d: want 10 .. 10000", k.hz));
  }
  for (auto [ts, name] : {std::pair{k.boot_realtime, "kernel.boot_realtime"},
                          std::pair{k.boot_offset, "kernel.boot_offset"}}) {
    if (ts.tv_sec < 0 || ts.tv_nsec < 0 ||
        ts.tv_nsec >= static_cast<int64_t>(kNsecPerSec) ||
        ts.tv_sec > (int64_t{1} << 33)) {
      return Bad(absl::StrFormat("%s = %s: want 0 <= seconds < 2^33", name,
                                 FormatTimespec(ts)));
    }
  }
  if (k.timekeeping_cpu < 0 ||
      k.timekeeping_cpu >= static_cast<int>(m.cpus.size())) {
    return Bad(absl::StrFormat(
        "kernel.timekeeping_cpu = %d: the machine has CPUs 0..%d",
        k.timekeeping_cpu, m.cpus.size() - 1));
  }
  if (k.hrtimer_res_ns == 0) return Bad("kernel.hrtimer_res_ns must be >= 1");
  const TimingSpec& t = s.timing;
  const uint64_t tick_ns = kNsecPerSec / static_cast<uint64_t>(k.hz);
  if (t.tick_jitter_ns >= tick_ns) {
    return Bad(absl::StrFormat(
        "timing.tick_jitter_ns = %d: must be below the tick period (%d ns)",
        t.tick_jitter_ns, tick_ns));
  }
  if (t.writer_stall_ppm > 1000000 || t.preempt_ppm > 1000000) {
    return Bad(
        "timing.writer_stall_ppm and timing.preempt_ppm are at most "
        "1000000");
  }
  if (t.load_ns > tick_ns || t.counter_read_ns > tick_ns ||
      t.store_ns > tick_ns || t.writer_start_ns > tick_ns ||
      t.syscall_ns > tick_ns) {
    return Bad(
        "timing: load, counter read, store, writer start and syscall "
        "costs must each be shorter than a tick");
  }
  if (t.writer_stall_max_ns > 10 * kNsecPerSec ||
      t.preempt_max_ns > 10 * kNsecPerSec) {
    return Bad("timing: stalls and preemptions are at most 10 s");
  }
  const RunSpec& r = s.run;
  if (r.duration_ns == 0 || r.duration_ns > kMaxDurationNs) {
    return Bad(absl::StrFormat(
        "run.duration = %d ns: want more than 0 and at most 7 days",
        r.duration_ns));
  }
  // run.reader names a variant; the registry (which knows the loaded
  // plugins too) checks it when the run starts.
  if (r.reader.empty()) return Bad("run.reader = \"\": name a variant");
  if (r.exhaustive_updates < 1 || r.exhaustive_updates > 4) {
    return Bad(absl::StrFormat("run.exhaustive_updates = %d: want 1 .. 4",
                               r.exhaustive_updates));
  }
  if (r.strategy == Strategy::kExhaustive &&
      r.exhaustive_at_ns >= r.duration_ns) {
    return Bad("run.exhaustive_at must fall inside run.duration");
  }
  for (size_t i = 0; i < s.events.size(); ++i) {
    const EventSpec& e = s.events[i];
    if (e.at_ns >= r.duration_ns) {
      return Bad(absl::StrFormat(
          "event[%d] (%s) at %d ns is not inside run.duration (%d ns)", i,
          EventKindName(e.kind), e.at_ns, r.duration_ns));
    }
    if (e.kind == EventKind::kAdjtimexFrequency &&
        (e.freq_scaled_ppm < -(500ll << 16) ||
         e.freq_scaled_ppm > (500ll << 16))) {
      return Bad(absl::StrFormat("event[%d].freq_ppm: want -500 .. 500", i));
    }
    if (e.kind == EventKind::kAdjtimexTick &&
        (e.tick_usec < 9000 || e.tick_usec > 11000)) {
      return Bad(absl::StrFormat(
          "event[%d].tick = %d: want 9000 .. 11000 us (the kernel's +/-10%%)",
          i, e.tick_usec));
    }
    if ((e.kind == EventKind::kIdle || e.kind == EventKind::kPause) &&
        (e.duration_ns == 0 || e.duration_ns > kMaxDurationNs)) {
      return Bad(
          absl::StrFormat("event[%d].duration: want > 0 and <= 7 days", i));
    }
    if (e.kind == EventKind::kSetTime &&
        (e.realtime.tv_sec < 0 || e.realtime.tv_nsec < 0 ||
         e.realtime.tv_nsec >= static_cast<int64_t>(kNsecPerSec))) {
      return Bad(absl::StrFormat("event[%d].realtime = %s is not a valid time",
                                 i, FormatTimespec(e.realtime)));
    }
  }
  if (s.readers.empty() || s.readers.size() > 64) {
    return Bad(
        absl::StrFormat("readers: %d readers, want 1 .. 64", s.readers.size()));
  }
  for (size_t i = 0; i < s.readers.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (ReaderId(s, i) == ReaderId(s, j)) {
        return Bad(absl::StrFormat("reader[%d] and reader[%d] share id %d", j,
                                   i, ReaderId(s, i)));
      }
    }
    const ReaderSpec& rd = s.readers[i];
    if (rd.cpu < 0 || rd.cpu >= static_cast<int>(m.cpus.size())) {
      return Bad(
          absl::StrFormat("reader[%d].cpu = %d: the machine has CPUs 0..%d", i,
                          rd.cpu, m.cpus.size() - 1));
    }
    if (rd.clocks.empty()) {
      return Bad(absl::StrFormat("reader[%d].clocks is empty", i));
    }
    if (rd.period_ns == 0 || rd.period_ns > 10 * kNsecPerSec) {
      return Bad(absl::StrFormat(
          "reader[%d].period = %d ns: want more than 0 and at most 10 s", i,
          rd.period_ns));
    }
    if (rd.migrate_ppm > 1000000 || rd.migrate_midcall_ppm > 1000000) {
      return Bad(absl::StrFormat(
          "reader[%d]: migration probabilities are at most 1000000 ppm", i));
    }
  }
  if (s.checks.livelock_budget < 2) {
    return Bad("checks.livelock_budget must be at least 2");
  }
  return absl::OkStatus();
}

}  // namespace vdsolab::sim

namespace vdsolab::sim {

std::vector<std::string> ScenarioWarnings(const Scenario& s) {
  std::vector<std::string> out;
  const uint64_t end = s.run.duration_ns;
  for (size_t i = 0; i < s.events.size(); ++i) {
    const EventSpec& e = s.events[i];
    if (e.at_ns >= end) {
      out.push_back(absl::StrFormat(
          "event[%d] (%s at %s) is at or after the run's end (%s): it never "
          "happens",
          i, EventKindName(e.kind), FormatDurationNs(e.at_ns),
          FormatDurationNs(end)));
    } else if (e.kind == EventKind::kPause && e.at_ns + e.duration_ns > end) {
      out.push_back(absl::StrFormat(
          "event[%d] (pause at %s for %s) lasts past the run's end (%s): no "
          "reader runs after %s",
          i, FormatDurationNs(e.at_ns), FormatDurationNs(e.duration_ns),
          FormatDurationNs(end), FormatDurationNs(e.at_ns)));
    }
  }
  return out;
}

}  // namespace vdsolab::sim
