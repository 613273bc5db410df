// File: host/inspect.h
//
// `vdsolab inspect`: the live vvar page decoded field by field (text or
// JSON), and, over several samples, what its updates reveal: the update
// period, HZ, cycle_interval, NTP steering, and whether the timekeeper
// model's tk_setup_internals() predicts the per-interval increments.

#ifndef VDSOLAB_HOST_INSPECT_H_
#define VDSOLAB_HOST_INSPECT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "host/live_vvar.h"

namespace vdsolab::host {

std::string DescribeSnapshotText(const LiveSnapshot& snap,
                                 const KernelVersion& kernel);
std::string DescribeSnapshotJson(const LiveSnapshot& snap,
                                 const KernelVersion& kernel);

// What consecutive distinct snapshots of the page show.
struct UpdateAnalysis {
  int samples = 0;
  int updates_seen = 0;           // Distinct seqs after the first.
  uint64_t min_step_cycles = 0;   // Smallest cycle_last step seen.
  uint64_t gcd_step_cycles = 0;   // Their greatest common divisor.
  uint64_t median_period_ns = 0;  // Counter time per update, median.
  int hz = 0;                     // CONFIG_HZ the steps agree with.
  // tk_setup_internals() from the raw mult/shift and that HZ.
  uint64_t predicted_cycle_interval = 0;
  uint64_t predicted_raw_interval = 0;  // Shifted ns per interval.
  int steps_whole_intervals = 0;        // Steps that are k * cycle_interval.
  int raw_increments_exact = 0;   // RAW advanced k * raw_interval exactly.
  int mono_increments_exact = 0;  // MONO advanced k * ci * mult exactly
  int mono_pairs_same_mult = 0;   // ...out of the pairs with one mult.
  // Updates off the tick grid (cycle_last moved by no whole cycle_interval,
  // or not at all): timekeeping_forward_now() from settime, adjtimex
  // ADJ_SETOFFSET, TAI or leap changes. Only raw mult/shift unchanged.
  int off_tick_updates = 0;
  // ...of which RAW advanced by exactly step * raw mult (forward_now's
  // identity, which tick accumulation satisfies too).
  int off_tick_raw_exact = 0;
  int clocksource_changes = 0;  // Raw mult or shift moved: not compared.
  bool ntp_steering = false;    // hres mult != raw mult somewhere.
  bool mult_moved = false;      // hres mult changed across samples.
  uint32_t raw_mult = 0;
  uint32_t shift = 0;
};

// `hz_hint`: CONFIG_HZ from clock_getres() (KernelHz()), or 0 to infer it
// from the smallest cycle_last step alone.
UpdateAnalysis AnalyzeUpdates(const std::vector<LiveSnapshot>& samples,
                              int hz_hint);
// Whether the page moved as tk_setup_internals() and tick accumulation
// predict: most updates whole cycle_intervals with exact increments, and
// every off-tick one consistent with timekeeping_forward_now().
bool PredictionHolds(const UpdateAnalysis& a);
std::string FormatUpdateAnalysis(const UpdateAnalysis& a);
std::string FormatUpdateAnalysisJson(const UpdateAnalysis& a);

}  // namespace vdsolab::host

#endif  // VDSOLAB_HOST_INSPECT_H_
