// File: bench/sim_benchmarks.h
//
// The simulator's own speed: simulated reads per second without and with
// random injection (preemption, writer stalls, migration, early counter
// reads), and interleavings per second in exhaustive mode; and where a
// simulated read's time goes: the reader through the hook policy alone
// (on `upstream_page`, the upstream variant's live page; skipped if null),
// and the engine with every check off; and the exhaustive strategy's time
// against updates (1-4) for each shape, with and without partial-order
// reduction.

#ifndef VDSOLAB_BENCH_SIM_BENCHMARKS_H_
#define VDSOLAB_BENCH_SIM_BENCHMARKS_H_

#include <cstdint>
#include <string>

#include "sim/scenario.h"

namespace vdsolab::bench {

// The benchmark's name for an exhaustive shape, reduction and update count.
std::string ExhaustiveShapeBench(sim::ExhaustiveShape shape,
                                 sim::Reduction reduction, int updates);

void RegisterSimBenchmarks(bool quick, const uint8_t* upstream_page);

}  // namespace vdsolab::bench

#endif  // VDSOLAB_BENCH_SIM_BENCHMARKS_H_
