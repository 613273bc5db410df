// TAP of runs (sim/formats.h).

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "sim/formats.h"

namespace vdsolab::sim {

namespace {

// Failures of a run that no property counts: a test point each, after the
// properties', only when they happened (a run without them prints as
// before), so that a TAP consumer sees every failure the exit status says.
struct ExtraPoint {
  std::string name;
  std::vector<std::string> details;
};

std::vector<ExtraPoint> ExtraFailures(const Outcome& out) {
  std::vector<ExtraPoint> points;
  if (!out.random) return points;
  const RunResult& r = *out.random;
  ExtraPoint events{"syscall events", {}};
  for (const EventOutcome& e : r.outcomes) {
    for (const std::string& m : e.mismatches) {
      events.details.push_back(
          absl::StrFormat("event[%d] %s = %d: %s", e.event, e.what, e.ret, m));
    }
  }
  if (!events.details.empty()) points.push_back(std::move(events));
  if (!r.timekeeper_findings.empty()) {
    points.push_back(
        ExtraPoint{"timekeeper consistency", r.timekeeper_findings});
  }
  if (!r.timekeeping_difference.empty()) {
    points.push_back(
        ExtraPoint{"writer: " + r.timekeeping, {r.timekeeping_difference}});
  }
  return points;
}

}  // namespace

std::string OutcomeTap(const Scenario& s, const Outcome& out,
                       bool accept_known) {
  const std::vector<ExtraPoint> extra = ExtraFailures(out);
  std::string o = absl::StrFormat(
      "TAP version 13\n# vdsolab run: scenario \"%s\", seed %d, strategy %s, "
      "variant %s\n1..%d\n",
      s.name, s.run.seed, StrategyName(s.run.strategy), s.run.reader,
      kNumProperties + static_cast<int>(extra.size()));
  // Exhaustive: the minimal interleaving's, then the other entry points'.
  std::vector<Violation> explored;
  if (out.exhaustive) {
    explored = out.exhaustive->minimal_violations;
    for (const Violation& v : out.exhaustive->entry_point_violations) {
      explored.push_back(v);
    }
  }
  const std::vector<Violation>* violations = out.random
                                                 ? &out.random->violations
                                             : out.exhaustive ? &explored
                                                              : nullptr;
  for (int i = 0; i < kNumProperties; ++i) {
    const Property p = static_cast<Property>(i + 1);
    const PropertyStats& st = out.stats[static_cast<size_t>(i)];
    if (st.checked == 0) {
      absl::StrAppendFormat(&o, "ok %d - %s # SKIP never checked\n", i + 1,
                            PropertyName(p));
      continue;
    }
    const bool fails =
        st.defects != 0 || (st.known_kernel != 0 && !accept_known);
    absl::StrAppendFormat(&o, "%s %d - %s: %d checked", fails ? "not ok" : "ok",
                          i + 1, PropertyName(p), st.checked);
    if (st.defects != 0)
      absl::StrAppendFormat(&o, ", %d defect(s)", st.defects);
    if (st.known_kernel != 0) {
      absl::StrAppendFormat(&o, ", %d known kernel behaviour(s)%s",
                            st.known_kernel, accept_known ? " (accepted)" : "");
    }
    if (st.preconditions != 0) {
      absl::StrAppendFormat(&o, ", %d precondition(s) violated",
                            st.preconditions);
    }
    o += "\n";
    if (!fails || violations == nullptr) continue;
    for (const Violation& v : *violations) {
      if (v.property != p || v.verdict == Verdict::kPrecondition) continue;
      absl::StrAppendFormat(&o, "#   first: reader %d call %d: %s\n#   %s\n",
                            v.reader, v.reader_call, v.why, v.detail);
      break;
    }
  }
  int n = kNumProperties;
  for (const ExtraPoint& p : extra) {
    absl::StrAppendFormat(&o, "not ok %d - %s: %d mismatch(es)\n", ++n, p.name,
                          p.details.size());
    absl::StrAppendFormat(&o, "#   first: %s\n", p.details.front());
  }
  // Ctrl-C: the points above cover only what ran; a harness must not take
  // them for the run's result.
  if (out.interrupted) o += "Bail out! interrupted before the end\n";
  return o;
}

}  // namespace vdsolab::sim
