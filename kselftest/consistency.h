// File: kselftest/consistency.h
//
// inconsistency-check.c's consistency_test() on a SimHost: CALLS_PER_LOOP
// clock_gettime() calls back to back, every neighbour in order (tv_sec
// compared unsigned, as the kernel's test does for the 2038 rollover),
// repeated until the clock itself has run `seconds`. The kernel's test
// loops without pause (about 10^8 reads in 10 s); here the loops are a
// seeded random gap apart (`max_gap_ns`), so that a run crosses every
// phase of the tick in seconds of wall time. `between` runs before each
// read (skew_consistency.c's frequency flips, which land anywhere).

#ifndef VDSOLAB_KSELFTEST_CONSISTENCY_H_
#define VDSOLAB_KSELFTEST_CONSISTENCY_H_

#include <cstdint>
#include <functional>
#include <string>

#include "common/clockid.h"
#include "kselftest/sim_host.h"

namespace vdsolab::kselftest {

inline constexpr int kCallsPerLoop = 64;  // CALLS_PER_LOOP

struct ConsistencyResult {
  bool ok = true;
  bool clock_failed = false;  // clock_gettime() itself failed (skipped).
  uint64_t loops = 0;
  uint64_t reads = 0;
  std::string failure;  // The out-of-order pair, as the test prints it.
};

// `next_event` (optional) gives the true time `between` acts next: a gap
// never skips over it, so that it lands inside a loop as it does when the
// other process runs concurrently.
ConsistencyResult ConsistencyTest(
    SimHost& host, ClockId clock, int64_t seconds, uint64_t max_gap_ns,
    uint64_t seed, const std::function<void()>& between = {},
    const std::function<uint64_t()>& next_event = {});

// a and b in order, as inconsistency-check.c's in_order().
bool InOrder(const Timespec64& a, const Timespec64& b);

}  // namespace vdsolab::kselftest

#endif  // VDSOLAB_KSELFTEST_CONSISTENCY_H_
