// File: sim/run_report.h
//
// What `vdsolab run` prints for each strategy: byte-identical for the same
// scenario and seed.

#ifndef VDSOLAB_SIM_RUN_REPORT_H_
#define VDSOLAB_SIM_RUN_REPORT_H_

#include <functional>
#include <string>
#include <vector>

#include "sim/engine.h"
#include "sim/exhaustive.h"
#include "sim/scenario.h"

namespace vdsolab::sim {

std::string FormatRunReport(const Scenario& scenario, const RunResult& result);
std::string FormatExploreReport(const Scenario& scenario,
                                const ExploreResult& result);

// A call's trace as text, one line per step (`line` formats one), for
// people: a trace longer than 200 steps (a reader looping until its
// budget) shows its first 120 and last 40 with the count left out between
// (`replay --trace=FILE` writes every step).
std::string FormatTraceSteps(
    const std::vector<TraceStep>& steps,
    const std::function<std::string(const TraceStep&)>& line);
// Choices for people: a run of 8 or more equal choices as one entry
// ("0 (x9996)"); the replay file keeps the list itself.
std::string FormatChoices(const std::vector<int>& choices);

// The first violation that fails the run (a defect or known kernel
// behaviour), if any.
const Violation* FirstFailure(const RunResult& result);

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_RUN_REPORT_H_
