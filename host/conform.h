// File: host/conform.h
//
// `vdsolab conform`: the host's own vDSO clock_gettime() against vdsolab's
// upstream reader, bit for bit, on the same page bytes and the same counter.
//
// Three pieces: the sandbox (host/conform_sandbox.h: a child process, the
// host's vDSO code copied with its counter reads trapped), the counter
// regimes (host/counter_regimes.h) and the experiment
// (host/conform_experiment.h: copy the page, run the host's code and
// vdsolab's reader, compare), which reports to this side in typed records
// (host/conform_messages.h).

#ifndef VDSOLAB_HOST_CONFORM_H_
#define VDSOLAB_HOST_CONFORM_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clockid.h"
#include "host/counter_regimes.h"
#include "host/inspect.h"

namespace vdsolab::host {

struct ConformOptions {
  int samples = 2500;           // Page copies; each covers clocks x regimes.
  int analysis_samples = 120;   // Snapshots for the update analysis.
  int synthetic_samples = 500;  // Model-made TSC pages to compare on too.
  uint64_t seed = 1;
};

struct ConformCell {
  uint64_t compared = 0;
  uint64_t mismatches = 0;
};

struct ConformReport {
  bool supported = false;
  std::string skip_reason;  // Why the host cannot be used, if it cannot.
  std::string kernel;
  std::string clock_mode;                                // "TSC" or "PVCLOCK".
  std::map<std::pair<ClockId, int>, ConformCell> cells;  // (clock, regime)
  uint64_t compared = 0;
  uint64_t mismatches = 0;
  uint64_t page_races = 0;     // Copies retried after a kernel update.
  uint64_t counter_traps = 0;  // Counter reads the handler emulated.
  int patched_sites = 0;       // rdtsc/rdtscp instructions replaced.
  // The same on synthetic TSC pages (timekeeper model, clock mode TSC).
  std::map<std::pair<ClockId, int>, ConformCell> synthetic_cells;
  uint64_t synthetic_compared = 0;
  uint64_t synthetic_mismatches = 0;
  std::vector<std::string> mismatch_details;  // The first few.
  UpdateAnalysis analysis;
  bool prediction_holds = false;
  double seconds = 0;
};

// Runs the conformance pass in a child process.
absl::StatusOr<ConformReport> RunConform(const ConformOptions& options);

std::string FormatConformReport(const ConformReport& report);

}  // namespace vdsolab::host

#endif  // VDSOLAB_HOST_CONFORM_H_
