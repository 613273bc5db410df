// File: cli/default_races.h
//
// The races the default job runs after its oracle check (default_command.cc).
// The oracle check reads between vvar updates, never during one: a reader
// without its smp_rmb(), its seq retry or the seq protocol on its coarse
// clocks passed it. These race the variant's page clocks against updates:
// every interleaving of one call of each with the next two updates across a
// second boundary (exhaustive, partial-order reduced), then two preempted
// readers on two CPUs against a stalling writer with relaxed ordering, a
// TAI offset and a suspend (the shape of scenarios/relaxed-ordering.toml,
// shorter), then a reader on a CPU whose counter is behind the timekeeping
// CPU's (negative motion, the shape of scenarios/skewed-cpus.toml without
// migration), then reads
// every nanosecond across the turn of a second on a 1 GHz counter (the one
// value a normalisation off by one gets wrong), then reads after a VM
// pause past the TSC's max_cycles with the timekeeping CPU idle (the
// overflow-safe multiply, which nothing else reaches; the shape of
// scenarios/pause-past-max-cycles.toml), then reads with the counter's
// bit 63 set and across its wrap past 2^64 (counter-wrap.toml's shape),
// then two preempted readers on kvm-clock with the pvclock page's stable
// bit flipping (kvm-stable-toggle.toml's), and, for a variant that follows
// time namespaces, readers in one (time-namespace.toml's). Those three
// are where lib/vdso takes its fallback or its namespace path: a patch
// that loses the fast path there (fast_path) or misreads the namespace
// page fails in them.

#ifndef VDSOLAB_CLI_DEFAULT_RACES_H_
#define VDSOLAB_CLI_DEFAULT_RACES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/clockid.h"
#include "sim/scenario.h"

namespace vdsolab::cli {

struct RaceStage {
  sim::Scenario scenario;
  std::string what;  // What it races, for the report's line.
  // Where a property broke when it fails, for the verdict (a stage's own
  // shape, not the defect's cause: a race can break a property anywhere):
  // "the races with updates".
  std::string where;
};

// A variant's own clocks' names, by id (plugin ABI v4).
using ClockNames = std::map<ClockId, std::string>;

// The stages for `clocks` (those the oracle check saw the page answer), on
// the oracle check's machine (TSC rate) and seed; the time namespace's
// only for a variant that follows namespaces (`timens`: Variant::timens).
// `own` names the variant's own clocks among them (each read against the
// counter, raced as the kernel's hres clocks are).
std::vector<RaceStage> DefaultRaceStages(const std::vector<ClockId>& clocks,
                                         uint64_t tsc_hz, uint64_t seed,
                                         bool timens,
                                         const ClockNames& own = {});

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_DEFAULT_RACES_H_
