// File: common/timespec.h
//
// struct timespec64 / __kernel_timespec and the kernel helpers that build and
// normalise them (include/linux/time64.h, kernel/time/time.c). ktime_t is a
// signed 64-bit nanosecond count.

#ifndef VDSOLAB_COMMON_TIMESPEC_H_
#define VDSOLAB_COMMON_TIMESPEC_H_

#include <cstdint>
#include <string>

#include "common/math64.h"

namespace vdsolab {

using Ktime = int64_t;                         // ktime_t
inline constexpr Ktime kKtimeMax = INT64_MAX;  // KTIME_MAX
inline constexpr int64_t kKtimeSecMax =
    kKtimeMax / int64_t{1000000000};  // KTIME_SEC_MAX
// TIME_UPTIME_SEC_MAX and TIME_SETTOD_SEC_MAX (include/linux/time64.h): no
// clock may be set so late that 30 years of uptime could overflow.
inline constexpr int64_t kTimeUptimeSecMax = int64_t{30} * 365 * 86400;
inline constexpr int64_t kTimeSettodSecMax = kKtimeSecMax - kTimeUptimeSecMax;

// struct __kernel_timespec: what clock_gettime() returns on 64-bit.
struct Timespec64 {
  int64_t tv_sec = 0;
  int64_t tv_nsec = 0;

  friend bool operator==(const Timespec64&, const Timespec64&) = default;
};

// "12.000000345" (negative seconds keep the sign on the seconds).
std::string FormatTimespec(const Timespec64& ts);

// Whole nanoseconds a - b, saturated to int64 (for reports, not for models).
int64_t TimespecDiffNs(const Timespec64& a, const Timespec64& b);

// a < b.
bool TimespecLess(const Timespec64& a, const Timespec64& b);

// timespec64_add_ns(): the u64 sum wraps and the quotient is u32, as in the
// kernel's __iter_div_u64_rem().
inline void TimespecAddNs(Timespec64* ts, uint64_t ns) {
  uint64_t rem = 0;
  ts->tv_sec += IterDivU64Rem(static_cast<uint64_t>(ts->tv_nsec) + ns,
                              static_cast<uint32_t>(kNsecPerSec), &rem);
  ts->tv_nsec = static_cast<int64_t>(rem);
}

// set_normalized_timespec64(): carries nsec into sec in either direction.
Timespec64 SetNormalizedTimespec64(int64_t sec, int64_t nsec);

// timespec64_sub() and timespec64_add(), normalised.
Timespec64 Timespec64Sub(const Timespec64& lhs, const Timespec64& rhs);
Timespec64 Timespec64Add(const Timespec64& lhs, const Timespec64& rhs);

// timespec64_compare(): <0, 0, >0.
int Timespec64Compare(const Timespec64& lhs, const Timespec64& rhs);

// ns_to_timespec64() / ktime_to_timespec64().
Timespec64 NsToTimespec64(int64_t nsec);

// timespec64_to_ktime() (ktime_set(): saturates at KTIME_MAX).
Ktime Timespec64ToKtime(const Timespec64& ts);

}  // namespace vdsolab

#endif  // VDSOLAB_COMMON_TIMESPEC_H_
