#include "sim/scenario.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/clock_result.h"
#include "common/limits.h"
#include "common/math64.h"
#include "sim/durations.h"
#include "timekeeper/profile.h"
#include "timekeeper/timens.h"
#include "timekeeper/timex_names.h"

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
    case EventKind::kAdjtimex:
      return "adjtimex";
    case EventKind::kSetTai:
      return "set_tai";
    case EventKind::kSetOffset:
      return "set_offset";
    case EventKind::kLeap:
      return "leap";
    case EventKind::kSuspend:
      return "suspend";
    case EventKind::kClocksource:
      return "clocksource";
    case EventKind::kAuxEnable:
      return "aux_enable";
    case EventKind::kAuxDisable:
      return "aux_disable";
    case EventKind::kAuxSettime:
      return "aux_settime";
    case EventKind::kPvclockUpdate:
      return "pvclock_update";
    case EventKind::kResume:
      return "resume";
  }
  return "?";
}

const char* StrategyName(Strategy strategy) {
  return strategy == Strategy::kRandom ? "random" : "exhaustive";
}

const char* ExhaustiveShapeName(ExhaustiveShape shape) {
  switch (shape) {
    case ExhaustiveShape::kOneCall:
      return "one-call";
    case ExhaustiveShape::kTwoCalls:
      return "two-calls";
    case ExhaustiveShape::kTwoReaders:
      return "two-readers";
  }
  return "?";
}

const char* ReductionName(Reduction reduction) {
  return reduction == Reduction::kNone ? "none" : "por";
}

std::string ClockShortName(ClockId clock) {
  std::string name = ClockName(clock);
  if (absl::StartsWith(name, "CLOCK_")) return name.substr(6);
  return absl::StrFormat("%d", clock);
}

absl::StatusOr<timekeeper::TimekeeperProfile> KernelProfile(
    const KernelSpec& kernel) {
  absl::StatusOr<timekeeper::TimekeeperProfile> p =
      timekeeper::ProfileForEra(kernel.era);
  if (!p.ok()) {
    return Bad(absl::StrCat("kernel.era: ", p.status().message()));
  }
  for (const std::string& d : kernel.defects) {
    if (absl::Status st = timekeeper::EnableDefect(d, &*p); !st.ok()) {
      return Bad(absl::StrCat("kernel.defects: ", st.message()));
    }
  }
  for (const std::string& b : kernel.backports) {
    if (absl::Status st = timekeeper::ApplyBackport(b, &*p); !st.ok()) {
      return Bad(absl::StrCat("kernel.backports: ", st.message()));
    }
  }
  return p;
}

absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> ParseReadback(
    const std::vector<std::string>& items) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    int64_t value = 0;
    const std::string name = item.substr(0, eq);
    if (eq == std::string::npos ||
        !absl::SimpleAtoi(item.substr(eq + 1), &value) ||
        !timekeeper::TimexField(timekeeper::Timex{}, name)) {
      return Bad(absl::StrFormat(
          "\"%s\": want \"FIELD=INTEGER\" with FIELD one of %s", item,
          absl::StrJoin(timekeeper::TimexFieldNames(), ", ")));
    }
    out.emplace_back(name, value);
  }
  return out;
}

namespace {

// The checks of the timekeeper events (kAdjtimex and after): what the
// kernel refuses with -EINVAL at any time is refused here, by name; what
// depends on the state at the time is left to the run, which records it.
absl::Status ValidateNewEvent(const Scenario& s, size_t i) {
  const EventSpec& e = s.events[i];
  const KernelSpec& k = s.kernel;
  if (absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> rb =
          ParseReadback(e.expect_readback);
      !rb.ok()) {
    return Bad(absl::StrFormat("event[%d].expect_readback: %s", i,
                               rb.status().message()));
  }
  switch (e.kind) {
    case EventKind::kAdjtimex:
      if (e.clock != kClockRealtime &&
          (e.clock < kClockAux || e.clock > kClockAuxLast)) {
        return Bad(absl::StrFormat(
            "event[%d].clock = %s: clock_adjtime() here takes REALTIME or "
            "an aux clock (AUX+0 .. AUX+7)",
            i, ClockShortName(e.clock)));
      }
      break;
    case EventKind::kSetTai:
      if (e.tai < 0 || e.tai > timekeeper::kMaxTaiOffset) {
        return Bad(absl::StrFormat(
            "event[%d].tai = %d: the kernel ignores ADJ_TAI outside 0 .. "
            "100000 (use kind = \"adjtimex\" with modes = [\"TAI\"] to "
            "try it)",
            i, e.tai));
      }
      break;
    case EventKind::kSetOffset:
      if (e.offset_time.tv_nsec < 0 ||
          e.offset_time.tv_nsec >= static_cast<int64_t>(kNsecPerSec)) {
        return Bad(
            absl::StrFormat("event[%d].offset: not a normalised time", i));
      }
      break;
    case EventKind::kLeap:
      if (e.leap != "insert" && e.leap != "delete") {
        return Bad(absl::StrFormat(
            "event[%d].leap = \"%s\": want \"insert\" or \"delete\"", i,
            e.leap));
      }
      break;
    case EventKind::kSuspend:
      if (e.duration_ns == 0 || e.duration_ns > kMaxDurationNs) {
        return Bad(
            absl::StrFormat("event[%d].duration: want > 0 and <= 7 days", i));
      }
      break;
    case EventKind::kClocksource: {
      const bool kvm = s.machine.clocksource == "kvm-clock";
      if (s.machine.clocksource != "tsc" && !kvm) {
        return Bad(absl::StrFormat(
            "event[%d]: clocksource changes need machine.clocksource = "
            "\"tsc\" or \"kvm-clock\" (the others are modelled as fixed "
            "global counters)",
            i));
      }
      if (e.clocksource != "tsc" && e.clocksource != "hpet" &&
          e.clocksource != "acpi_pm" &&
          !(kvm && e.clocksource == "kvm-clock")) {
        return Bad(absl::StrFormat(
            "event[%d].clocksource = \"%s\": want \"tsc\", \"hpet\"%s or "
            "\"acpi_pm\"",
            i, e.clocksource, kvm ? ", \"kvm-clock\"" : ""));
      }
      break;
    }
    case EventKind::kPvclockUpdate:
      if (s.machine.clocksource != "kvm-clock") {
        return Bad(absl::StrFormat(
            "event[%d]: pvclock_update needs machine.clocksource = "
            "\"kvm-clock\" (a hypervisor's pvclock page)",
            i));
      }
      if (e.tsc_khz != 0 && (e.tsc_khz < 1000 || e.tsc_khz > 10000000)) {
        return Bad(absl::StrFormat(
            "event[%d].tsc_khz = %d: want 0 (unchanged) or 1000 .. 10000000", i,
            e.tsc_khz));
      }
      if (e.tsc_khz != 0 && !e.pvclock_master) {
        return Bad(absl::StrFormat(
            "event[%d].tsc_khz: a new TSC frequency takes a new master clock "
            "(master = true)",
            i));
      }
      break;
    case EventKind::kAuxEnable:
    case EventKind::kAuxDisable:
    case EventKind::kAuxSettime:
      if (e.aux < 0 || e.aux >= kMaxAuxClocks) {
        return Bad(
            absl::StrFormat("event[%d].aux = %d: want 0 .. 7", i, e.aux));
      }
      break;
    case EventKind::kResume:
      return Bad(absl::StrFormat(
          "event[%d]: \"resume\" follows a suspend by itself", i));
    default:
      break;
  }
  const bool aux_event =
      e.kind == EventKind::kAuxEnable || e.kind == EventKind::kAuxDisable ||
      e.kind == EventKind::kAuxSettime ||
      (e.kind == EventKind::kAdjtimex && e.clock != kClockRealtime);
  if (aux_event && !k.aux_clocks) {
    return Bad(absl::StrFormat(
        "event[%d] (%s) uses an aux clock: set kernel.aux_clocks = true", i,
        EventKindName(e.kind)));
  }
  return absl::OkStatus();
}

// The time namespace: proc_timens_set_offset()'s domain for each offset,
// written before the run, when MONOTONIC and BOOTTIME both read
// kernel.boot_offset. The exhaustive strategy explores the plain page only.
absl::Status ValidateTimens(const Scenario& s) {
  const KernelSpec& k = s.kernel;
  for (auto [clock, val, name] :
       {std::tuple{kClockMonotonic, k.timens_monotonic,
                   "kernel.timens_monotonic"},
        std::tuple{kClockBoottime, k.timens_boottime,
                   "kernel.timens_boottime"}}) {
    timekeeper::TimensOffsets ignored;
    const int ret =
        timekeeper::TimensSetOffset(clock, val, k.boot_offset, &ignored);
    if (ret != 0) {
      return Bad(absl::StrFormat(
          "%s = %s: proc_timens_set_offset() returns %s (%s + offset must "
          "stay within 0 .. KTIME_SEC_MAX / 2 seconds)",
          name, FormatTimespec(val), ret == -kErange ? "-ERANGE" : "-EINVAL",
          FormatTimespec(k.boot_offset)));
    }
  }
  if (s.faults.reorder_ppm != 0 && s.run.strategy == Strategy::kExhaustive) {
    return Bad(
        "faults.reorder_ppm: the exhaustive strategy runs loads and stores in "
        "program order; use strategy = \"random\"");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateScenario(const Scenario& s) {
  const MachineSpec& m = s.machine;
  if (m.clocksource != "tsc" && m.clocksource != "kvm-clock" &&
      m.clocksource != "hpet" && m.clocksource != "acpi_pm") {
    return Bad(absl::StrFormat(
        "machine.clocksource = \"%s\": want \"tsc\", \"kvm-clock\", "
        "\"hpet\" or \"acpi_pm\"",
        m.clocksource));
  }
  if (m.clocksource == "kvm-clock" && m.width_bits != 64) {
    return Bad(absl::StrFormat(
        "machine.width_bits = %d: kvm-clock scales a 64-bit TSC",
        m.width_bits));
  }
  if (m.clocksource != "kvm-clock" &&
      (m.pvclock_period_ns != 0 ||
       m.kvmclock_start_ns != MachineSpec{}.kvmclock_start_ns)) {
    return Bad(
        absl::StrFormat("%s: only for machine.clocksource = \"kvm-clock\"",
                        m.pvclock_period_ns != 0 ? "machine.pvclock_period"
                                                 : "machine.kvmclock_start"));
  }
  if (m.pvclock_period_ns != 0 && m.pvclock_period_ns < 1000) {
    return Bad(absl::StrFormat(
        "machine.pvclock_period = %d ns: want 0 (none) or >= 1 us",
        m.pvclock_period_ns));
  }
  if (m.kvmclock_start_ns > (uint64_t{1} << 62)) {
    return Bad(
        absl::StrFormat("machine.kvmclock_start = %d ns: want below 2^62 ns",
                        m.kvmclock_start_ns));
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
  // A start the counter cannot hold would be silently masked.
  if (m.width_bits < 64 && (m.counter_start >> m.width_bits) != 0) {
    // The default (2^36) is no value the user wrote: say what to set.
    const bool by_default = m.counter_start == MachineSpec{}.counter_start;
    return Bad(absl::StrFormat(
        "machine.counter_start = %d%s: more than a %d-bit counter holds (at "
        "most %#x)%s",
        m.counter_start, by_default ? " (the default)" : "", m.width_bits,
        (uint64_t{1} << m.width_bits) - 1,
        by_default ? "; set machine.counter_start for a narrow counter" : ""));
  }
  // Named by the first CPU too many, where the file says it.
  if (m.cpus.empty() || m.cpus.size() > 64) {
    return Bad(absl::StrFormat("machine.cpu[%d]: %d CPUs, want 1 .. 64",
                               std::min<size_t>(m.cpus.size(), 64),
                               m.cpus.size()));
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
          "machine.cpu[%d].wobble_period must be at least 2 ns when "
          "wobble_cycles is set",
          i));
    }
    if (c.wobble_cycles > (1ull << 40) || c.jitter_cycles > (1ull << 40)) {
      return Bad(absl::StrFormat(
          "machine.cpu[%d].%s: must be below 2^40", i,
          c.wobble_cycles > (1ull << 40) ? "wobble_cycles" : "jitter_cycles"));
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
  // timekeeping_init() refuses such a persistent clock (not
  // timespec64_valid_settod()) and boots at 0 with a printk: the run would
  // silently not be the machine asked for.
  if (k.boot_realtime.tv_sec >= kTimeSettodSecMax) {
    return Bad(absl::StrFormat(
        "kernel.boot_realtime = %s: the kernel boots at 0 instead of a "
        "time this late (timekeeping_init() refuses %d s and later, "
        "TIME_SETTOD_SEC_MAX); want below it",
        FormatTimespec(k.boot_realtime), kTimeSettodSecMax));
  }
  if (k.timekeeping_cpu < 0 ||
      k.timekeeping_cpu >= static_cast<int>(m.cpus.size())) {
    return Bad(absl::StrFormat(
        "kernel.timekeeping_cpu = %d: the machine has CPUs 0..%d",
        k.timekeeping_cpu, m.cpus.size() - 1));
  }
  if (k.hrtimer_res_ns == 0) return Bad("kernel.hrtimer_res_ns must be >= 1");
  absl::StatusOr<timekeeper::TimekeeperProfile> profile = KernelProfile(k);
  if (!profile.ok()) return profile.status();
  if (k.aux_clocks && !profile->aux_clocks) {
    return Bad(absl::StrFormat(
        "kernel.aux_clocks: the aux clocks came with 6.17 (kernel.era = "
        "\"%s\")",
        k.era));
  }
  const TimingSpec& t = s.timing;
  const uint64_t tick_ns = kNsecPerSec / static_cast<uint64_t>(k.hz);
  if (t.tick_jitter_ns >= tick_ns) {
    return Bad(absl::StrFormat(
        "timing.tick_jitter = %d ns: must be below the tick period (%d ns)",
        t.tick_jitter_ns, tick_ns));
  }
  if (t.writer_stall_ppm > 1000000 || t.preempt_ppm > 1000000) {
    return Bad(absl::StrFormat(
        "timing.%s: want at most 1000000",
        t.writer_stall_ppm > 1000000 ? "writer_stall_ppm" : "preempt_ppm"));
  }
  // Each message names its key as the file spells it, so that the error
  // points at the line that set it.
  const std::pair<const char*, uint64_t> costs[] = {
      {"load", t.load_ns},
      {"counter_read", t.counter_read_ns},
      {"store", t.store_ns},
      {"writer_start", t.writer_start_ns},
      {"syscall", t.syscall_ns}};
  for (const auto& [key, ns] : costs) {
    if (ns > tick_ns) {
      return Bad(absl::StrFormat(
          "timing.%s = %d ns: a cost must be shorter than a tick (%d ns)", key,
          ns, tick_ns));
    }
  }
  const std::pair<const char*, uint64_t> bounds[] = {
      {"writer_stall_max", t.writer_stall_max_ns},
      {"preempt_max", t.preempt_max_ns}};
  for (const auto& [key, ns] : bounds) {
    if (ns > 10 * kNsecPerSec) {
      return Bad(
          absl::StrFormat("timing.%s = %d ns: want at most 10 s", key, ns));
    }
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
  if (r.exhaustive_rollover && r.strategy != Strategy::kExhaustive) {
    return Bad("run.exhaustive_rollover: needs run.strategy = \"exhaustive\"");
  }
  if (r.strategy == Strategy::kExhaustive &&
      r.exhaustive_at_ns >= r.duration_ns) {
    return Bad("run.exhaustive_at must fall inside run.duration");
  }
  if (r.exhaustive_shape == ExhaustiveShape::kTwoReaders &&
      s.readers.size() < 2) {
    return Bad(
        "run.exhaustive_shape = \"two-readers\": the scenario needs a second "
        "[[reader]]");
  }
  for (size_t i = 0; i < s.events.size(); ++i) {
    const EventSpec& e = s.events[i];
    if (e.at_ns >= r.duration_ns) {
      return Bad(absl::StrFormat(
          "event[%d].at = %d ns (%s): not inside run.duration (%d ns)", i,
          e.at_ns, EventKindName(e.kind), r.duration_ns));
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
    if (absl::Status st = ValidateNewEvent(s, i); !st.ok()) return st;
  }
  if (s.readers.empty() || s.readers.size() > 64) {
    return Bad(absl::StrFormat("reader[%d]: %d readers, want 1 .. 64",
                               std::min<size_t>(s.readers.size(), 64),
                               s.readers.size()));
  }
  for (size_t i = 0; i < s.readers.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (ReaderId(s, i) == ReaderId(s, j)) {
        return Bad(absl::StrFormat("reader[%d].id = %d: reader[%d] has it too",
                                   i, ReaderId(s, i), j));
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
  return ValidateTimens(s);
}

}  // namespace vdsolab::sim

namespace vdsolab::sim {

std::vector<std::string> ScenarioWarnings(const Scenario& s) {
  std::vector<std::string> out;
  const uint64_t end = s.run.duration_ns;
  // Plain enumeration grows by two orders of magnitude an update
  // (docs/benchmarks.md); the run stops at ExploreOptions' 50 million.
  if (s.run.strategy == Strategy::kExhaustive &&
      s.run.exhaustive_reduction == Reduction::kNone &&
      s.run.exhaustive_updates >= 3) {
    out.push_back(absl::StrFormat(
        "run.exhaustive_updates = %d without reduction: plain enumeration "
        "runs to millions of interleavings (one MONOTONIC call: 8.5 million "
        "against 3 updates, 283 million against 4; the run stops at 50 "
        "million, after minutes to hours); run.exhaustive_reduction = "
        "\"por\" runs each distinct state once (125 times fewer executions "
        "at 3 updates)",
        s.run.exhaustive_updates));
  }
  // The random strategy starts each reader within its first period.
  for (size_t i = 0;
       s.run.strategy == Strategy::kRandom && i < s.readers.size(); ++i) {
    if (s.readers[i].period_ns >= end) {
      out.push_back(absl::StrFormat(
          "reader[%d].period (%s) is not shorter than the run (%s): it may "
          "make one call or none",
          i, FormatDurationNs(s.readers[i].period_ns), FormatDurationNs(end)));
    }
  }
  for (size_t c = 0; c < s.machine.cpus.size(); ++c) {
    for (size_t k = 0; k < s.machine.cpus[c].steps.size(); ++k) {
      const CounterStep& step = s.machine.cpus[c].steps[k];
      if (step.at_ns >= end) {
        out.push_back(absl::StrFormat(
            "machine.cpu[%d].steps[%d] (at %s) is at or after the run's end "
            "(%s): it never happens",
            c, k, FormatDurationNs(step.at_ns), FormatDurationNs(end)));
      }
    }
  }
  for (size_t i = 0; i < s.events.size(); ++i) {
    const EventSpec& e = s.events[i];
    if (e.at_ns >= end) {
      out.push_back(absl::StrFormat(
          "event[%d] (%s at %s) is at or after the run's end (%s): it never "
          "happens",
          i, EventKindName(e.kind), FormatDurationNs(e.at_ns),
          FormatDurationNs(end)));
    } else if ((e.kind == EventKind::kPause || e.kind == EventKind::kSuspend) &&
               e.at_ns + e.duration_ns > end) {
      // What starts after it never happens either.
      std::vector<std::string> lost;
      for (size_t j = 0; j < s.events.size(); ++j) {
        if (j != i && s.events[j].at_ns > e.at_ns && s.events[j].at_ns < end) {
          lost.push_back(absl::StrFormat("event[%d]", j));
        }
      }
      out.push_back(absl::StrFormat(
          "event[%d] (%s at %s for %s) lasts past the run's end (%s): no "
          "reader runs after %s%s",
          i, EventKindName(e.kind), FormatDurationNs(e.at_ns),
          FormatDurationNs(e.duration_ns), FormatDurationNs(end),
          FormatDurationNs(e.at_ns),
          lost.empty() ? ""
                       : absl::StrCat(", and ", absl::StrJoin(lost, ", "),
                                      lost.size() == 1 ? " never happens"
                                                       : " never happen")));
    }
  }
  // Nothing runs in a suspended machine or a paused VM, but the writer runs
  // an event at its time regardless: the clocks after it follow no history
  // a real machine can have (docs/scenarios.md).
  for (size_t w = 0; w < s.events.size(); ++w) {
    const EventSpec& win = s.events[w];
    // One outlasting the run is warned of above: what starts inside it
    // never happens.
    if ((win.kind != EventKind::kPause && win.kind != EventKind::kSuspend) ||
        win.at_ns + win.duration_ns > end) {
      continue;
    }
    const bool suspend = win.kind == EventKind::kSuspend;
    for (size_t i = 0; i < s.events.size(); ++i) {
      const EventSpec& e = s.events[i];
      if (i == w || e.at_ns < win.at_ns || e.at_ns >= end ||
          e.at_ns - win.at_ns >= win.duration_ns ||
          (e.at_ns == win.at_ns && i < w)) {
        continue;
      }
      out.push_back(absl::StrFormat(
          "event[%d] (%s at %s) falls inside event[%d] (%s at %s for %s): no "
          "task runs while %s, yet vdsolab runs it at %s, so the clocks after "
          "it follow no history a real machine can have (move it to %s or "
          "later%s)",
          i, EventKindName(e.kind), FormatDurationNs(e.at_ns), w,
          EventKindName(win.kind), FormatDurationNs(win.at_ns),
          FormatDurationNs(win.duration_ns),
          suspend ? "the machine is suspended" : "the VM is paused",
          FormatDurationNs(e.at_ns),
          FormatDurationNs(win.at_ns + win.duration_ns),
          suspend ? "" : "; an idle event stops the ticks while tasks run"));
    }
  }
  return out;
}

}  // namespace vdsolab::sim
