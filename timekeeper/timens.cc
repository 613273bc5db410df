// File: timekeeper/timens.cc

#include "timekeeper/timens.h"

#include "common/clock_result.h"

namespace vdsolab::timekeeper {

// Models proc_timens_set_offset()'s checks for one offset.
int TimensSetOffset(ClockId clock, const Timespec64& val, const Timespec64& now,
                    TimensOffsets* offsets) {
  if (clock != kClockMonotonic && clock != kClockBoottime) return -kEinval;
  if (val.tv_nsec < 0 || val.tv_nsec >= 1000000000) return -kEinval;
  if (val.tv_sec > kKtimeSecMax || val.tv_sec < -kKtimeSecMax) return -kErange;
  // KTIME_SEC_MAX / 2 keeps KTIME_MAX out of reach of the shifted clock.
  const Timespec64 tp = Timespec64Add(now, val);
  if (tp.tv_sec < 0 || tp.tv_sec > kKtimeSecMax / 2) return -kErange;
  (clock == kClockMonotonic ? offsets->monotonic : offsets->boottime) = val;
  return 0;
}

// Models the timens_add_monotonic()/timens_add_boottime() calls of
// kernel/time/posix-timers.c and alarmtimer.c.
Timespec64 TimensAdd(ClockId clock, const TimensOffsets& offsets,
                     const Timespec64& ts) {
  switch (clock) {
    case kClockMonotonic:
    case kClockMonotonicRaw:
    case kClockMonotonicCoarse:
      return Timespec64Add(ts, offsets.monotonic);
    case kClockBoottime:
    case kClockBoottimeAlarm:
      return Timespec64Add(ts, offsets.boottime);
    default:
      return ts;
  }
}

}  // namespace vdsolab::timekeeper
