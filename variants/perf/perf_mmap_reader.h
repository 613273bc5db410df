// File: variants/perf/perf_mmap_reader.h
//
// The user-space side: the self-monitoring read loop documented on struct
// perf_event_mmap_page (include/uapi/linux/perf_event.h) with its
// cap_user_time_zero conversion of a TSC value to perf time, the clock Peter
// Zijlstra pointed Jason Vas Dias to in seed 000 (March 2018): "You could
// read the time using the group_fd's mmap() page. That actually includes the
// TSC mult,shift,offset as used by perf clocks."
//
// Faithful to the documented loop, which differs from a vDSO seq loop:
// - The counter is a bare rdtsc() (user space has no rdtsc_ordered()).
// - The loop does not wait for an even lock: the kernel writes the page
//   from the reader's own CPU, so a self-monitoring reader never sees a
//   write in progress. A reader on another CPU that starts and finishes
//   inside one write sees lock odd twice, equal, and keeps what it read.
//   (tools/perf's perf_read_tsc_conversion() adds `!(seq & 1)`; the
//   header's loop does not.)
// - Only the fields the timestamp needs are read: the counter part
//   (index, offset, rdpmc) and time_enabled/time_running are left out.

#ifndef VDSOLAB_VARIANTS_PERF_PERF_MMAP_READER_H_
#define VDSOLAB_VARIANTS_PERF_PERF_MMAP_READER_H_

#include <cstdint>
#include <optional>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/math64.h"
#include "variants/perf/perf_mmap_page.h"
#include "vdso/access.h"

namespace vdsolab::variants::perf {

// The variant's own clock id: not a kernel clock id (no syscall serves it).
inline constexpr ClockId kClockPerfTime = 0x10100;

// EOPNOTSUPP: what tools/perf's perf_read_tsc_conversion() returns when the
// page says !cap_user_time_zero.
inline constexpr int32_t kEopnotsupp = 95;

// What one pass of the loop read.
struct PerfTimeConversion {
  uint64_t capabilities = 0;
  uint64_t cyc = 0;
  uint64_t time_zero = 0;
  uint32_t time_mult = 0;
  uint16_t time_shift = 0;
  uint64_t time_cycles = 0;
  uint64_t time_mask = 0;
};

// The header's "timestamp = time_zero + quot * time_mult +
// ((rem * time_mult) >> time_shift)", with the cap_user_time_short
// correction first. u64 arithmetic wraps as the C does. x86 shifts take the
// count mod 64 (the C would be undefined past 63; the kernel publishes at
// most 31).
inline uint64_t TscToPerfTime(const PerfTimeConversion& tc) {
  uint64_t cyc = tc.cyc;
  if ((tc.capabilities & kCapUserTimeShort) != 0) {
    cyc = tc.time_cycles + ((cyc - tc.time_cycles) & tc.time_mask);
  }
  const uint32_t shift = tc.time_shift & 63u;
  const uint64_t quot = cyc >> shift;
  const uint64_t rem = cyc & ((uint64_t{1} << shift) - 1);
  return tc.time_zero + quot * tc.time_mult + ((rem * tc.time_mult) >> shift);
}

// The documented self-monitoring loop. nullopt: the access policy stopped
// the retries.
template <vdso::VdsoAccess A>
std::optional<PerfTimeConversion> ReadPerfTime(A& acc, const uint8_t* pc) {
  PerfTimeConversion tc;
  uint32_t seq;
  for (;;) {
    seq = acc.template Load<uint32_t>(pc + kPcLock);
    // barrier(): pairs with the writer's barrier() after ++lock.
    acc.Rmb();
    tc.capabilities = acc.template Load<uint64_t>(pc + kPcCapabilities);
    if ((tc.capabilities & kCapUserTimeZero) != 0) {
      tc.cyc = acc.ReadTscPlain();  // rdtsc(), as the header's example.
      tc.time_zero = acc.template Load<uint64_t>(pc + kPcTimeZero);
      tc.time_mult = acc.template Load<uint32_t>(pc + kPcTimeMult);
      tc.time_shift = acc.template Load<uint16_t>(pc + kPcTimeShift);
      if ((tc.capabilities & kCapUserTimeShort) != 0) {
        tc.time_cycles = acc.template Load<uint64_t>(pc + kPcTimeCycles);
        tc.time_mask = acc.template Load<uint64_t>(pc + kPcTimeMask);
      }
    }
    // barrier(): pairs with the writer's barrier() before its final ++lock.
    acc.Rmb();
    if (acc.template Load<uint32_t>(pc + kPcLock) == seq) break;
    if (!acc.MayRetry()) return std::nullopt;
  }
  return tc;
}

// clock_gettime()-like entry point for the variant: the perf timestamp as
// sec = ns / 1e9, nsec = ns % 1e9; -EOPNOTSUPP when the kernel does not
// publish user time (TSC not the stable sched clock).
template <vdso::VdsoAccess A>
std::optional<ClockResult> PerfClockGettime(A& acc, const uint8_t* page,
                                            ClockId clock) {
  if (clock != kClockPerfTime) return acc.Fallback(clock);
  const std::optional<PerfTimeConversion> tc = ReadPerfTime(acc, page);
  if (!tc) return std::nullopt;
  if ((tc->capabilities & kCapUserTimeZero) == 0) {
    return ClockResult::Error(-kEopnotsupp);
  }
  const uint64_t ns = TscToPerfTime(*tc);
  return ClockResult::Ok(Timespec64{static_cast<int64_t>(ns / kNsecPerSec),
                                    static_cast<int64_t>(ns % kNsecPerSec)});
}

}  // namespace vdsolab::variants::perf

#endif  // VDSOLAB_VARIANTS_PERF_PERF_MMAP_READER_H_
