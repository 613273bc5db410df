#include "common/clock_result.h"

#include "absl/strings/str_format.h"

namespace vdsolab {

std::string FormatClockResult(const ClockResult& result) {
  if (result.ret == 0) return FormatTimespec(result.ts);
  // Not an errno at all: say what came back.
  if (result.ret > 0) {
    return absl::StrFormat("%d (neither 0 nor -errno)", result.ret);
  }
  switch (-result.ret) {
    case kEinval:
      return "-EINVAL";
    case kEperm:
      return "-EPERM";
    default:
      return absl::StrFormat("-errno %d", -result.ret);
  }
}

std::string FormatGtodResult(const GtodResult& result) {
  if (result.ret != 0) return FormatClockResult(ClockResult::Error(result.ret));
  return absl::StrFormat("%d.%06d s, tz %d min west, dst %d", result.tv_sec,
                         result.tv_usec, result.tz_minuteswest,
                         result.tz_dsttime);
}

}  // namespace vdsolab
