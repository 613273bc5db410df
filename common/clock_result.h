// File: common/clock_result.h
//
// What a clock_gettime() call returns: the syscall's return value (0 or a
// negative errno) and, when it is 0, the time.

#ifndef VDSOLAB_COMMON_CLOCK_RESULT_H_
#define VDSOLAB_COMMON_CLOCK_RESULT_H_

#include <cstdint>
#include <string>

#include "common/timespec.h"

namespace vdsolab {

inline constexpr int32_t kEinval = 22;  // EINVAL
inline constexpr int32_t kEperm = 1;    // EPERM
inline constexpr int32_t kEnodev = 19;  // ENODEV
inline constexpr int32_t kErange = 34;  // ERANGE
inline constexpr int32_t kEnosys = 38;  // ENOSYS

struct ClockResult {
  int32_t ret = 0;  // 0 or -errno, as the syscall returns it.
  Timespec64 ts;    // Meaningful only when ret == 0.

  // The two words one by one, each through a register: readers store
  // their timespec word by word, and the one 16-byte load GCC merges a
  // struct copy into cannot be forwarded from two 8-byte stores (a stall
  // of ~6% of a simulated call in the upstream reader; perf annotate).
  static ClockResult Ok(const Timespec64& ts) {
    int64_t sec = ts.tv_sec;
    int64_t nsec = ts.tv_nsec;
    asm("" : "+r"(sec), "+r"(nsec));
    return ClockResult{0, Timespec64{sec, nsec}};
  }
  // A copy made the same way, word by word: a field-by-field copy in the
  // source is still merged into one 16-byte load.
  static ClockResult CopyByWords(const ClockResult& r) {
    ClockResult c = Ok(r.ts);
    c.ret = r.ret;
    return c;
  }
  static ClockResult Error(int32_t negative_errno) {
    return ClockResult{negative_errno, Timespec64{}};
  }

  // Two results are the same call outcome: equal errors, or equal times.
  friend bool operator==(const ClockResult& a, const ClockResult& b) {
    return a.ret == b.ret && (a.ret != 0 || a.ts == b.ts);
  }
};

// "12.000000345" or "-EINVAL".
std::string FormatClockResult(const ClockResult& result);

// What a gettimeofday() call returns: 0 or -errno and, on 0, the time in
// microseconds (struct __kernel_old_timeval) and the timezone (struct
// timezone), both as x86-64 lays them out.
struct GtodResult {
  int32_t ret = 0;
  int64_t tv_sec = 0;
  int64_t tv_usec = 0;
  int32_t tz_minuteswest = 0;
  int32_t tz_dsttime = 0;

  friend bool operator==(const GtodResult& a, const GtodResult& b) {
    return a.ret == b.ret &&
           (a.ret != 0 || (a.tv_sec == b.tv_sec && a.tv_usec == b.tv_usec &&
                           a.tz_minuteswest == b.tz_minuteswest &&
                           a.tz_dsttime == b.tz_dsttime));
  }
};

// "12.000345 tz 0/0" or "-EINVAL".
std::string FormatGtodResult(const GtodResult& result);

// gettimeofday()'s answer for a REALTIME of `ts` and a zero timezone:
// tv_usec = (u32)tv_nsec / NSEC_PER_USEC, as the kernel's syscall and
// __cvdso_gettimeofday_data() compute it.
inline GtodResult GtodFromRealtime(const Timespec64& ts) {
  return GtodResult{0, ts.tv_sec, static_cast<uint32_t>(ts.tv_nsec) / 1000, 0,
                    0};
}

}  // namespace vdsolab

#endif  // VDSOLAB_COMMON_CLOCK_RESULT_H_
