#include "sim/run_report.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/math64.h"

namespace vdsolab::sim {
namespace {

std::string Seconds(uint64_t ns) {
  return absl::StrFormat("%d.%09d", ns / kNsecPerSec, ns % kNsecPerSec);
}

// A signed 128-bit count in decimal.
std::string SignedInt(__int128 v) {
  const bool neg = v < 0;
  unsigned __int128 m = static_cast<unsigned __int128>(neg ? -v : v);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + m % 10));
    m /= 10;
  } while (m != 0);
  return (neg ? "-" : "") + digits;
}

std::string SignedSeconds(__int128 ns) {
  const bool neg = ns < 0;
  const unsigned __int128 m = static_cast<unsigned __int128>(neg ? -ns : ns);
  return absl::StrFormat("%s%s.%09d", neg ? "-" : "",
                         SignedInt(static_cast<__int128>(m / 1000000000)),
                         static_cast<uint64_t>(m % 1000000000));
}

// A syscall event's expectation was not met.
bool FailedOnEvents(const RunResult& r) {
  for (const EventOutcome& o : r.outcomes) {
    if (!o.mismatches.empty()) return true;
  }
  return false;
}

bool HasKnown(const std::array<PropertyStats, kNumProperties>& stats) {
  for (const PropertyStats& s : stats) {
    if (s.known_kernel != 0) return true;
  }
  return false;
}

// The verdict line of a failed run: what failed. Under --accept=known only
// defects fail a run; known behaviour alone fails it without, and that
// flag passes it; a run may also fail on an event's expectation, the
// timekeeper model's consistency or a kernel tree's difference.
const char* FailLine(const RunResult& r) {
  uint64_t defects = 0, known = 0;
  for (const PropertyStats& st : r.stats) {
    defects += st.defects;
    known += st.known_kernel;
  }
  const bool elsewhere = FailedOnEvents(r) || !r.timekeeper_findings.empty() ||
                         !r.timekeeping_difference.empty();
  if (defects != 0) {
    return known != 0 ? "FAIL: the run found defects (and known kernel "
                        "behaviours)."
                      : "FAIL: the run found defects.";
  }
  if (known != 0 && !elsewhere) {
    return "FAIL: the run found known kernel behaviours (documented ones: "
           "--accept=known passes them).";
  }
  if (!FailedOnEvents(r) && !r.timekeeping_difference.empty()) {
    return "FAIL: the kernel tree's timekeeper and the model differ (the "
           "writer's first difference above).";
  }
  if (FailedOnEvents(r)) {
    return "FAIL: a syscall event did not return what the scenario expects.";
  }
  if (!r.timekeeper_findings.empty()) {
    return "FAIL: the timekeeper's state broke its own consistency (the "
           "findings above).";
  }
  return "FAIL: the run found defects or known kernel behaviours.";
}

}  // namespace

std::string FormatTraceSteps(
    const std::vector<TraceStep>& steps,
    const std::function<std::string(const TraceStep&)>& line) {
  constexpr size_t kAll = 200, kHead = 120, kTail = 40;
  std::string o;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps.size() > kAll && i == kHead) {
      absl::StrAppendFormat(&o,
                            "  ... %d steps not shown (`vdsolab replay FILE "
                            "--trace=OUT.json` writes every one)\n",
                            steps.size() - kHead - kTail);
      i = steps.size() - kTail;
    }
    o += line(steps[i]);
  }
  return o;
}

std::string FormatChoices(const std::vector<int>& choices) {
  constexpr size_t kRun = 8;
  std::vector<std::string> parts;
  for (size_t i = 0; i < choices.size();) {
    size_t j = i;
    while (j < choices.size() && choices[j] == choices[i]) ++j;
    if (j - i >= kRun) {
      parts.push_back(absl::StrFormat("%d (x%d)", choices[i], j - i));
    } else {
      for (size_t k = i; k < j; ++k) parts.push_back(absl::StrCat(choices[k]));
    }
    i = j;
  }
  return absl::StrJoin(parts, ", ");
}

const Violation* FirstFailure(const RunResult& result) {
  for (const Violation& v : result.violations) {
    if (v.verdict != Verdict::kPrecondition) return &v;
  }
  return nullptr;
}

std::string FormatRunReport(const Scenario& s, const RunResult& r) {
  std::string o;
  const MachineSpec& m = s.machine;
  absl::StrAppendFormat(
      &o,
      "vdsolab run: scenario \"%s\", seed %d, strategy %s, variant %s\n"
      "machine: %d CPU(s), %s counter %d Hz, %d-bit; HZ=%d; %s s simulated%s\n"
      "writer: %d updates; readers: %d calls (%d answered by the vDSO, %d by "
      "the syscall, %d errors)\n",
      s.name, s.run.seed, StrategyName(s.run.strategy), s.run.reader,
      m.cpus.size(), m.clocksource, m.counter_hz, m.width_bits, s.kernel.hz,
      Seconds(r.simulated_ns),
      r.stopped_early
          ? r.stop_reason.empty()
                ? std::string(" (stopped early)")
                : absl::StrFormat(" (stopped early: %s)", r.stop_reason)
          : std::string(),
      r.updates, r.coverage.calls, r.coverage.vdso_answers,
      r.coverage.fallbacks, r.coverage.errors);
  const Coverage& c = r.coverage;
  absl::StrAppendFormat(
      &o,
      "coverage: %d retried, %d raced a writer, %d preempted, %d migrated "
      "(%d mid-call), %d negative motion, %d beyond max_cycles, %d after a "
      "counter wrap, %d cross-CPU counter reads, %d livelocks\n\n",
      c.retries, c.raced, c.preemptions, c.migrations, c.midcall_migrations,
      c.negative_motion, c.beyond_max_cycles, c.counter_wrapped,
      c.cross_cpu_reads, c.livelocks);
  if (c.reordered_loads != 0) {
    // Only under faults.reorder_ppm: other reports stay as they are.
    absl::StrAppendFormat(&o,
                          "relaxed ordering: %d loads saw the page as it was "
                          "before stores that had landed since the reader's "
                          "last barrier\n\n",
                          c.reordered_loads);
  }
  if (m.clocksource == "kvm-clock") {
    // Only on kvm-clock machines: other reports stay as they are.
    absl::StrAppendFormat(&o,
                          "kvm-clock: %d calls read the pvclock page, %d of "
                          "them while a pvclock rewrite's stores landed\n\n",
                          c.pvclock_reads, c.pvclock_raced);
  }
  if (c.timens_calls != 0) {
    // Only with readers in a time namespace: other reports stay as they are.
    absl::StrAppendFormat(&o,
                          "time namespace: %d calls judged against the "
                          "syscall plus the namespace's offsets\n\n",
                          c.timens_calls);
  }
  absl::StrAppendFormat(&o, "%-3s %-12s %10s %9s %14s %13s\n", "#", "property",
                        "checked", "defects", "preconditions", "known-kernel");
  for (int i = 0; i < kNumProperties; ++i) {
    const PropertyStats& st = r.stats[static_cast<size_t>(i)];
    absl::StrAppendFormat(&o, "%-3d %-12s %10d %9d %14d %13d\n", i + 1,
                          PropertyName(static_cast<Property>(i + 1)),
                          st.checked, st.defects, st.preconditions,
                          st.known_kernel);
  }
  if (!r.outcomes.empty()) {
    // The syscall events, as the kernel answered them.
    absl::StrAppendFormat(&o, "\nsyscall events:\n");
    for (const EventOutcome& e : r.outcomes) {
      absl::StrAppendFormat(&o, "  %s s  event[%d] %s = %d%s\n",
                            Seconds(e.at_ns), e.event, e.what, e.ret,
                            e.mismatches.empty() ? "" : "  [MISMATCH]");
      for (const std::string& mismatch : e.mismatches) {
        absl::StrAppendFormat(&o, "      %s\n", mismatch);
      }
    }
  }
  if (!r.timekeeper_findings.empty()) {
    absl::StrAppendFormat(&o,
                          "\ntimekeeper state and its publication "
                          "against independent computations: "
                          "[MISMATCH]\n");
    for (const std::string& f : r.timekeeper_findings) {
      absl::StrAppendFormat(&o, "  %s\n", f);
    }
  }
  if (!r.timekeeping.empty()) {
    // Only when a kernel tree's timekeeper published the page.
    absl::StrAppendFormat(
        &o,
        "\nwriter: %s published the page; %d operations ran on it and on "
        "the model: %s\n",
        r.timekeeping, r.timekeeping_operations,
        r.timekeeping_difference.empty()
            ? "no difference"
            : "they differ [MISMATCH]\n  first difference: " +
                  r.timekeeping_difference);
  }
  if (!r.divergence.empty()) {
    absl::StrAppendFormat(&o,
                          "\nclocks without a kernel oracle, against "
                          "CLOCK_MONOTONIC_RAW at the same counter values:\n");
    for (const auto& [clock, d] : r.divergence) {
      absl::StrAppendFormat(
          &o,
          "  %-18s %8d reads; after %s s of RAW: %s ns (%.1f ppb); max "
          "|divergence| %s ns\n",
          d.name, d.samples, SignedSeconds(d.span_ns), SignedInt(d.last_ns),
          d.ppb(), SignedInt(d.max_abs_ns));
    }
  }
  if (!r.violations.empty()) {
    // One line per property and verdict: how many, and the first example.
    absl::StrAppendFormat(&o, "\nviolations:\n");
    for (int i = 0; i < kNumProperties; ++i) {
      const Property p = static_cast<Property>(i + 1);
      const PropertyStats& st = r.stats[static_cast<size_t>(i)];
      for (const auto& [verdict, count] :
           {std::pair{Verdict::kDefect, st.defects},
            std::pair{Verdict::kKnownKernel, st.known_kernel},
            std::pair{Verdict::kPrecondition, st.preconditions}}) {
        if (count == 0) continue;
        const Violation* first = nullptr;
        for (const Violation& v : r.violations) {
          if (v.property == p && v.verdict == verdict) {
            first = &v;
            break;
          }
        }
        absl::StrAppendFormat(&o, "  [%s] %s: %d call(s)", VerdictName(verdict),
                              PropertyName(p), count);
        if (first == nullptr) {
          o += "\n";
          continue;
        }
        absl::StrAppendFormat(
            &o, "; first: reader %d call %d at %s s: %s\n    %s\n",
            first->reader, first->reader_call, Seconds(first->t_ns), first->why,
            first->detail);
      }
    }
  }
  absl::StrAppendFormat(
      &o, "\n%s\n",
      r.failed ? FailLine(r)
      // Ctrl-C: the part that ran is too short to say PASS for the run.
      : r.interrupted
          ? "STOPPED: interrupted before the end; nothing failed in the "
            "part that ran, which is no verdict."
      // Cut at a budget: the same, and the exit status says so (1).
      : r.stopped_early
          ? "INCOMPLETE: the run stopped early; nothing failed in the part "
            "that ran, which is no verdict."
      : HasKnown(r.stats)
          ? "PASS: no defects (known kernel behaviours accepted)."
          : (r.violations.empty()
                 ? "PASS: every property held."
                 : "PASS: every property held where its preconditions "
                   "did."));
  return o;
}

namespace {

// What an exhaustive run raced: one call (the original line), or two.
std::string ExploreWhat(const Scenario& s, const ExploreResult& r) {
  const std::string from = absl::StrFormat(
      "against %d update(s) (%d stores) from %s s", r.updates, r.stores,
      absl::StrFormat("%d.%09d", r.start_ns / kNsecPerSec,
                      r.start_ns % kNsecPerSec));
  switch (r.shape) {
    case ExhaustiveShape::kOneCall:
      return absl::StrFormat("one clock_gettime(%s) on CPU %d %s", r.clock_name,
                             s.readers[0].cpu, from);
    case ExhaustiveShape::kTwoCalls:
      return absl::StrFormat(
          "two consecutive clock_gettime(%s) calls of one reader on CPU %d "
          "(the second 1 ns after the first returned) %s",
          r.clock_name, s.readers[0].cpu, from);
    case ExhaustiveShape::kTwoReaders:
      return absl::StrFormat(
          "clock_gettime(%s) by reader %d on CPU %d, then clock_gettime(%s) "
          "by reader %d on CPU %d (1 ns after the first returned) %s",
          r.clock_name, ReaderId(s, 0), s.readers[0].cpu, r.second_clock_name,
          ReaderId(s, 1), r.second_cpu, from);
  }
  return from;
}

// The reduction's line: what it explored against plain enumeration.
std::string ReductionLine(const ExploreResult& r) {
  if (r.reduction == Reduction::kNone) {
    return absl::StrFormat("reduction: none (plain enumeration: %d)\n",
                           r.plain_interleavings);
  }
  const uint64_t ran = r.interleavings + r.cut;
  return absl::StrFormat(
      "reduction: partial-order (por): %d executions (%d checked, %d cut "
      "short at a state already explored); plain enumeration needs %s%d "
      "(%.1fx)\n",
      ran, r.interleavings, r.cut, r.complete ? "" : "at least ",
      r.plain_interleavings,
      ran > 0 ? static_cast<double>(r.plain_interleavings) /
                    static_cast<double>(ran)
              : 0.0);
}

std::string NsLine(const TraceStep& step) {
  return absl::StrFormat("  %d ns  %s\n", step.t_ns, step.what);
}

void AppendCall(const char* which, const CallRecord& c, std::string* o) {
  absl::StrAppendFormat(o, "%s (reader %d, CPU %d): %s\n", which, c.reader,
                        c.cpu_start,
                        c.result  ? FormatClockResult(*c.result)
                        : c.fault ? vdso::DescribeFault(*c.fault)
                                  : std::string("no answer"));
  absl::StrAppend(o, FormatTraceSteps(c.trace, NsLine));
}

}  // namespace

std::string FormatExploreReport(const Scenario& s, const ExploreResult& r) {
  const bool plain_shape =
      r.shape == ExhaustiveShape::kOneCall && r.reduction == Reduction::kNone;
  std::string o;
  absl::StrAppendFormat(
      &o,
      "vdsolab run: scenario \"%s\", seed %d, strategy exhaustive, variant "
      "%s\n"
      "%s\n%s"
      "%d distinct interleavings explored%s; %d failing\n",
      s.name, s.run.seed, s.run.reader, ExploreWhat(s, r),
      plain_shape ? "" : ReductionLine(r), r.interleavings,
      r.complete ? std::string(" (all of them)")
      : r.stop_reason.empty()
          ? std::string(" (stopped early)")
          : absl::StrFormat(" (stopped early: %s)", r.stop_reason),
      r.failing);
  if (!s.variant.kernel_time.empty()) {
    // A random run compares the tree's timekeeper with the model after
    // every operation; an exhaustive one only races its stores.
    absl::StrAppendFormat(
        &o,
        "note: the kernel tree's timekeeper (--kernel-time) published the "
        "page; an exhaustive run races its stores against the reader but "
        "does not compare its state with the model's (docs/ktime.md): a "
        "random scenario (scenarios/relaxed-ordering.toml) does, after every "
        "operation\n");
  }
  if (r.entry_points_checked != 0) {
    absl::StrAppendFormat(
        &o,
        "other entry points (gettimeofday, time, clock_getres) on the page "
        "before the raced updates: %d answers checked, %d wrong\n",
        r.entry_points_checked, r.entry_points_wrong);
    for (const Violation& v : r.entry_point_violations) {
      absl::StrAppendFormat(&o, "  [%s] %s: %s\n    %s\n",
                            VerdictName(v.verdict), PropertyName(v.property),
                            v.why, v.detail);
    }
  }
  if (!r.minimal && !r.entry_point_violations.empty()) {
    absl::StrAppendFormat(&o,
                          "\nFAIL: %d answer(s) of the other entry points "
                          "are wrong; no interleaving explored failed.\n",
                          r.entry_points_wrong);
    return o;
  }
  if (!r.minimal) {
    absl::StrAppendFormat(
        &o, "\n%s\n",
        r.interrupted ? "STOPPED: interrupted before the end; no "
                        "interleaving explored failed, which is no "
                        "verdict."
        : !r.complete
            ? "INCOMPLETE: the search stopped before it explored every "
              "interleaving; none it explored failed, which is no verdict "
              "for the rest (docs/scenarios.md: the search's budget)."
        : HasKnown(r.stats) ? "PASS: no interleaving shows a defect (known "
                              "kernel behaviours accepted)."
                            : "PASS: no interleaving violates a property.");
    return o;
  }
  absl::StrAppendFormat(
      &o,
      "\nminimal failing interleaving (%d mid-call landing(s)), choices "
      "[%s]:\n",
      r.minimal_splits, FormatChoices(*r.minimal));
  for (const Violation& v : r.minimal_violations) {
    absl::StrAppendFormat(&o, "  [%s] %s: %s\n    %s\n", VerdictName(v.verdict),
                          PropertyName(v.property), v.why, v.detail);
  }
  if (r.minimal_first_call) {
    AppendCall("first call", *r.minimal_first_call, &o);
    if (!r.minimal_page.empty()) {
      absl::StrAppendFormat(
          &o, "page at the second call's counter read (non-zero fields):\n%s",
          r.minimal_page);
    }
    AppendCall("second call", r.minimal_call, &o);
  } else {
    if (!r.minimal_page.empty()) {
      absl::StrAppendFormat(&o,
                            "page at the counter read (non-zero fields):\n%s",
                            r.minimal_page);
    }
    absl::StrAppend(&o, FormatTraceSteps(r.minimal_call.trace, NsLine));
  }
  absl::StrAppendFormat(&o,
                        "\nFAIL: %d of %d interleavings violate a "
                        "property.\n",
                        r.failing, r.interleavings);
  return o;
}

}  // namespace vdsolab::sim
