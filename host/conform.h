// File: host/conform.h
//
// `vdsolab conform`: the host's own vDSO clock_gettime() against vdsolab's
// upstream reader, bit for bit, on the same page bytes and the same counter.
//
// In a child process (so nothing leaks), the host's vDSO code is copied
// next to a copy of the vvar area, at the same distances as the kernel maps
// them (the vDSO reaches its data RIP-relative, so the copy reads the
// copied page), and every rdtsc/rdtscp in its .text is replaced by ud2 (+
// nop), whose SIGILL a handler answers with the counter value we choose.
// (prctl(PR_SET_TSC, PR_TSC_SIGSEGV) is the other way to trap the counter;
// on this project's Firecracker/AMD host it succeeds but rdtsc still does
// not fault, so vdsolab does not rely on it.)
//
// For each sample: copy the live time page (and the pvclock page, on
// kvm-clock) consistently under its seq (and version) protocol, retrying
// when the kernel updates it mid-copy; choose counter values in every regime
// (the live counter; ahead of cycle_last within max_cycles; beyond
// max_cycles; behind cycle_last; near 2^62 and 2^63); call the host code for
// every clock it serves, and vdsolab's reader on the same bytes with the
// same value. Then the same on synthetic pages in clock mode TSC that the
// timekeeper model publishes (so the host's TSC arithmetic is exercised with
// realistic mult/shift even where the host runs kvm-clock).

#ifndef VDSOLAB_HOST_CONFORM_H_
#define VDSOLAB_HOST_CONFORM_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clockid.h"
#include "host/inspect.h"

namespace vdsolab::host {

enum class Regime {
  kLive,             // The counter now.
  kAhead,            // cycle_last .. cycle_last + max_cycles.
  kBeyondMaxCycles,  // The overflow-safe multiply.
  kBehind,           // Negative motion: below cycle_last.
  kNear2p62,         // cycle_last + 2^62 and just past it.
  kNear2p63,         // TSC near 2^63 (its sign bit); on kvm-clock, TSC
                     // deltas past 2^63 + 2^62.
  kFarBehind,        // On kvm-clock, a TSC before the hypervisor's
                     // tsc_timestamp; in TSC mode, ~2^40 behind cycle_last.
};
inline constexpr int kNumRegimes = 7;
const char* RegimeName(Regime r);

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
