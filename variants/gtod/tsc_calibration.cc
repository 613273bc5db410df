#include "variants/gtod/tsc_calibration.h"

#include <cmath>
#include <limits>

#include "common/math64.h"

namespace vdsolab::variants::gtod {

// unsigned long nanoseconds = (clock_source.mult * tsc) >> clock_source.shift
// (unsigned int * unsigned long: the product wraps in 64 bits).
uint64_t TscCalDirectNs(uint64_t tsc, const LinuxTscCalibration& cal) {
  return (static_cast<uint64_t>(cal.mult) * tsc) >> (cal.shift & 63);
}

// The comment's delta conversion, line by line.
Timespec64 TscCalDeltaStep(uint64_t tsc, const LinuxTscCalibration& cal,
                           TscCalDeltaState* state) {
  const uint32_t shift = cal.shift & 63;  // x86 shl/shr: count mod 64.
  const uint64_t delta = tsc - state->previous_tsc;
  const uint64_t nsec = ((delta * cal.mult) + state->previous_nsec) >> shift;
  Timespec64 ts;
  ts.tv_sec = static_cast<int64_t>(state->previous_sec + nsec / kNsecPerSec);
  ts.tv_nsec = static_cast<int64_t>(nsec % kNsecPerSec);
  state->previous_tsc = tsc;
  state->previous_sec = static_cast<uint64_t>(ts.tv_sec);
  // Only whole ns survive: the low `shift` bits of nsec's sum are lost.
  state->previous_nsec = static_cast<uint64_t>(ts.tv_nsec) << shift;
  return ts;
}

// u64 ns = lround(((double)tsc) / (((double)tsc_khz) / 1e3)).
std::optional<uint64_t> TscCalFloatNs(uint64_t tsc, uint32_t tsc_khz) {
  if (tsc_khz == 0) return std::nullopt;  // lround(inf): see the header.
  const double ns =
      static_cast<double>(tsc) / (static_cast<double>(tsc_khz) / 1e3);
  // lround() of a value outside long's range: x86-64 yields LONG_MIN.
  if (!(ns < 0x1p63)) {
    return static_cast<uint64_t>(std::numeric_limits<long>::min());
  }
  return static_cast<uint64_t>(std::lround(ns));
}

}  // namespace vdsolab::variants::gtod
