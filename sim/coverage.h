// File: sim/coverage.h
//
// What a run measured besides its property checks: how often the
// interesting regimes happened (for reports and RC_CLASSIFY), and how far
// clocks without a kernel oracle drift from CLOCK_MONOTONIC_RAW.

#ifndef VDSOLAB_SIM_COVERAGE_H_
#define VDSOLAB_SIM_COVERAGE_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/clockid.h"

namespace vdsolab::sim {

// How far a clock without a kernel oracle (a user-space clock, or one a
// variant adds) drifts from CLOCK_MONOTONIC_RAW: its advance minus RAW's
// advance since its first read, at the same counter values.
struct Divergence {
  std::string name;  // The clock's name.
  uint64_t samples = 0;
  __int128 max_abs_ns = 0;  // Largest |divergence| seen.
  __int128 last_ns = 0;     // At the last sample...
  __int128 span_ns = 0;     // ...after this much RAW time.
  // (RAW time, divergence) now and then, for a plot: at least 1 ms of RAW
  // time and 2% of the span apart, so a day-long run keeps a few hundred.
  std::vector<std::pair<__int128, __int128>> series;
  // Parts per billion at the last sample (0 before any RAW time passed).
  double ppb() const {
    return span_ns == 0 ? 0.0
                        : static_cast<double>(last_ns) * 1e9 /
                              static_cast<double>(span_ns);
  }
};

// How often the interesting regimes happened (for reports and RC_CLASSIFY).
struct Coverage {
  uint64_t calls = 0;
  uint64_t vdso_answers = 0;
  uint64_t fallbacks = 0;
  uint64_t errors = 0;
  uint64_t retries = 0;     // Calls that looped more than once.
  uint64_t raced = 0;       // Calls with writer stores landing mid-call.
  uint64_t migrations = 0;  // Between calls.
  uint64_t midcall_migrations = 0;
  uint64_t preemptions = 0;
  // faults.reorder_ppm: loads that saw an earlier page state.
  uint64_t reordered_loads = 0;
  uint64_t negative_motion = 0;    // Counter behind the state's cycle_last.
  uint64_t beyond_max_cycles = 0;  // Counter past cycle_last + max_cycles.
  uint64_t counter_wrapped = 0;    // Counter below its value at boot,
                                   // wrapped past its width.
  uint64_t cross_cpu_reads = 0;    // Counter from a CPU other than the
                                   // timekeeping CPU.
  uint64_t livelocks = 0;
  uint64_t crashes = 0;  // Calls of foreign code that died of a signal.
  // Calls from readers in the time namespace that returned a time (judged
  // on the initial namespace's timeline: Checker::Unshift()).
  uint64_t timens_calls = 0;
  // kvm-clock machines: calls answered through the pvclock page, and those
  // during which a pvclock rewrite's store landed.
  uint64_t pvclock_reads = 0;
  uint64_t pvclock_raced = 0;
  // Per clock: calls answered from the page, by the syscall, and errors
  // the page path returned itself.
  std::map<ClockId, std::array<uint64_t, 3>> per_clock;
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_COVERAGE_H_
