#include "sim/run_report.h"

#include <algorithm>

#include "absl/strings/str_format.h"
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

bool SameFailure(const Violation& a, const Violation& b) {
  return a.property == b.property && a.reader == b.reader &&
         a.reader_call == b.reader_call;
}

// Whether running `s` shows `failure` again.
// Roughly how many calls a run of `s` makes (pauses stop the readers).
uint64_t EstimatedCalls(const Scenario& s) {
  uint64_t paused = 0;
  for (const EventSpec& e : s.events) {
    if (e.kind == EventKind::kPause && e.at_ns < s.run.duration_ns) {
      paused += std::min(e.duration_ns, s.run.duration_ns - e.at_ns);
    }
  }
  const uint64_t active =
      s.run.duration_ns - std::min(paused, s.run.duration_ns);
  uint64_t calls = 0;
  for (const ReaderSpec& r : s.readers) calls += active / r.period_ns + 1;
  return calls;
}

bool Shows(const Scenario& s, const variants::Variant& variant,
           const Violation& failure) {
  RunOptions options;
  options.stop_at_first_failure = false;
  absl::StatusOr<RunResult> r = RunRandom(s, variant, options);
  if (!r.ok()) return false;
  for (const Violation& v : r->violations) {
    if (v.verdict != Verdict::kPrecondition && SameFailure(v, failure)) {
      return true;
    }
  }
  return false;
}

}  // namespace

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
      Seconds(r.simulated_ns), r.stopped_early ? " (stopped early)" : "",
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
  absl::StrAppendFormat(&o, "%-3s %-12s %10s %9s %14s %13s\n", "#", "property",
                        "checked", "defects", "preconditions", "known-kernel");
  for (int i = 0; i < kNumProperties; ++i) {
    const PropertyStats& st = r.stats[static_cast<size_t>(i)];
    absl::StrAppendFormat(&o, "%-3d %-12s %10d %9d %14d %13d\n", i + 1,
                          PropertyName(static_cast<Property>(i + 1)),
                          st.checked, st.defects, st.preconditions,
                          st.known_kernel);
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
    absl::StrAppendFormat(&o, "\nviolations (first %d):\n",
                          r.violations.size());
    for (const Violation& v : r.violations) {
      absl::StrAppendFormat(
          &o, "  [%s] %s: reader %d call %d at %s s: %s\n    %s\n",
          VerdictName(v.verdict), PropertyName(v.property), v.reader,
          v.reader_call, Seconds(v.t_ns), v.why, v.detail);
    }
  }
  absl::StrAppendFormat(
      &o, "\n%s\n",
      r.failed ? "FAIL: the run found defects or known kernel behaviours."
               : (r.violations.empty()
                      ? "PASS: every property held."
                      : "PASS: every property held where its preconditions "
                        "did."));
  return o;
}

absl::StatusOr<Scenario> MinimizeFailure(const Scenario& scenario,
                                         const variants::Variant& variant,
                                         const Violation& failure) {
  Scenario best = scenario;
  best.replay = ReplaySpec{};
  // End the run right after the failing call starts.
  Scenario cut = best;
  cut.run.duration_ns = failure.t_ns + 1;
  cut.events.erase(std::remove_if(cut.events.begin(), cut.events.end(),
                                  [&](const EventSpec& e) {
                                    return e.at_ns >= cut.run.duration_ns;
                                  }),
                   cut.events.end());
  if (Shows(cut, variant, failure)) best = cut;
  // Drop readers the failure does not need (ids keep their randomness).
  for (size_t i = best.readers.size(); i-- > 0;) {
    if (best.readers.size() == 1 || ReaderId(best, i) == failure.reader)
      continue;
    Scenario fewer = best;
    for (size_t j = 0; j < fewer.readers.size(); ++j) {
      fewer.readers[j].id = ReaderId(best, j);
    }
    fewer.readers.erase(fewer.readers.begin() + static_cast<std::ptrdiff_t>(i));
    if (Shows(fewer, variant, failure)) best = fewer;
  }
  // Drop events it does not need, unless that makes the run much longer
  // (without a pause, the readers would run through it).
  for (size_t i = best.events.size(); i-- > 0;) {
    Scenario fewer = best;
    fewer.events.erase(fewer.events.begin() + static_cast<std::ptrdiff_t>(i));
    if (EstimatedCalls(fewer) > 2 * EstimatedCalls(best) + 1000) continue;
    if (Shows(fewer, variant, failure)) best = fewer;
  }
  for (size_t j = 0; j < best.readers.size(); ++j) {
    best.readers[j].id = ReaderId(best, j);
  }
  best.replay.present = true;
  best.replay.reader = failure.reader;
  best.replay.call = failure.reader_call;
  best.replay.property = PropertyName(failure.property);
  return best;
}

absl::StatusOr<std::string> ReplayFailure(const Scenario& scenario,
                                          const variants::Variant& variant,
                                          bool* reproduced) {
  if (!scenario.replay.present) {
    return absl::InvalidArgumentError(
        "this scenario has no [replay] section; use `vdsolab run` for it");
  }
  RunOptions options;
  options.trace_call = std::pair{scenario.replay.reader, scenario.replay.call};
  absl::StatusOr<RunResult> r = RunRandom(scenario, variant, options);
  if (!r.ok()) return r.status();
  std::string o;
  absl::StrAppendFormat(&o,
                        "vdsolab replay: scenario \"%s\", seed %d: reader %d, "
                        "call %d (%s)\n",
                        scenario.name, scenario.run.seed,
                        scenario.replay.reader, scenario.replay.call,
                        scenario.replay.property);
  *reproduced = false;
  for (const Violation& v : r->violations) {
    if (v.reader == scenario.replay.reader &&
        v.reader_call == scenario.replay.call) {
      if (PropertyName(v.property) == scenario.replay.property) {
        *reproduced = true;
      }
      absl::StrAppendFormat(&o, "  [%s] %s: %s\n    %s\n",
                            VerdictName(v.verdict), PropertyName(v.property),
                            v.why, v.detail);
    }
  }
  if (!r->traced) {
    absl::StrAppendFormat(&o, "the run never reached that call\n");
    return o;
  }
  const CallRecord& c = *r->traced;
  absl::StrAppendFormat(
      &o,
      "\nthe call: clock_gettime(%s) on CPU %d, from %s s to %s s, %d loop "
      "iteration(s), %d writer store(s) landed during it\n",
      ClockName(c.clock), c.cpu_start, Seconds(c.start_ns), Seconds(c.end_ns),
      c.iterations, c.stores_during);
  if (c.result) {
    absl::StrAppendFormat(&o, "returned %s%s\n", FormatClockResult(*c.result),
                          c.fell_back ? " (from the syscall fallback)" : "");
  } else {
    absl::StrAppendFormat(&o, "abandoned (livelock budget)\n");
  }
  if (c.read_counter) {
    absl::StrAppendFormat(&o, "counter: %#x, read on CPU %d at %s s\n",
                          c.counter, c.counter_cpu, Seconds(c.counter_ns));
  }
  if (!r->traced_page.empty()) {
    absl::StrAppendFormat(&o, "page at the counter read (non-zero fields):\n%s",
                          r->traced_page);
  }
  absl::StrAppendFormat(&o,
                        "\nthe interleaving (reader steps, and the writer "
                        "stores that landed before each):\n");
  for (const TraceStep& step : c.trace) {
    absl::StrAppendFormat(&o, "  %s s  cpu %d  %s\n", Seconds(step.t_ns),
                          step.cpu, step.what);
  }
  absl::StrAppendFormat(&o, "\n%s\n",
                        *reproduced ? "REPRODUCED" : "NOT REPRODUCED");
  return o;
}

}  // namespace vdsolab::sim
