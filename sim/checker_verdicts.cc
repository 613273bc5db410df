// The checker's verdicts: whether a violated precondition of the design
// or a known kernel behaviour explains a violation (sim/checker.h).

#include "absl/strings/str_format.h"
#include "sim/checker.h"
#include "sim/checker_internal.h"

namespace vdsolab::sim {

using checker_internal::IsCoarse;

std::optional<std::string> Checker::BrokenPrecondition(const Seen& s) const {
  const int tk_cpu = scenario_.kernel.timekeeping_cpu;
  // A coarse read uses no counter of its own: only the timekeeper's.
  const int cpu_index = s.read_counter ? s.counter_cpu : tk_cpu;
  const uint64_t when = s.read_counter ? s.counter_ns : s.end_ns;
  const CpuCounterSpec& cpu =
      scenario_.machine.cpus[static_cast<size_t>(cpu_index)];
  // A global counter (HPET, ACPI PM after a clocksource change) reads the
  // same everywhere and steadily: only its wraps can break the design.
  if (s.source != CounterSource::kMachine) {
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
  // The timekeeper must update before the counter wraps: a wider gap (a
  // pause or idle longer than the counter's period) loses whole wraps.
  const __int128 elapsed =
      machine_->IdealCounter(tk_cpu, s.counter_ns) - s.cycle_last_ideal;
  // The hardware's range (7/8 of the mask, as clocksource registration
  // computes max_raw_delta), whatever the timekeeper was told.
  const uint64_t hw = writer_->sources().Mask(CounterSource::kMachine);
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
  // The design needs every CPU's counter to agree with the one the
  // timekeeper reads (synchronised TSCs).
  const uint64_t reference = machine_->Counter(tk_cpu, s.counter_ns);
  if (s.counter_cpu != tk_cpu && reference != s.counter) {
    const uint64_t mask = machine_->mask();
    const uint64_t ahead = (s.counter - reference) & mask;
    const bool behind = ahead > (mask >> 1);
    return absl::StrFormat(
        "CPU %d's counter is %d cycles %s the timekeeping CPU %d's: "
        "cross-CPU counter skew%s",
        s.counter_cpu, behind ? ((reference - s.counter) & mask) : ahead,
        behind ? "behind" : "ahead of", tk_cpu,
        s.negative_motion ? (wide_ ? " (negative motion, clamped to the base "
                                     "time)"
                                   : " (negative motion, read as a near-wrap "
                                     "forward jump)")
                          : "");
  }
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
      return std::pair{Verdict::kPrecondition, *why};
    }
  }
  return std::nullopt;
}

}  // namespace vdsolab::sim
