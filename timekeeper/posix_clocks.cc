#include "timekeeper/posix_clocks.h"

#include "timekeeper/readers.h"

namespace vdsolab::timekeeper {
namespace {

// CPU-clock id encoding (include/linux/posix-timers_types.h).
constexpr int32_t kCpuclockPerthreadMask = 4;
constexpr int32_t kCpuclockClockMask = 3;
constexpr int32_t kCpuclockMax = 3;
constexpr int32_t kClockfd = 3;
constexpr int32_t kClockfdMask = kCpuclockPerthreadMask | kCpuclockClockMask;

int32_t CpuclockPid(ClockId clock) { return ~(clock >> 3); }
bool CpuclockPerthread(ClockId clock) {
  return (clock & kCpuclockPerthreadMask) != 0;
}
int32_t CpuclockWhich(ClockId clock) { return clock & kCpuclockClockMask; }

// posix_cpu_clock_get() with pid_for_clock(clock, gettime=true), for a
// simulated process with one thread.
ClockResult CpuClockGet(ClockId clock, const SyscallContext& ctx) {
  if (CpuclockWhich(clock) >= kCpuclockMax) return ClockResult::Error(-kEinval);
  const int32_t upid = CpuclockPid(clock);
  const bool thread = CpuclockPerthread(clock);
  bool found;
  if (upid == 0) {
    found = true;
  } else if (thread) {
    found = upid == ctx.tid;
  } else {
    found = upid == ctx.tgid || upid == ctx.tid;
  }
  if (!found) return ClockResult::Error(-kEinval);
  return ClockResult::Ok(
      NsToTimespec64(thread ? ctx.thread_cputime_ns : ctx.process_cputime_ns));
}

// MAKE_PROCESS_CPUCLOCK(0, CPUCLOCK_SCHED) and MAKE_THREAD_CPUCLOCK(0, ...).
constexpr ClockId kProcessSchedClock = (~0 << 3) | 2;
constexpr ClockId kThreadSchedClock = (~0 << 3) | kCpuclockPerthreadMask | 2;

// The clocks as the initial time namespace sees them.
ClockResult ClockGettimeInitNs(const Timekeeper& tk, ClockId which,
                               const SyscallContext& ctx) {
  // clockid_to_kclock(): negative ids are CPU clocks or fd-based clocks.
  if (which < 0) {
    if ((which & kClockfdMask) == kClockfd) {
      // A posix dynamic clock needs an open fd; the model has none.
      return ClockResult::Error(-kEinval);
    }
    return CpuClockGet(which, ctx);
  }
  const uint64_t cycles = ctx.cycles;
  switch (which) {
    case kClockRealtime:  // posix_get_realtime_timespec()
      return ClockResult::Ok(KtimeGetRealTs64(tk, cycles));
    case kClockMonotonic:  // posix_get_monotonic_timespec()
      return ClockResult::Ok(KtimeGetTs64(tk, cycles));
    case kClockProcessCputimeId:
      return CpuClockGet(kProcessSchedClock, ctx);
    case kClockThreadCputimeId:
      return CpuClockGet(kThreadSchedClock, ctx);
    case kClockMonotonicRaw:
      return ClockResult::Ok(KtimeGetRawTs64(tk, cycles));
    case kClockRealtimeCoarse:
      return ClockResult::Ok(ctx.coarse_pre615 ? TkXtimePre615(tk)
                                               : KtimeGetCoarseRealTs64(tk));
    case kClockMonotonicCoarse:
      return ClockResult::Ok(ctx.coarse_pre615 ? KtimeGetCoarseTs64Pre615(tk)
                                               : KtimeGetCoarseTs64(tk));
    case kClockBoottime:
      return ClockResult::Ok(KtimeGetBoottimeTs64(tk, cycles));
    case kClockRealtimeAlarm:  // alarm_clock_get_timespec()
      if (!ctx.has_rtc) return ClockResult::Error(-kEinval);
      return ClockResult::Ok(
          NsToTimespec64(KtimeGetWithOffset(tk, TkOffset::kReal, cycles)));
    case kClockBoottimeAlarm:
      if (!ctx.has_rtc) return ClockResult::Error(-kEinval);
      return ClockResult::Ok(KtimeGetBoottimeTs64(tk, cycles));
    case kClockTai:
      return ClockResult::Ok(KtimeGetClocktaiTs64(tk, cycles));
    default:
      // clock_aux's aux_get_timespec() (6.17+, CONFIG_POSIX_AUX_CLOCKS).
      if (which >= kClockAux && which <= kClockAuxLast &&
          ctx.aux_timekeepers != nullptr) {
        const std::optional<Ktime> aux =
            KtimeGetAux(ctx.aux_timekeepers[which - kClockAux], cycles);
        if (!aux) return ClockResult::Error(-kEnodev);
        return ClockResult::Ok(NsToTimespec64(*aux));
      }
      // CLOCK_SGI_CYCLE has no kclock; ids past CLOCK_TAI have none either
      // (or, for aux clocks, none enabled).
      return ClockResult::Error(-kEinval);
  }
}

}  // namespace

ClockResult SysClockGettime(const Timekeeper& tk, ClockId which,
                            const SyscallContext& ctx) {
  ClockResult r = ClockGettimeInitNs(tk, which, ctx);
  if (ctx.timens != nullptr && r.ret == 0) {
    r.ts = TimensAdd(which, *ctx.timens, r.ts);
  }
  return r;
}

GtodResult SysGettimeofday(const Timekeeper& tk, const SyscallContext& ctx) {
  // sys_tz: 0, 0 (see the header).
  return GtodFromRealtime(KtimeGetRealTs64(tk, ctx.cycles));
}

int64_t SysTime(const Timekeeper& tk) {
  return static_cast<int64_t>(tk.xtime_sec);
}

ClockResult SysClockGetres(ClockId which, const SyscallContext& ctx,
                           uint32_t hrtimer_res, int hz) {
  // TICK_NSEC: (NSEC_PER_SEC + HZ / 2) / HZ, include/linux/jiffies.h.
  const int64_t tick_nsec = (1000000000LL + hz / 2) / hz;
  const auto ns = [](int64_t n) { return ClockResult::Ok(Timespec64{0, n}); };
  if (which < 0) {
    if ((which & kClockfdMask) == kClockfd) return ClockResult::Error(-kEinval);
    // posix_cpu_clock_getres(): the task must exist (pid_for_clock()).
    const ClockResult found = CpuClockGet(which, ctx);
    if (found.ret != 0) return found;
    // (NSEC_PER_SEC + HZ - 1) / HZ; 1 for CPUCLOCK_SCHED.
    return ns(CpuclockWhich(which) == 2 ? 1 : (1000000000LL + hz - 1) / hz);
  }
  switch (which) {
    case kClockRealtime:
    case kClockMonotonic:
    case kClockMonotonicRaw:
    case kClockBoottime:
    case kClockTai:
      return ns(hrtimer_res);
    case kClockRealtimeCoarse:
    case kClockMonotonicCoarse:
      return ns(tick_nsec);
    case kClockProcessCputimeId:
    case kClockThreadCputimeId:
      return ns(1);  // The SCHED clocks of the calling process and thread.
    case kClockRealtimeAlarm:
    case kClockBoottimeAlarm:
      if (!ctx.has_rtc) return ClockResult::Error(-kEinval);
      return ns(hrtimer_res);
    default:
      if (which >= kClockAux && which <= kClockAuxLast &&
          ctx.aux_timekeepers != nullptr) {
        // aux_get_res(): -ENODEV unless the aux clock is enabled, then
        // aux_clock_resolution_ns() (include/vdso/auxclock.h): 1 ns.
        if (!KtimeGetAux(ctx.aux_timekeepers[which - kClockAux], ctx.cycles)) {
          return ClockResult::Error(-kEnodev);
        }
        return ns(1);
      }
      return ClockResult::Error(-kEinval);
  }
}

}  // namespace vdsolab::timekeeper
