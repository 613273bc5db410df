#include "common/clockid.h"

#include "absl/strings/str_format.h"

namespace vdsolab {

std::string ClockName(ClockId clock) {
  switch (clock) {
    case kClockRealtime:
      return "CLOCK_REALTIME";
    case kClockMonotonic:
      return "CLOCK_MONOTONIC";
    case kClockProcessCputimeId:
      return "CLOCK_PROCESS_CPUTIME_ID";
    case kClockThreadCputimeId:
      return "CLOCK_THREAD_CPUTIME_ID";
    case kClockMonotonicRaw:
      return "CLOCK_MONOTONIC_RAW";
    case kClockRealtimeCoarse:
      return "CLOCK_REALTIME_COARSE";
    case kClockMonotonicCoarse:
      return "CLOCK_MONOTONIC_COARSE";
    case kClockBoottime:
      return "CLOCK_BOOTTIME";
    case kClockRealtimeAlarm:
      return "CLOCK_REALTIME_ALARM";
    case kClockBoottimeAlarm:
      return "CLOCK_BOOTTIME_ALARM";
    case kClockSgiCycle:
      return "CLOCK_SGI_CYCLE";
    case kClockTai:
      return "CLOCK_TAI";
    default:
      if (clock >= kClockAux && clock <= kClockAuxLast) {
        return absl::StrFormat("CLOCK_AUX+%d", clock - kClockAux);
      }
      return absl::StrFormat("clock %d", clock);
  }
}

}  // namespace vdsolab
