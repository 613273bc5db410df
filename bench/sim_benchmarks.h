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

#include <time.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario.h"

namespace vdsolab::bench {

// The benchmark's name for an exhaustive shape, reduction and update count.
std::string ExhaustiveShapeBench(sim::ExhaustiveShape shape,
                                 sim::Reduction reduction, int updates);

// The host's __vdso_clock_gettime, called through its address.
using HostClockGettime = int (*)(clockid_t, struct timespec*);

// With `host_vdso` (nullptr: not registered), the no-injection and the
// injection scenarios also run in alternation with as many host MONOTONIC
// calls as they make reads: the counter "ratio" of kPairedNoInjection and
// kPairedInjection is the median over those pairs of simulated ÷ host time
// per read.
inline constexpr char kPairedNoInjection[] = "sim/paired_host/no_injection";
inline constexpr char kPairedInjection[] = "sim/paired_host/injection";
// The no-injection scenario with its property checks and without, in
// alternation: "ratio" is the median of checked ÷ unchecked time, from
// which the report splits a read's time into engine and checker (two
// separate benchmarks seconds apart can even measure the unchecked run
// slower on these VMs).
inline constexpr char kPairedChecks[] = "sim/paired_checks";
void RegisterSimBenchmarks(bool quick, const uint8_t* upstream_page,
                           HostClockGettime host_vdso);

// A kernel tree's own vDSO code (ktree) against the built-in reader of its
// era, in the same random scenario as sim/random_no_injection: per tree (a
// source directory or tarball) one benchmark of each, named by
// TreeBench(version, era) and TreeBuiltinBench(era), and one that runs the
// two in alternation, TreePairBench(version, era), whose counter "ratio"
// is the median of tree ÷ built-in time per pair of runs. Returns one line
// per tree that could not be built or loaded.
std::vector<std::string> RegisterTreeBenchmarks(
    bool quick, const std::vector<std::string>& trees);
std::string TreeBench(const std::string& version, const std::string& era);
std::string TreeBuiltinBench(const std::string& era);
std::string TreePairBench(const std::string& version, const std::string& era);

}  // namespace vdsolab::bench

#endif  // VDSOLAB_BENCH_SIM_BENCHMARKS_H_
