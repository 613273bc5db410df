// File: sim/run_report.h
//
// What `vdsolab run` and `vdsolab replay` print, and the minimal replay
// scenario written for a failure.

#ifndef VDSOLAB_SIM_RUN_REPORT_H_
#define VDSOLAB_SIM_RUN_REPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "sim/engine.h"
#include "sim/scenario.h"

namespace vdsolab::sim {

// The run's report; byte-identical for the same scenario and seed.
std::string FormatRunReport(const Scenario& scenario, const RunResult& result);

// The first violation that fails the run (a defect or known kernel
// behaviour), if any.
const Violation* FirstFailure(const RunResult& result);

// A smaller scenario that still shows `failure` at the same reader call:
// the run cut short after that call, and readers and events it does not
// need removed. Carries a [replay] section naming the call.
absl::StatusOr<Scenario> MinimizeFailure(const Scenario& scenario,
                                         const variants::Variant& variant,
                                         const Violation& failure);

// Replays `scenario` (which must carry [replay]): the failing call step by
// step, with the page state at the counter read and the interleaving of
// writer stores. `reproduced` says whether the named violation recurred.
absl::StatusOr<std::string> ReplayFailure(const Scenario& scenario,
                                          const variants::Variant& variant,
                                          bool* reproduced);

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_RUN_REPORT_H_
