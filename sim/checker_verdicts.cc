// The checker's verdicts: whether a violated precondition of the design
// or a known kernel behaviour explains a violation (sim/checker.h).

#include "absl/strings/str_format.h"
#include "sim/checker.h"
#include "sim/checker_internal.h"

namespace vdsolab::sim {

using checker_internal::IsCoarse;

namespace {

uint64_t Magnitude(int64_t v) {
  return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

}  // namespace

std::optional<std::string> Checker::BrokenPrecondition(const Seen& s) const {
  const int tk_cpu = scenario_.kernel.timekeeping_cpu;
  // A coarse read uses no counter of its own: only the timekeeper's.
  const int cpu_index = s.read_counter ? s.counter_cpu : tk_cpu;
  const uint64_t when = s.read_counter ? s.counter_ns : s.end_ns;
  const CpuCounterSpec& cpu =
      scenario_.machine.cpus[static_cast<size_t>(cpu_index)];
  // A global counter (HPET, ACPI PM after a clocksource change) reads the
  // same everywhere and steadily: only its wraps can break the design.
  if (IsGlobalCounter(s.source)) {
    if (!s.read_counter) return std::nullopt;
    const __int128 elapsed =
        writer_->sources().Ideal(s.source, tk_cpu, s.counter_ns) -
        s.cycle_last_ideal;
    const uint64_t mask = writer_->sources().Mask(s.source);
    if (elapsed >
        static_cast<__int128>((mask >> 1) + (mask >> 2) + (mask >> 3))) {
      return std::string(
          "the global counter ran more than 7/8 of its range since the "
          "timekeeper last accumulated: the timekeeper cannot see the wraps");
    }
    return std::nullopt;
  }
  bool stepped = false;
  for (const CounterStep& step : cpu.steps) stepped |= step.at_ns <= when;
  const bool unsteady =
      stepped || cpu.jitter_cycles != 0 || cpu.wobble_cycles != 0;
  if (!s.read_counter) {
    if (!unsteady) return std::nullopt;
    return absl::StrFormat(
        "the timekeeping CPU %d's counter does not run steadily (steps, "
        "wobble or jitter in the time model)",
        tk_cpu);
  }
  if (tsc_ && !wide_ && s.counter < s.cycle_last) {
    return absl::StrFormat(
        "the x86 vDSO assumes a 64-bit counter; this one wrapped at 2^%d "
        "(counter %#x < cycle_last %#x)",
        scenario_.machine.width_bits, s.counter, s.cycle_last);
  }
  // The machine's counter, or kvm-clock scaled from it (the hypervisor's
  // pvti promises synchronised TSCs: PVCLOCK_TSC_STABLE_BIT).
  const CounterSources& sources = writer_->sources();
  // The timekeeper must update before the counter wraps: a wider gap (a
  // pause or idle longer than the counter's period) loses whole wraps.
  const __int128 elapsed =
      sources.Ideal(s.source, tk_cpu, s.counter_ns) - s.cycle_last_ideal;
  // The hardware's range (7/8 of the mask, as clocksource registration
  // computes max_raw_delta), whatever the timekeeper was told.
  const uint64_t hw = sources.Mask(s.source);
  if (elapsed > static_cast<__int128>((hw >> 1) + (hw >> 2) + (hw >> 3))) {
    return absl::StrFormat(
        "the counter ran %s cycles since the timekeeper last accumulated, more "
        "than 7/8 of its %d-bit range: the timekeeper cannot see the wraps",
        absl::StrFormat("%d", static_cast<uint64_t>(
                                  elapsed > static_cast<__int128>(UINT64_MAX)
                                      ? UINT64_MAX
                                      : static_cast<uint64_t>(elapsed))),
        scenario_.machine.width_bits);
  }
  // kvm-clock: the vDSO scales every CPU's TSC with vCPU 0's pvclock page
  // and the kernel each CPU's with that vCPU's own, which
  // PVCLOCK_TSC_STABLE_BIT promises is the same thing (synchronised TSCs).
  if (s.source == CounterSource::kKvmClock && s.kvm_skew_cpu >= 0) {
    const bool behind = s.kvm_skew_cycles < 0;
    return absl::StrFormat(
        "CPU %d's TSC is %d cycles %s vCPU 0's, whose pvclock page the vDSO "
        "scales every CPU's with: cross-CPU counter skew under "
        "PVCLOCK_TSC_STABLE_BIT",
        s.kvm_skew_cpu,
        behind ? -static_cast<uint64_t>(s.kvm_skew_cycles)
               : static_cast<uint64_t>(s.kvm_skew_cycles),
        behind ? "behind" : "ahead of");
  }
  // The design needs every CPU's counter to agree with the one the
  // timekeeper reads (synchronised TSCs).
  if (std::optional<std::string> skew = SkewReason(s)) return skew;
  // ...and to run steadily: no steps, wobble or jitter.
  if (unsteady) {
    return absl::StrFormat(
        "CPU %d's counter does not run steadily (steps, wobble or jitter in "
        "the time model)",
        s.counter_cpu);
  }
  // A user-space clock converts the counter from a fixed origin (its
  // calibration, perf's time_zero and cyc2ns offset): it assumes a counter
  // that never wraps, where the kernel's clocks mask every delta.
  const variants::ClockDef* own = variants::FindOwnClock(*variant_, s.clock);
  if (s.counter < boot_counter_ && own != nullptr &&
      own->kind == variants::ClockKind::kUserspace) {
    return absl::StrFormat(
        "%s converts the counter from a fixed origin and assumes it never "
        "wraps; this one wrapped past 2^%d since boot (counter %#x, %#x at "
        "boot)",
        Name(s.clock), scenario_.machine.width_bits, s.counter, boot_counter_);
  }
  return std::nullopt;
}

std::optional<int64_t> Checker::CrossCpuSkew(const Seen& s) const {
  const int tk_cpu = scenario_.kernel.timekeeping_cpu;
  if (!s.read_counter || IsGlobalCounter(s.source) ||
      s.source == CounterSource::kKvmClock || s.counter_cpu == tk_cpu) {
    return std::nullopt;
  }
  const CounterSources& sources = writer_->sources();
  const uint64_t mask = sources.Mask(s.source);
  const uint64_t ahead =
      (s.counter - sources.Read(s.source, tk_cpu, s.counter_ns)) & mask;
  // Past half the counter's range it is behind (as the kernel's
  // clocksource_delta() reads it).
  // Two's complement in the counter's width (C++20: the conversion is
  // modular), so a skew of half the range is no negation overflow.
  return ahead > (mask >> 1) ? static_cast<int64_t>(ahead - mask - 1)
                             : static_cast<int64_t>(ahead);
}

std::optional<std::string> Checker::SkewReason(const Seen& s) const {
  const std::optional<int64_t> skew = CrossCpuSkew(s);
  if (!skew || *skew == 0) return std::nullopt;
  return absl::StrFormat(
      "CPU %d's counter is %d cycles %s the timekeeping CPU %d's: "
      "cross-CPU counter skew%s",
      s.counter_cpu, Magnitude(*skew), *skew < 0 ? "behind" : "ahead of",
      scenario_.kernel.timekeeping_cpu,
      s.negative_motion ? (wide_ ? " (negative motion, clamped to the base "
                                   "time)"
                                 : " (negative motion, read as a near-wrap "
                                   "forward jump)")
                        : "");
}

std::optional<std::string> Checker::PairSkew(const Seen& a,
                                             const Seen& b) const {
  if (a.counter_cpu == b.counter_cpu || a.source != b.source) {
    return std::nullopt;
  }
  const std::optional<int64_t> skew_a = CrossCpuSkew(a);
  const std::optional<int64_t> skew_b = CrossCpuSkew(b);
  if (!skew_a || !skew_b || *skew_a == *skew_b) return std::nullopt;
  // a is the earlier read: its CPU ahead of b's is what lets b's answer
  // fall below a's. Skews past 2^62 of opposite signs: each read's own.
  int64_t ahead = 0;
  if (__builtin_sub_overflow(*skew_a, *skew_b, &ahead)) return std::nullopt;
  std::string motion;
  for (const Seen* s : {&a, &b}) {
    if (!s->negative_motion) continue;
    absl::StrAppendFormat(&motion, "; CPU %d's read: negative motion, %s",
                          s->counter_cpu,
                          wide_ ? "clamped to the base time"
                                : "read as a near-wrap forward jump");
  }
  return absl::StrFormat(
      "CPU %d's counter is %d cycles %s CPU %d's (%+d and %+d against the "
      "timekeeping CPU %d's%s): cross-CPU counter skew",
      a.counter_cpu, Magnitude(ahead), ahead < 0 ? "behind" : "ahead of",
      b.counter_cpu, *skew_a, *skew_b, scenario_.kernel.timekeeping_cpu,
      motion);
}

std::optional<std::pair<Verdict, std::string>> Checker::Explain(
    const Seen& a, const Seen& b) const {
  if ((IsCoarse(a.clock) || IsCoarse(b.clock)) &&
      (a.coarse_off || b.coarse_off)) {
    return std::pair{Verdict::kKnownKernel,
                     std::string(variants::EraOracle::kCoarseOffBySecondWhy)};
  }
  if (a.era_why != nullptr || b.era_why != nullptr) {
    return std::pair{Verdict::kKnownKernel,
                     std::string(a.era_why != nullptr ? a.era_why : b.era_why)};
  }
  // Before 6.15 an adjtimex() could move the coarse clocks back a little.
  // (b is the later read; for one read, a value just below zero.)
  const __int128 back = &a == &b ? -a.value_ns : a.value_ns - b.value_ns;
  if (IsCoarse(b.clock) && a.clock == b.clock) {
    if (const char* why =
            oracle_.ExplainCoarseStepBack(back, b.ntp_generation != 0)) {
      return std::pair{Verdict::kKnownKernel, std::string(why)};
    }
  }
  if (a.wrap_losses != b.wrap_losses) {
    return std::pair{
        Verdict::kPrecondition,
        std::string("between these reads the timekeeper went longer than "
                    "the counter's range without an update (a pause or idle "
                    "past max_raw_delta) and lost whole counter wraps")};
  }
  for (const Seen* s : {&b, &a}) {
    if (auto why = BrokenPrecondition(*s)) {
      // Where the reason is a read's skew against the timekeeping CPU,
      // name the two CPUs whose counters ordered the pair instead.
      if (why == SkewReason(*s)) {
        if (auto pair = PairSkew(a, b)) why = std::move(pair);
      }
      return std::pair{Verdict::kPrecondition, *why};
    }
  }
  return std::nullopt;
}

Checker::KvmSkew Checker::KvmSkewOf(const CallRecord& call,
                                    CounterSource source) const {
  KvmSkew skew;
  if (source != CounterSource::kKvmClock || !call.read_counter) return skew;
  const Hypervisor* hv = writer_->hypervisor();
  if (hv == nullptr) return skew;
  const int tk_cpu = scenario_.kernel.timekeeping_cpu;
  const uint64_t vcpu0_tsc = machine_->Counter(0, call.counter_ns);
  const uint64_t reader_tsc =
      machine_->Counter(call.counter_cpu, call.counter_ns);
  // The reader's scaling of its TSC, and the timekeeper's kvm-clock on its
  // own CPU, against vCPU 0's TSC through the same pvti.
  if (hv->VdsoRead(vcpu0_tsc, call.counter_step_ns) != call.counter ||
      hv->KernelRead(tk_cpu, call.counter_ns) !=
          hv->VdsoRead(vcpu0_tsc, call.counter_ns)) {
    skew.cpu = reader_tsc != vcpu0_tsc ? call.counter_cpu : tk_cpu;
    skew.cycles = static_cast<int64_t>(
        machine_->Counter(skew.cpu, call.counter_ns) - vcpu0_tsc);
  }
  return skew;
}

}  // namespace vdsolab::sim
