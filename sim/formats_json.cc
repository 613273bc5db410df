// JSON of runs and replays (sim/formats.h; schema: docs/json.md).

#include "absl/strings/str_format.h"
#include "sim/formats.h"

namespace vdsolab::sim {

JsonObject PropertiesJson(
    const std::array<PropertyStats, kNumProperties>& stats) {
  JsonObject o;
  for (int i = 0; i < kNumProperties; ++i) {
    const PropertyStats& s = stats[static_cast<size_t>(i)];
    JsonObject p;
    p.Add("checked", s.checked)
        .Add("defects", s.defects)
        .Add("preconditions", s.preconditions)
        .Add("known", s.known_kernel);
    o.AddRaw(PropertyName(static_cast<Property>(i + 1)), p.Text());
  }
  return o;
}

JsonObject ViolationJson(const Violation& v) {
  JsonObject o;
  o.Add("property", PropertyName(v.property))
      .Add("verdict", VerdictName(v.verdict))
      .Add("reader", v.reader)
      .Add("call", v.reader_call)
      .Add("t_ns", v.t_ns)
      .Add("why", v.why)
      .Add("detail", v.detail);
  return o;
}

namespace {

JsonObject CoverageJson(const Coverage& c) {
  JsonObject o;
  o.Add("calls", c.calls)
      .Add("vdso_answers", c.vdso_answers)
      .Add("fallbacks", c.fallbacks)
      .Add("errors", c.errors)
      .Add("retries", c.retries)
      .Add("raced", c.raced)
      .Add("migrations", c.migrations)
      .Add("midcall_migrations", c.midcall_migrations)
      .Add("preemptions", c.preemptions)
      .Add("negative_motion", c.negative_motion)
      .Add("beyond_max_cycles", c.beyond_max_cycles)
      .Add("counter_wrapped", c.counter_wrapped)
      .Add("cross_cpu_reads", c.cross_cpu_reads)
      .Add("livelocks", c.livelocks)
      .Add("crashes", c.crashes);
  if (c.reordered_loads != 0) o.Add("reordered_loads", c.reordered_loads);
  // Only on kvm-clock machines: other reports stay as they are.
  if (c.pvclock_reads != 0) {
    o.Add("pvclock_reads", c.pvclock_reads)
        .Add("pvclock_raced", c.pvclock_raced);
  }
  return o;
}

const char* StepKind(TraceStep::Kind k) {
  switch (k) {
    case TraceStep::Kind::kLoad:
      return "load";
    case TraceStep::Kind::kCounter:
      return "counter";
    case TraceStep::Kind::kStore:
      return "store";
    case TraceStep::Kind::kFallback:
      return "fallback";
    case TraceStep::Kind::kPreempt:
      return "preempt";
    case TraceStep::Kind::kMigrate:
      return "migrate";
    case TraceStep::Kind::kFault:
      return "fault";
    case TraceStep::Kind::kReorder:
      return "reorder";
  }
  return "?";
}

}  // namespace

JsonArray ViolationGroupsJson(
    const std::array<PropertyStats, kNumProperties>& stats,
    const std::vector<Violation>& violations) {
  JsonArray groups;
  for (int i = 0; i < kNumProperties; ++i) {
    const Property p = static_cast<Property>(i + 1);
    const PropertyStats& s = stats[static_cast<size_t>(i)];
    for (const auto& [verdict, count] :
         {std::pair{Verdict::kDefect, s.defects},
          std::pair{Verdict::kKnownKernel, s.known_kernel},
          std::pair{Verdict::kPrecondition, s.preconditions}}) {
      if (count == 0) continue;
      JsonObject g;
      g.Add("property", PropertyName(p))
          .Add("verdict", VerdictName(verdict))
          .Add("count", count);
      for (const Violation& v : violations) {
        if (v.property == p && v.verdict == verdict) {
          g.AddRaw("first", ViolationJson(v).Text());
          break;
        }
      }
      groups.AddRaw(g.Text());
    }
  }
  return groups;
}

JsonObject OutcomeJson(const Scenario& s, const Outcome& out,
                       const std::string& replay_file) {
  JsonObject o;
  o.Add("scenario", s.name)
      .Add("seed", s.run.seed)
      .Add("strategy", StrategyName(s.run.strategy))
      .Add("variant", s.run.reader)
      .Add("failed", out.failed)
      .Add("complete", out.complete)
      .Add("interrupted", out.interrupted)
      .AddRaw("properties", PropertiesJson(out.stats).Text());
  if (out.random) {
    const RunResult& r = *out.random;
    o.Add("simulated_ns", r.simulated_ns)
        .Add("updates", r.updates)
        .Add("stop_reason", r.stop_reason)
        .AddRaw("coverage", CoverageJson(r.coverage).Text())
        .AddRaw("violations",
                ViolationGroupsJson(r.stats, r.violations).Text());
    JsonArray divergence;
    for (const auto& [clock, d] : r.divergence) {
      JsonObject dj;
      dj.Add("clock", d.name)
          .Add("reads", d.samples)
          .Add("raw_span_ns", d.span_ns)
          .Add("divergence_ns", d.last_ns)
          .Add("ppb", d.ppb())
          .Add("max_abs_ns", d.max_abs_ns);
      divergence.AddRaw(dj.Text());
    }
    o.AddRaw("divergence_vs_raw", divergence.Text());
    // The syscall events whose answer differs from the scenario's
    // expectations, only when there are any: a passing run's JSON is
    // unchanged.
    JsonArray mismatched;
    for (const EventOutcome& e : r.outcomes) {
      if (e.mismatches.empty()) continue;
      JsonObject ej;
      JsonArray ms;
      for (const std::string& m : e.mismatches) ms.Add(m);
      ej.Add("event", e.event)
          .Add("at_ns", e.at_ns)
          .Add("what", e.what)
          .Add("ret", e.ret)
          .AddRaw("mismatches", ms.Text());
      mismatched.AddRaw(ej.Text());
    }
    if (!mismatched.empty())
      o.AddRaw("syscall_event_mismatches", mismatched.Text());
    if (!r.timekeeper_findings.empty()) {
      // Only when there are any: a passing run's JSON is unchanged.
      JsonArray findings;
      for (const std::string& f : r.timekeeper_findings) findings.Add(f);
      o.AddRaw("timekeeper_findings", findings.Text());
    }
    if (!r.timekeeping.empty()) {
      JsonObject w;
      w.Add("timekeeper", r.timekeeping)
          .Add("operations", r.timekeeping_operations)
          .Add("first_difference", r.timekeeping_difference);
      o.AddRaw("writer", w.Text());
    }
  }
  if (out.exhaustive) {
    const ExploreResult& e = *out.exhaustive;
    JsonObject ej;
    ej.Add("clock", e.clock_name)
        .Add("updates", e.updates)
        .Add("stores", e.stores)
        .Add("interleavings", e.interleavings)
        .Add("failing", e.failing)
        .Add("complete", e.complete)
        .Add("stop_reason", e.stop_reason);
    // Only for the run.exhaustive_shape / exhaustive_reduction options, so
    // one-call runs without reduction print as before.
    if (e.shape != ExhaustiveShape::kOneCall ||
        e.reduction != Reduction::kNone) {
      ej.Add("shape", ExhaustiveShapeName(e.shape))
          .Add("reduction", ReductionName(e.reduction))
          .Add("cut", e.cut)
          .Add("plain_interleavings", e.plain_interleavings);
    }
    if (e.minimal) {
      JsonArray choices;
      for (int c : *e.minimal) choices.Add(c);
      ej.AddRaw("minimal", choices.Text())
          .Add("minimal_splits", e.minimal_splits);
      JsonArray vs;
      for (const Violation& v : e.minimal_violations) {
        vs.AddRaw(ViolationJson(v).Text());
      }
      ej.AddRaw("minimal_violations", vs.Text());
    }
    // Only for readers with other entry points (sim/entry_points.h), so
    // other runs print as before.
    if (e.entry_points_checked != 0) {
      JsonArray vs;
      for (const Violation& v : e.entry_point_violations) {
        vs.AddRaw(ViolationJson(v).Text());
      }
      ej.Add("entry_points_checked", e.entry_points_checked)
          .Add("entry_points_wrong", e.entry_points_wrong)
          .AddRaw("entry_point_violations", vs.Text());
    }
    o.AddRaw("exhaustive", ej.Text());
  }
  if (!replay_file.empty()) {
    JsonObject r;
    r.Add("file", replay_file)
        .Add("command", absl::StrFormat("vdsolab replay %s", replay_file));
    o.AddRaw("replay", r.Text());
  }
  return o;
}

namespace {

const char* ReplayVerdict(const ReplayOutcome& r) {
  if (!r.stopped_before.empty()) return "not reached";
  if (r.reproduced) return "reproduced";
  if (r.failed) return r.other_variant ? "not fixed" : "fails elsewhere";
  if (r.diverged && r.origin_ran) {
    return r.origin_failed ? "not fixed" : "fixed";
  }
  if (r.diverged) return "not comparable";
  return r.other_variant ? "fixed" : "not reproduced";
}

}  // namespace

JsonObject ReplayJson(const Scenario& s, const variants::Variant& variant,
                      const ReplayOutcome& replay) {
  JsonObject o;
  o.Add("scenario", s.name)
      .Add("variant", variant.name)
      .Add("file_variant", s.run.reader)
      .Add("property", s.replay.property)
      .Add("reproduced", replay.reproduced)
      .Add("verdict", ReplayVerdict(replay));
  if (!replay.stopped_before.empty()) {
    o.Add("stop_reason", replay.stopped_before);
  }
  if (!replay.elsewhere.empty()) o.Add("fails_elsewhere", replay.elsewhere);
  JsonArray vs;
  for (const Violation& v : replay.violations)
    vs.AddRaw(ViolationJson(v).Text());
  o.AddRaw("violations", vs.Text());
  if (!replay.call) {
    o.AddRaw("call", "null");
    return o;
  }
  const CallRecord& c = *replay.call;
  JsonObject call;
  call.Add("clock", replay.clock_name)
      .Add("reader", c.reader)
      .Add("call", c.reader_call)
      .Add("cpu_start", c.cpu_start)
      .Add("cpu_end", c.cpu_end)
      .Add("start_ns", c.start_ns)
      .Add("end_ns", c.end_ns)
      .Add("iterations", c.iterations)
      .Add("stores_during", c.stores_during)
      .Add("fell_back", c.fell_back);
  if (c.result) {
    call.Add("ret", c.result->ret)
        .Add("tv_sec", c.result->ts.tv_sec)
        .Add("tv_nsec", c.result->ts.tv_nsec);
  }
  if (c.fault) call.Add("fault", vdso::DescribeFault(*c.fault));
  if (c.read_counter) {
    call.Add("counter", c.counter)
        .Add("counter_cpu", c.counter_cpu)
        .Add("counter_ns", c.counter_ns);
  }
  JsonArray steps;
  for (const TraceStep& t : c.trace) {
    JsonObject step;
    step.Add("t_ns", t.t_ns)
        .Add("cpu", t.cpu)
        .Add("kind", StepKind(t.kind))
        .Add("what", t.what);
    if (!t.field.empty()) step.Add("field", t.field).Add("seq", t.seq);
    if (t.kind == TraceStep::Kind::kLoad || t.kind == TraceStep::Kind::kStore ||
        t.kind == TraceStep::Kind::kCounter) {
      step.Add("value", t.value);
    }
    if (t.kind == TraceStep::Kind::kStore) step.Add("update", t.update);
    steps.AddRaw(step.Text());
  }
  call.AddRaw("steps", steps.Text());
  o.AddRaw("call", call.Text());
  o.Add("page_at_counter_read", replay.page);
  return o;
}

}  // namespace vdsolab::sim
