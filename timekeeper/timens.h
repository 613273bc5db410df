// File: timekeeper/timens.h
//
// Time namespaces (kernel/time/namespace.c, include/linux/time_namespace.h):
// a namespace shifts CLOCK_MONOTONIC (and MONOTONIC_RAW, MONOTONIC_COARSE)
// and CLOCK_BOOTTIME (and BOOTTIME_ALARM) of the tasks in it by fixed
// offsets, set through /proc/PID/timens_offsets before the first task
// enters. REALTIME, TAI and the aux clocks are not shifted. The vDSO side
// (the namespace's page) is BuildTimensPage() in timekeeper/vsyscall.h.

#ifndef VDSOLAB_TIMEKEEPER_TIMENS_H_
#define VDSOLAB_TIMEKEEPER_TIMENS_H_

#include "common/clockid.h"
#include "common/timespec.h"

namespace vdsolab::timekeeper {

// struct timens_offsets.
struct TimensOffsets {
  Timespec64 monotonic;
  Timespec64 boottime;

  friend bool operator==(const TimensOffsets&, const TimensOffsets&) = default;
};

// proc_timens_set_offset() for one clock: `clock` must be CLOCK_MONOTONIC or
// CLOCK_BOOTTIME (-EINVAL otherwise), `val` a normalised timespec
// (-EINVAL), and the clock's time now (`now`: ktime_get_ts64() or
// ktime_get_boottime_ts64()) plus `val` must stay within 0..KTIME_SEC_MAX/2
// seconds (-ERANGE). Returns 0 and stores the offset, or the error and
// leaves *offsets alone. (-EPERM and -EACCES once a task entered are not
// modelled: offsets are set before.)
int TimensSetOffset(ClockId clock, const Timespec64& val, const Timespec64& now,
                    TimensOffsets* offsets);

// What clock_gettime() adds in the namespace: timens_add_monotonic() for
// MONOTONIC, MONOTONIC_RAW and MONOTONIC_COARSE, timens_add_boottime() for
// BOOTTIME and BOOTTIME_ALARM (timespec64_add(), normalised); other clocks
// unchanged.
Timespec64 TimensAdd(ClockId clock, const TimensOffsets& offsets,
                     const Timespec64& ts);

}  // namespace vdsolab::timekeeper

#endif  // VDSOLAB_TIMEKEEPER_TIMENS_H_
