// TAP of runs (sim/formats.h).

#include "absl/strings/str_format.h"
#include "sim/formats.h"

namespace vdsolab::sim {

std::string OutcomeTap(const Scenario& s, const Outcome& out,
                       bool accept_known) {
  std::string o = absl::StrFormat(
      "TAP version 13\n# vdsolab run: scenario \"%s\", seed %d, strategy %s, "
      "variant %s\n1..%d\n",
      s.name, s.run.seed, StrategyName(s.run.strategy), s.run.reader,
      kNumProperties);
  const std::vector<Violation>* violations =
      out.random       ? &out.random->violations
      : out.exhaustive ? &out.exhaustive->minimal_violations
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
  return o;
}

}  // namespace vdsolab::sim
