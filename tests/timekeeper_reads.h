// File: tests/timekeeper_reads.h
//
// Reads of the timekeeper model's syscall clocks that several property
// tests compare (inside a rapidcheck property: failures are RC_ASSERTs).

#ifndef VDSOLAB_TESTS_TIMEKEEPER_READS_H_
#define VDSOLAB_TESTS_TIMEKEEPER_READS_H_

#include <rapidcheck.h>

#include <cstdint>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeping.h"

namespace vdsolab::testing {

// REALTIME - MONOTONIC at `counter`, in ns: what settime and
// ADJ_SETOFFSET move, and a leap second steps.
inline __int128 RealMinusMono(const timekeeper::Timekeeping& k,
                              uint64_t counter) {
  timekeeper::SyscallContext ctx;
  ctx.cycles = counter;
  const ClockResult r = timekeeper::SysClockGettime(k, kClockRealtime, ctx);
  const ClockResult m = timekeeper::SysClockGettime(k, kClockMonotonic, ctx);
  RC_ASSERT(r.ret == 0);
  RC_ASSERT(m.ret == 0);
  return (static_cast<__int128>(r.ts.tv_sec) - m.ts.tv_sec) * 1000000000 +
         (r.ts.tv_nsec - m.ts.tv_nsec);
}

}  // namespace vdsolab::testing

#endif  // VDSOLAB_TESTS_TIMEKEEPER_READS_H_
