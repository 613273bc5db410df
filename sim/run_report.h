// File: sim/run_report.h
//
// What `vdsolab run` prints for each strategy: byte-identical for the same
// scenario and seed.

#ifndef VDSOLAB_SIM_RUN_REPORT_H_
#define VDSOLAB_SIM_RUN_REPORT_H_

#include <string>

#include "sim/engine.h"
#include "sim/exhaustive.h"
#include "sim/scenario.h"

namespace vdsolab::sim {

std::string FormatRunReport(const Scenario& scenario, const RunResult& result);
std::string FormatExploreReport(const Scenario& scenario,
                                const ExploreResult& result);

// The first violation that fails the run (a defect or known kernel
// behaviour), if any.
const Violation* FirstFailure(const RunResult& result);

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_RUN_REPORT_H_
