#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/math64.h"
#include "common/sha256.h"
#include "sim/run.h"
#include "sim/run_report.h"
#include "sim/scenario_toml.h"

namespace vdsolab::sim {
namespace {

std::string NsLine(const TraceStep& step) {
  return absl::StrFormat("  %d ns  %s\n", step.t_ns, step.what);
}

std::string Seconds(uint64_t ns) {
  return absl::StrFormat("%d.%09d", ns / kNsecPerSec, ns % kNsecPerSec);
}

// A random run's failing call: the run again, tracing that call.
// How a replayed call ended without an answer: "did not return: crashed
// (SIGSEGV)", "returned too late: ran for over 250 ms ...", or what a call
// that returned left changed ("returned with the direction flag set").
std::string NoAnswer(const vdso::CallFault& f) {
  if (f.kind == vdso::CallFault::Kind::kCrash && f.returned) {
    return vdso::DescribeFault(f);
  }
  return absl::StrCat(f.returned ? "returned too late" : "did not return", ": ",
                      vdso::DescribeFault(f));
}

// `other` (both): the variant is not the file's (another name, or its code
// changed since), whose calls may take other times and paths.
absl::StatusOr<std::string> ReplayRandom(const Scenario& scenario,
                                         const variants::Variant& variant,
                                         bool other, ReplayOutcome* out) {
  bool* reproduced = &out->reproduced;
  RandomOptions options;
  options.trace_call = std::pair{scenario.replay.reader, scenario.replay.call};
  // As the run judged: under --accept=known a documented behaviour at the
  // call (the era's own, where a patch had a defect) is no recurrence.
  const bool accept = scenario.replay.accept_known;
  options.accept_known = accept;
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
  // Whether what reproduced is only a probe of the other entry points made
  // before the call (its trace is then not the failing answer's).
  bool probe_only = true;
  for (const Violation& v : r->violations) {
    if (v.reader == scenario.replay.reader &&
        v.reader_call == scenario.replay.call) {
      const bool accepted = accept && v.verdict == Verdict::kKnownKernel;
      out->accepted_at_call |=
          accepted && PropertyName(v.property) == scenario.replay.property;
      if (PropertyName(v.property) == scenario.replay.property && !accepted) {
        *reproduced = true;
        probe_only = probe_only && v.entry_point;
      }
      out->violations.push_back(v);
      absl::StrAppendFormat(&o, "  [%s] %s: %s\n    %s\n",
                            VerdictName(v.verdict), PropertyName(v.property),
                            v.why, v.detail);
    }
  }
  // Whether the run failed anywhere: another variant that does not show
  // the failure at the call but fails otherwise (another property at the
  // call, another call) is not fixed.
  out->failed = r->failed;
  for (const Violation& v : r->violations) {
    if (v.verdict == Verdict::kPrecondition) continue;
    if (accept && v.verdict == Verdict::kKnownKernel) continue;
    if (v.reader == scenario.replay.reader &&
        v.reader_call == scenario.replay.call &&
        PropertyName(v.property) == scenario.replay.property) {
      continue;
    }
    out->elsewhere =
        absl::StrFormat("reader %d, call %d: %s: %s", v.reader, v.reader_call,
                        PropertyName(v.property), v.why);
    break;
  }
  // Else a syscall event's expectation (a minimised replay may keep an
  // event whose expected answer depended on one it cut): named, so that
  // the user can tell a real regression from the cut.
  for (size_t i = 0; out->elsewhere.empty() && i < r->outcomes.size(); ++i) {
    const EventOutcome& e = r->outcomes[i];
    if (e.mismatches.empty()) continue;
    out->elsewhere =
        absl::StrFormat("event %d, %s at %s s: %s", e.event, e.what,
                        Seconds(e.at_ns), e.mismatches.front());
  }
  if (!r->traced && !r->stopped_early && !other) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "replay.call = %d: reader %d makes no such call in this run (it "
        "ends at %s s of simulated time; was the file's seed, a duration or "
        "a reader edited since it was written?)",
        scenario.replay.call, scenario.replay.reader,
        Seconds(r->simulated_ns)));
  }
  if (!r->traced) {
    // Stopped before the call (calls that spun, Ctrl-C), or another
    // variant's calls took other times and the schedule diverged: what
    // the run as a whole did is the verdict.
    if (r->stopped_early) {
      out->stopped_before = r->stop_reason;
      absl::StrAppendFormat(&o, "the run stopped before that call: %s\n",
                            r->stop_reason);
    } else {
      out->diverged = true;
      absl::StrAppendFormat(
          &o,
          "with variant %s the run ends (at %s s) before reader %d makes "
          "that call: its calls take other times, and the schedule "
          "diverged\n",
          variant.name, Seconds(r->simulated_ns), scenario.replay.reader);
    }
    return o;
  }
  if (*reproduced && probe_only) {
    absl::StrAppendFormat(
        &o,
        "\nthe failing answer above is the probe of the other entry points "
        "on the settled page before this call (whole, with no store "
        "landing: no interleaving to show); what follows is the call "
        "itself, which the probe came before\n");
  }
  const CallRecord& c = *r->traced;
  out->call = c;
  out->page = r->traced_page;
  out->clock_name = variants::VariantClockName(variant, c.clock);
  absl::StrAppendFormat(
      &o,
      "\nthe call: clock_gettime(%s) on CPU %d, from %s s to %s s, %d loop "
      "iteration(s), %d writer store(s) landed during it\n",
      out->clock_name, c.cpu_start, Seconds(c.start_ns), Seconds(c.end_ns),
      c.iterations, c.stores_during);
  if (c.result) {
    absl::StrAppendFormat(&o, "returned %s%s\n", FormatClockResult(*c.result),
                          c.fell_back ? " (from the syscall fallback)" : "");
  } else if (c.fault) {
    absl::StrAppend(&o, NoAnswer(*c.fault), "\n");
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
  absl::StrAppend(&o, FormatTraceSteps(c.trace, [](const TraceStep& step) {
    return absl::StrFormat("  %s s  cpu %d  %s\n", Seconds(step.t_ns), step.cpu,
                           step.what);
  }));
  return o;
}

// An exhaustive run's failing interleaving, run again with a trace.
absl::StatusOr<std::string> ReplayExhaustive(const Scenario& s,
                                             const variants::Variant& variant,
                                             bool other, ReplayOutcome* out) {
  bool* reproduced = &out->reproduced;
  absl::StatusOr<Interleaving> e =
      RunInterleaving(s, variant, s.replay.decisions, s.replay.accept_known);
  if (!e.ok()) return e.status();
  if (!e->script_problem.empty() && !other) {
    return absl::InvalidArgumentError(
        absl::StrFormat("replay.decisions: %s", e->script_problem));
  }
  *reproduced = e->failed;
  // Another variant whose call takes another path than the choices
  // describe, and passes: the schedule was not the failing one.
  out->diverged = !e->failed && !e->script_problem.empty();
  out->call = e->call;
  out->violations = e->violations;
  out->page = e->page;
  out->clock_name = variants::VariantClockName(variant, e->call.clock);
  std::string o;
  absl::StrAppendFormat(&o,
                        "vdsolab replay: scenario \"%s\": clock_gettime(%s) "
                        "against %d update(s), choices [%s]\n",
                        s.name,
                        variants::VariantClockName(variant, e->call.clock),
                        e->updates, FormatChoices(s.replay.decisions));
  if (!e->script_problem.empty()) {
    absl::StrAppendFormat(&o,
                          "note: %s's call takes another path: %s; the "
                          "choices apply as far as they fit\n",
                          variant.name, e->script_problem);
  }
  for (const Violation& v : e->violations) {
    absl::StrAppendFormat(&o, "  [%s] %s: %s\n    %s\n", VerdictName(v.verdict),
                          PropertyName(v.property), v.why, v.detail);
  }
  if (e->call.result) {
    absl::StrAppendFormat(&o, "returned %s\n",
                          FormatClockResult(*e->call.result));
  } else if (e->call.fault) {
    absl::StrAppend(&o, NoAnswer(*e->call.fault), "\n");
  }
  if (e->call.read_counter) {
    absl::StrAppendFormat(&o, "counter: %#x at %d ns\n", e->call.counter,
                          e->call.counter_ns);
  }
  if (!e->page.empty()) {
    absl::StrAppendFormat(&o, "page at the counter read (non-zero fields):\n%s",
                          e->page);
  }
  if (e->first_call) {
    // A two-call shape: the earlier call, whose answer the later one is
    // judged against.
    const CallRecord& f = *e->first_call;
    absl::StrAppendFormat(
        &o, "\nthe first call (reader %d, CPU %d) returned %s:\n", f.reader,
        f.cpu_start,
        f.result ? FormatClockResult(*f.result) : std::string("no answer"));
    absl::StrAppend(&o, FormatTraceSteps(f.trace, NsLine));
  }
  absl::StrAppendFormat(&o, "\nthe interleaving%s:\n",
                        e->first_call ? " of the second call" : "");
  absl::StrAppend(&o, FormatTraceSteps(e->call.trace, NsLine));
  return o;
}

// A random replay whose schedule diverged with another variant: the
// scenario the file was cut from (run.origin, read from `file`, where the
// caller found it), run whole with the file's seed and that variant,
// decides. Appends the verdict and returns true; or appends why it could
// not and returns false (the caller says NOT COMPARABLE).
bool JudgeByOrigin(const Scenario& replay, const variants::Variant& variant,
                   const std::string& now, const std::string& file,
                   ReplayOutcome* out) {
  if (replay.run.strategy != Strategy::kRandom || replay.run.origin.empty()) {
    return false;
  }
  const std::string& named = replay.run.origin;  // As the file spells it.
  auto cannot = [&](const std::string& why) {
    absl::StrAppendFormat(
        &out->text, "\nthe scenario it was cut from, %s, %s\n", named, why);
    return false;
  };
  absl::StatusOr<Scenario> origin = LoadScenarioFile(file);
  if (!origin.ok()) {
    return cannot(absl::StrCat("cannot be read: ", origin.status().message()));
  }
  // A replay's own short run is what this is here not to trust.
  if (origin->replay.present) {
    return cannot(
        "is itself a replay (its run is minimised), so it says "
        "nothing of a fix either");
  }
  std::string changed;
  if (!replay.run.origin_sha256.empty()) {
    absl::StatusOr<std::string> sha = Sha256File(file);
    if (sha.ok() && *sha != replay.run.origin_sha256) {
      changed = " (the file changed since the replay was written)";
    }
  }
  origin->run.seed = replay.run.seed;
  origin->run.reader = std::string(variant.name);
  origin->kernel.era = replay.kernel.era;
  origin->kernel.backports = replay.kernel.backports;
  RunOptions options;
  options.replays = ReplayPolicy::kNone;
  const bool accept = replay.replay.accept_known;
  options.accept_known = accept;
  absl::StatusOr<Outcome> run = Run(*origin, variant, options);
  if (!run.ok()) {
    return cannot(absl::StrFormat("cannot be run with variant %s: %s",
                                  variant.name, run.status().message()));
  }
  uint64_t checked = 0;
  for (const PropertyStats& p : run->stats) checked += p.checked;
  if (checked == 0) return cannot("checked nothing with this variant");
  // Not fixed: a defect anywhere, or the replayed property failing at all
  // (a known behaviour of the era elsewhere is not the failure replayed,
  // and a run made with --accept=known accepted those).
  const PropertyStats* replayed = nullptr;
  for (int i = 1; i <= kNumProperties; ++i) {
    if (replay.replay.property == PropertyName(static_cast<Property>(i))) {
      replayed = &run->stats[static_cast<size_t>(i - 1)];
    }
  }
  bool failed = !accept && replayed != nullptr && replayed->known_kernel != 0;
  bool any_known = false;
  for (const PropertyStats& p : run->stats) {
    failed |= p.defects != 0;
    any_known |= p.known_kernel != 0;
  }
  out->origin_ran = true;
  out->origin_failed = failed;
  const std::string what = absl::StrFormat(
      "the scenario it was cut from, %s%s, run whole with seed %d and "
      "variant %s",
      named, changed, replay.run.seed, now);
  if (!failed) {
    absl::StrAppendFormat(&out->text,
                          "\nwith variant %s the schedule diverged before the "
                          "call (its calls take other times), so %s:\n"
                          "FIXED: no defect there%s\n",
                          now, what,
                          any_known && accept
                              ? "; documented kernel behaviours only, accepted "
                                "(replay.accept_known, --accept=known)"
                          : any_known ? ", and no known behaviour of the "
                                        "replayed property (others: "
                                        "documented era behaviours)"
                                      : ", every property held");
    return true;
  }
  std::string first = "a syscall event's expectation or the timekeeper model";
  if (run->random) {
    for (const Violation& v : run->random->violations) {
      if (v.verdict == Verdict::kPrecondition) continue;
      if (v.verdict != Verdict::kDefect &&
          (accept || PropertyName(v.property) != replay.replay.property)) {
        continue;
      }
      first = absl::StrFormat("reader %d, call %d: %s: %s", v.reader,
                              v.reader_call, PropertyName(v.property), v.why);
      break;
    }
  }
  absl::StrAppendFormat(&out->text,
                        "\nwith variant %s the schedule diverged before the "
                        "call (its calls take other times), so %s:\n"
                        "NOT FIXED: it fails there: %s\n",
                        now, what, first);
  return true;
}

}  // namespace

absl::StatusOr<ReplayOutcome> Replay(const Scenario& scenario,
                                     const variants::Variant& variant,
                                     bool code_changed,
                                     const std::string& origin_file) {
  if (!scenario.replay.present) {
    return absl::InvalidArgumentError(
        "this scenario has no [replay] section; use `vdsolab run` for it");
  }
  const std::string& property = scenario.replay.property;
  // A random run's replay names the property it reproduces; an exhaustive
  // one's is judged by the interleaving failing (its property may be "").
  bool known =
      property.empty() && scenario.run.strategy == Strategy::kExhaustive;
  std::vector<std::string> names;
  for (int i = 1; i <= kNumProperties; ++i) {
    names.push_back(PropertyName(static_cast<Property>(i)));
    known |= names.back() == property;
  }
  if (!known) {
    return absl::InvalidArgumentError(
        absl::StrFormat("replay.property = \"%s\": want one of %s", property,
                        absl::StrJoin(names, ", ")));
  }
  if (scenario.run.strategy == Strategy::kRandom) {
    // A random run replays from its seed: choices would be ignored.
    if (!scenario.replay.decisions.empty()) {
      return absl::InvalidArgumentError(
          "replay.decisions: only an exhaustive run's replay has choices; "
          "this file's run.strategy is \"random\", which its seed replays");
    }
    bool reader_exists = false;
    for (size_t i = 0; i < scenario.readers.size(); ++i) {
      reader_exists |= ReaderId(scenario, i) == scenario.replay.reader;
    }
    if (!reader_exists) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "replay.reader = %d: the scenario has no reader with that id",
          scenario.replay.reader));
    }
  } else if (!scenario.replay.decisions.empty()) {
    for (size_t k = 0; k < scenario.replay.decisions.size(); ++k) {
      if (scenario.replay.decisions[k] < 0) {
        return absl::InvalidArgumentError(
            absl::StrFormat("replay.decisions[%d] = %d: a choice is 0 or more",
                            k, scenario.replay.decisions[k]));
      }
    }
  }
  // Against another variant than the one that failed (or its code,
  // changed), a replay that does not recur says the fix works.
  const bool other = variant.name != scenario.run.reader || code_changed;
  ReplayOutcome out;
  absl::StatusOr<std::string> text =
      scenario.run.strategy == Strategy::kExhaustive
          ? ReplayExhaustive(scenario, variant, other, &out)
          : ReplayRandom(scenario, variant, other, &out);
  if (!text.ok()) return text.status();
  out.text = *std::move(text);
  out.other_variant = other;
  // "X", or for the file's own name "X (its code changed since)".
  std::string now(variant.name);
  if (variant.name == scenario.run.reader) now += " (its code changed since)";
  if (!out.stopped_before.empty()) {
    absl::StrAppendFormat(&out.text, "\nNOT REACHED%s\n",
                          out.failed ? ": the run failed before the call" : "");
  } else if (!out.reproduced && out.failed) {
    absl::StrAppendFormat(
        &out.text, "\n%s the run fails otherwise: %s\n",
        other ? absl::StrFormat("NOT FIXED: variant %s does not show what %s "
                                "did at the call, but",
                                now, scenario.run.reader)
              : std::string("NOT REPRODUCED, but"),
        out.elsewhere.empty()
            ? "a syscall event's expectation or the timekeeper model"
            : out.elsewhere);
  } else if (out.reproduced) {
    absl::StrAppendFormat(&out.text, "\nREPRODUCED%s\n",
                          other ? absl::StrFormat(" with variant %s (the "
                                                  "file's was %s)",
                                                  now, scenario.run.reader)
                                : "");
  } else if (other && out.diverged &&
             JudgeByOrigin(
                 scenario, variant, now,
                 origin_file.empty() ? scenario.run.origin : origin_file,
                 &out)) {
    // Judged by the scenario the replay was cut from.
  } else if (other && out.diverged) {
    // The replay's run is minimised around the call: a variant whose
    // calls take other times may not reach it, and passing the short run
    // says nothing of the fix.
    absl::StrAppendFormat(
        &out.text,
        "\nNOT COMPARABLE: with variant %s the schedule diverged before the "
        "call, so this replay says nothing of a fix; run the scenario it came "
        "from with %s (vdsolab run SCENARIO and the variant flags given "
        "here)\n",
        now, variant.name);
  } else if (out.accepted_at_call) {
    // Neither a recurrence nor a fix: what is at the call is documented.
    absl::StrAppendFormat(
        &out.text,
        "\nACCEPTED: at the call %s shows only documented kernel behaviour, "
        "which this replay accepts (replay.accept_known, --accept=known)\n",
        other ? absl::StrCat("variant ", now) : std::string("the variant"));
  } else if (other) {
    absl::StrAppendFormat(&out.text,
                          "\nFIXED: variant %s does not show what %s did on "
                          "this schedule\n",
                          now, scenario.run.reader);
  } else {
    absl::StrAppendFormat(&out.text, "\nNOT REPRODUCED\n");
  }
  return out;
}

}  // namespace vdsolab::sim
