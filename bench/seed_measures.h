// File: bench/seed_measures.h
//
// The seeds' own measurements, reimplemented over any clock source:
// - TimerLatency: seed 000/001's timer_latency.c: N_SAMPLES (100) calls in a
//   row, the average gap between successive results, the zero deltas and
//   the inconsistencies (a result below the previous one), repeated.
// - CallsInInterval: seed 003's test: how many calls fit in an interval,
//   each call's own result deciding when the interval is over.
// - CyclesPerCall: seed 002's method: rdtsc before and after each call,
//   averaged.

#ifndef VDSOLAB_BENCH_SEED_MEASURES_H_
#define VDSOLAB_BENCH_SEED_MEASURES_H_

#include <cstdint>
#include <functional>

namespace vdsolab::bench {

// One call of the clock under test: its result in ns (sec * 1e9 + nsec).
using ClockCall = std::function<uint64_t()>;

struct LatencyResult {
  double average_latency_ns = 0;  // Mean of the per-run averages.
  uint64_t zero_deltas = 0;       // Over all runs.
  uint64_t inconsistencies = 0;
  int runs = 0;
};
LatencyResult TimerLatency(const ClockCall& call, int repeat,
                           int samples = 100);

// Calls made until the clock's own result passed start + interval_ns.
uint64_t CallsInInterval(const ClockCall& call, uint64_t interval_ns);

// The mean TSC cycles between an rdtsc before and one after each call.
double CyclesPerCall(const ClockCall& call, int iterations);

}  // namespace vdsolab::bench

#endif  // VDSOLAB_BENCH_SEED_MEASURES_H_
