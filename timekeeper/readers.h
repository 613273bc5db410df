// File: timekeeper/readers.h
//
// The timekeeper's syscall-path readers (kernel/time/timekeeping.c, 6.15+),
// as functions of a timekeeper state and a counter value. They are the
// oracle every vDSO reader is checked against, and the vDSO's fallback. A
// reader here sees `tk` as one consistent state: what a kernel reader gets
// inside read_seqcount_begin/retry(&tk_core.seq).

#ifndef VDSOLAB_TIMEKEEPER_READERS_H_
#define VDSOLAB_TIMEKEEPER_READERS_H_

#include <cstdint>
#include <optional>

#include "common/timespec.h"
#include "timekeeper/timekeeper.h"

namespace vdsolab::timekeeper {

// enum tk_offsets.
enum class TkOffset { kReal, kBoot, kTai };

// timekeeping_cycles_to_ns() (6.10+): shifted-ns time since the last second
// boundary at `cycles`, with the negative-motion clamp and the overflow-safe
// multiply for deltas beyond max_cycles.
uint64_t TimekeepingCyclesToNs(const TkReadBase& tkr, uint64_t cycles);

Timespec64 KtimeGetRealTs64(const Timekeeper& tk, uint64_t cycles);
Timespec64 KtimeGetTs64(const Timekeeper& tk, uint64_t cycles);
Timespec64 KtimeGetRawTs64(const Timekeeper& tk, uint64_t cycles);
// ktime_get_with_offset(): ktime arithmetic wraps like the kernel's.
Ktime KtimeGetWithOffset(const Timekeeper& tk, TkOffset offs, uint64_t cycles);
Timespec64 KtimeGetBoottimeTs64(const Timekeeper& tk, uint64_t cycles);
Timespec64 KtimeGetClocktaiTs64(const Timekeeper& tk, uint64_t cycles);
Timespec64 KtimeGetCoarseRealTs64(const Timekeeper& tk);
Timespec64 KtimeGetCoarseTs64(const Timekeeper& tk);

// ktime_get_aux() (6.17+): an aux clock's time, base + offs_aux + the
// counter's ns; nullopt while the clock is not enabled (clock_valid false).
std::optional<Ktime> KtimeGetAux(const Timekeeper& tk, uint64_t cycles);

// ktime_get_update_offsets_now(): what hrtimer_interrupt() sees. Returns
// MONOTONIC at `cycles`, refreshes the cached offsets when the clock was set
// since *cwsseq, and while an armed leap second insertion is due (MONOTONIC
// past next_leap_ktime) but no tick has applied it yet, reports offs_real
// one second earlier, so that an absolute CLOCK_REALTIME timer does not
// expire in the repeated second.
struct HrtimerOffsets {
  uint32_t cwsseq = ~0u;  // The clock_was_set_seq these belong to.
  Ktime offs_real = 0;
  Ktime offs_boot = 0;
  Ktime offs_tai = 0;
};
// `leap_adjust` false models kernels before 4.2's "time: Prevent early
// expiry of hrtimers[CLOCK_REALTIME] at the leap second edge".
Ktime KtimeGetUpdateOffsetsNow(const Timekeeper& tk, uint64_t cycles,
                               HrtimerOffsets* offsets,
                               bool leap_adjust = true);

// Before 6.15 the coarse clocks read tk_xtime(): xtime_sec and
// tkr_mono.xtime_nsec >> shift at the last update (no coarse_nsec). The
// oracle for readers of those eras.
Timespec64 TkXtimePre615(const Timekeeper& tk);
Timespec64 KtimeGetCoarseTs64Pre615(const Timekeeper& tk);

}  // namespace vdsolab::timekeeper

#endif  // VDSOLAB_TIMEKEEPER_READERS_H_
