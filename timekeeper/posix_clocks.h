// File: timekeeper/posix_clocks.h
//
// The clock_gettime() system call (kernel/time/posix-timers.c): clock-id
// dispatch to the timekeeper's readers, the alarm clocks
// (kernel/time/alarmtimer.c) and the CPU-time clocks
// (kernel/time/posix-cpu-timers.c). This is the oracle the vDSO readers are
// checked against, and the fallback they call.

#ifndef VDSOLAB_TIMEKEEPER_POSIX_CLOCKS_H_
#define VDSOLAB_TIMEKEEPER_POSIX_CLOCKS_H_

#include <cstdint>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "timekeeper/timekeeper.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/timens.h"

namespace vdsolab::timekeeper {

// What the syscall needs besides the timekeeper: the counter value it reads,
// and the calling task. CPU-time accounting is not modelled: the caller
// supplies the task's CPU time, and the PROF, VIRT and SCHED CPU clocks all
// return it.
struct SyscallContext {
  uint64_t cycles = 0;  // The clocksource read inside the syscall.
  int32_t tgid = 1000;  // The calling process.
  int32_t tid = 1000;   // The calling thread.
  int64_t process_cputime_ns = 0;
  int64_t thread_cputime_ns = 0;
  // The alarm clocks need an RTC device (alarmtimer_get_rtcdev()); without
  // one (the default here, as on virtual machines without an emulated RTC)
  // they answer -EINVAL.
  bool has_rtc = false;
  // With CONFIG_POSIX_AUX_CLOCKS (6.17+): the 8 aux clocks' timekeepers,
  // CLOCK_AUX + i reading aux_timekeepers[i]. nullptr: a kernel without
  // them (the default, as on the project's host), where ids 16..23 have no
  // kclock and answer -EINVAL.
  const Timekeeper* aux_timekeepers = nullptr;
  // The calling task's time namespace (CONFIG_TIME_NS); nullptr: the
  // initial namespace, whose offsets are zero.
  const TimensOffsets* timens = nullptr;
  // A kernel before 6.15: ktime_get_coarse_*() read tk_xtime()
  // (xtime_nsec >> shift at the last update), not coarse_nsec.
  bool coarse_pre615 = false;
};

// SYSCALL_DEFINE2(clock_gettime): 0 and the time, -EINVAL for an id
// without a kclock, -ENODEV for an aux clock that is not enabled.
// In a time namespace the MONOTONIC and BOOTTIME families are shifted by
// its offsets (timens_add_monotonic()/timens_add_boottime()).
ClockResult SysClockGettime(const Timekeeper& tk, ClockId which,
                            const SyscallContext& ctx);
inline ClockResult SysClockGettime(const Timekeeping& tk, ClockId which,
                                   const SyscallContext& ctx) {
  return SysClockGettime(tk.timekeeper(), which, ctx);
}

// SYSCALL_DEFINE2(gettimeofday) (kernel/time/time.c): the realtime clock
// (ktime_get_real_ts64()) in microseconds, and sys_tz. The model never
// sets a timezone (settimeofday() with one is not modelled), so sys_tz is
// its boot value, 0 minutes west and no DST, as the vvar page's
// tz_minuteswest/tz_dsttime. In a time namespace REALTIME is not shifted.
GtodResult SysGettimeofday(const Timekeeper& tk, const SyscallContext& ctx);

// SYSCALL_DEFINE1(time) (kernel/time/time.c): ktime_get_real_seconds(),
// the seconds of the last update (xtime_sec), whatever the counter says.
int64_t SysTime(const Timekeeper& tk);

// SYSCALL_DEFINE2(clock_getres) (kernel/time/posix-timers.c), by kclock:
// the hrtimer clocks (REALTIME, MONOTONIC, BOOTTIME, TAI, MONOTONIC_RAW)
// posix_get_hrtimer_res(), `hrtimer_res` ns (1 with high-resolution
// timers); the coarse clocks posix_get_coarse_res(), LOW_RES_NSEC
// (TICK_NSEC at `hz`); the CPU-time clocks posix_cpu_clock_getres() (1 ns
// for the SCHED clocks, TICK_NSEC rounded up for PROF and VIRT, -EINVAL for
// a task not found); the alarm clocks hrtimer_res with an RTC, else
// -EINVAL; an enabled aux clock (6.17+) 1 ns (aux_clock_resolution_ns()),
// -ENODEV when not enabled; -EINVAL for ids without a kclock. Not shifted
// by a namespace.
ClockResult SysClockGetres(ClockId which, const SyscallContext& ctx,
                           uint32_t hrtimer_res, int hz);

}  // namespace vdsolab::timekeeper

#endif  // VDSOLAB_TIMEKEEPER_POSIX_CLOCKS_H_
