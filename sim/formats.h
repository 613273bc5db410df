// File: sim/formats.h
//
// A run and a replay in the forms other than the text report
// (sim/run_report.h): JSON for scripts (docs/json.md has the schema), TAP
// for CI (kselftest style: one "ok N - ..." per property), and the failing
// call as pictures: an SVG of two lanes on one time axis and a Chrome
// trace-event file that Perfetto and chrome://tracing open.

#ifndef VDSOLAB_SIM_FORMATS_H_
#define VDSOLAB_SIM_FORMATS_H_

#include <string>

#include "common/json.h"
#include "sim/run.h"
#include "sim/scenario.h"
#include "variants/variant.h"

namespace vdsolab::sim {

// The run's result as a JSON object's members (the CLI adds the envelope:
// command, version, exit status). `replay_file` is where the first
// failure's replay went ("" if none).
JsonObject OutcomeJson(const Scenario& scenario, const Outcome& outcome,
                       const std::string& replay_file);

// TAP version 13: one test point per property ("not ok" for a defect, or a
// known kernel behaviour unless accepted), "# SKIP" for one never checked.
std::string OutcomeTap(const Scenario& scenario, const Outcome& outcome,
                       bool accept_known);

// A replay's result: the verdict, the violations at the call, the call
// with its steps.
JsonObject ReplayJson(const Scenario& scenario,
                      const variants::Variant& variant,
                      const ReplayOutcome& replay);

// Each property's checked, defects, preconditions and known counts, by
// property name.
JsonObject PropertiesJson(
    const std::array<PropertyStats, kNumProperties>& stats);
// One violation: property, verdict, reader, call, t_ns, why, detail.
JsonObject ViolationJson(const Violation& v);

// The violations of a run grouped by property and verdict, with the first
// example of each (what the text report lists).
JsonArray ViolationGroupsJson(
    const std::array<PropertyStats, kNumProperties>& stats,
    const std::vector<Violation>& violations);

// The replayed call as an SVG: the reader's lane (loads, counter reads,
// the fallback) and the writer's lane (its stores, odd-seq stretches
// shaded) on one time axis.
std::string ReplaySvg(const Scenario& scenario, const ReplayOutcome& replay);

// The replayed call in the Chrome trace-event format (JSON): the call as a
// duration, each step an instant event on the reader's or the writer's
// track.
std::string ReplayChromeTrace(const Scenario& scenario,
                              const ReplayOutcome& replay);

// A clock's divergence from CLOCK_MONOTONIC_RAW over RAW time (a clock
// without a kernel oracle, `vdsolab compare --svg`): a line on ns axes.
std::string DivergenceSvg(const std::string& title, const Divergence& d);

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_FORMATS_H_
