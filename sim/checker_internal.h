// File: sim/checker_internal.h
//
// Helpers the checker's files share: value conversions and clock families.
// Internal to sim:checker.

#ifndef VDSOLAB_SIM_CHECKER_INTERNAL_H_
#define VDSOLAB_SIM_CHECKER_INTERNAL_H_

#include <optional>
#include <string>

#include "absl/strings/str_format.h"
#include "common/clockid.h"
#include "common/timespec.h"
#include "timekeeper/timekeeper.h"

namespace vdsolab::sim::checker_internal {

inline __int128 ToNs(const Timespec64& ts) {
  return static_cast<__int128>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline std::string FormatNs(__int128 ns) {
  const bool neg = ns < 0;
  const unsigned __int128 mag = static_cast<unsigned __int128>(neg ? -ns : ns);
  return absl::StrFormat("%s%d.%09d", neg ? "-" : "",
                         static_cast<uint64_t>(mag / 1000000000),
                         static_cast<uint64_t>(mag % 1000000000));
}

inline bool IsHres(ClockId c) {
  return c >= 0 && c < kMaxClocks && ((1u << c) & (kVdsoHres | kVdsoRaw)) != 0;
}
inline bool IsCoarse(ClockId c) {
  return c == kClockRealtimeCoarse || c == kClockMonotonicCoarse;
}
// Clocks that clock_settime() and leap seconds may step.
inline bool IsSettable(ClockId c) {
  return c == kClockRealtime || c == kClockRealtimeCoarse || c == kClockTai ||
         c == kClockRealtimeAlarm;
}
inline bool IsAux(ClockId c) { return c >= kClockAux && c <= kClockAuxLast; }
inline bool IsMonotonicFamily(ClockId c) {
  return IsAux(c) || c == kClockRealtime || c == kClockMonotonic ||
         c == kClockMonotonicRaw || c == kClockRealtimeCoarse ||
         c == kClockMonotonicCoarse || c == kClockBoottime || c == kClockTai ||
         c == kClockRealtimeAlarm || c == kClockBoottimeAlarm ||
         c == kClockProcessCputimeId || c == kClockThreadCputimeId;
}

// The clocks whose difference is fixed between events: the offset of each
// from MONOTONIC in the timekeeper state.
inline std::optional<__int128> OffsetFromMonotonic(
    ClockId c, const timekeeper::Timekeeper& tk) {
  switch (c) {
    case kClockMonotonic:
      return 0;
    case kClockBoottime:
      return tk.offs_boot;
    case kClockRealtime:
      return tk.offs_real;
    case kClockTai:
      return tk.offs_tai;
    default:
      return std::nullopt;
  }
}

}  // namespace vdsolab::sim::checker_internal

#endif  // VDSOLAB_SIM_CHECKER_INTERNAL_H_
