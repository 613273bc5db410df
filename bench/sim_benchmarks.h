// File: bench/sim_benchmarks.h
//
// The simulator's own speed: simulated reads per second without and with
// random injection (preemption, writer stalls, migration, early counter
// reads), and interleavings per second in exhaustive mode.

#ifndef VDSOLAB_BENCH_SIM_BENCHMARKS_H_
#define VDSOLAB_BENCH_SIM_BENCHMARKS_H_

namespace vdsolab::bench {

void RegisterSimBenchmarks(bool quick);

}  // namespace vdsolab::bench

#endif  // VDSOLAB_BENCH_SIM_BENCHMARKS_H_
