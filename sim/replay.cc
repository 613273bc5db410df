#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/math64.h"
#include "sim/run.h"

namespace vdsolab::sim {
namespace {

std::string Seconds(uint64_t ns) {
  return absl::StrFormat("%d.%09d", ns / kNsecPerSec, ns % kNsecPerSec);
}

// A random run's failing call: the run again, tracing that call.
absl::StatusOr<std::string> ReplayRandom(const Scenario& scenario,
                                         const variants::Variant& variant,
                                         bool* reproduced) {
  if (!scenario.replay.present) {
    return absl::InvalidArgumentError(
        "this scenario has no [replay] section; use `vdsolab run` for it");
  }
  RandomOptions options;
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
  } else if (c.fault) {
    absl::StrAppendFormat(&o, "did not return: %s\n",
                          vdso::DescribeFault(*c.fault));
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

// An exhaustive run's failing interleaving, run again with a trace.
absl::StatusOr<std::string> ReplayExhaustive(const Scenario& s,
                                             const variants::Variant& variant,
                                             bool* reproduced) {
  absl::StatusOr<Interleaving> e =
      RunInterleaving(s, variant, s.replay.decisions);
  if (!e.ok()) return e.status();
  *reproduced = e->failed;
  std::string o;
  absl::StrAppendFormat(&o,
                        "vdsolab replay: scenario \"%s\": clock_gettime(%s) "
                        "against %d update(s), choices [%s]\n",
                        s.name,
                        variants::VariantClockName(variant, e->call.clock),
                        e->updates, absl::StrJoin(s.replay.decisions, ", "));
  for (const Violation& v : e->violations) {
    absl::StrAppendFormat(&o, "  [%s] %s: %s\n    %s\n", VerdictName(v.verdict),
                          PropertyName(v.property), v.why, v.detail);
  }
  if (e->call.result) {
    absl::StrAppendFormat(&o, "returned %s\n",
                          FormatClockResult(*e->call.result));
  } else if (e->call.fault) {
    absl::StrAppendFormat(&o, "did not return: %s\n",
                          vdso::DescribeFault(*e->call.fault));
  }
  if (e->call.read_counter) {
    absl::StrAppendFormat(&o, "counter: %#x at %d ns\n", e->call.counter,
                          e->call.counter_ns);
  }
  if (!e->page.empty()) {
    absl::StrAppendFormat(&o, "page at the counter read (non-zero fields):\n%s",
                          e->page);
  }
  absl::StrAppendFormat(&o, "\nthe interleaving:\n");
  for (const TraceStep& step : e->call.trace) {
    absl::StrAppendFormat(&o, "  %d ns  %s\n", step.t_ns, step.what);
  }
  absl::StrAppendFormat(&o, "\n%s\n",
                        e->failed ? "REPRODUCED" : "NOT REPRODUCED");
  return o;
}

}  // namespace

absl::StatusOr<ReplayOutcome> Replay(const Scenario& scenario,
                                     const variants::Variant& variant) {
  ReplayOutcome out;
  absl::StatusOr<std::string> text =
      scenario.run.strategy == Strategy::kExhaustive
          ? ReplayExhaustive(scenario, variant, &out.reproduced)
          : ReplayRandom(scenario, variant, &out.reproduced);
  if (!text.ok()) return text.status();
  out.text = *std::move(text);
  return out;
}

}  // namespace vdsolab::sim
