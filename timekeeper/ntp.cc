#include "timekeeper/ntp.h"

#include <algorithm>
#include <climits>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/math64.h"

namespace vdsolab::timekeeper {
namespace {
// USER_TICK_USEC: the default ADJ_TICK value, (1e6 + USER_HZ/2) / USER_HZ.
constexpr uint64_t kUserTickUsec = (kUsecPerSec + kUserHz / 2) / kUserHz;
constexpr uint32_t kModelledModes = kAdjFrequency | kAdjTick;
}  // namespace

Ntp::Ntp(int hz) {
  data_.hz = hz;
  data_.tick_usec = kUserTickUsec;
  data_.time_state = kTimeOk;
  data_.time_status = kStaUnsync;
  Clear();
}

// Models ntp_update_frequency(): the new base applies immediately.
void Ntp::UpdateFrequency() {
  uint64_t second_length =
      static_cast<uint64_t>(data_.tick_usec * kNsecPerUsec * kUserHz)
      << kNtpScaleShift;
  second_length += static_cast<uint64_t>(data_.ntp_tick_adj);
  second_length += static_cast<uint64_t>(data_.time_freq);
  const uint64_t new_base = second_length / static_cast<uint64_t>(data_.hz);
  data_.tick_length += new_base - data_.tick_length_base;
  data_.tick_length_base = new_base;
}

// Models __ntp_clear() (PPS state is not modelled).
void Ntp::Clear() {
  data_.time_adjust = 0;
  data_.time_status |= kStaUnsync;
  data_.time_maxerror = kNtpPhaseLimit;
  data_.time_esterror = kNtpPhaseLimit;
  UpdateFrequency();
  data_.tick_length = data_.tick_length_base;
  data_.time_offset = 0;
}

// Models second_overflow(). The leap-second switch is absent: without
// ADJ_STATUS, STA_INS/STA_DEL can never be set, so time_state stays TIME_OK.
int Ntp::SecondOverflow(int64_t /*secs*/) {
  data_.time_maxerror += kMaxFreq / static_cast<int64_t>(kNsecPerUsec);
  if (data_.time_maxerror > kNtpPhaseLimit) {
    data_.time_maxerror = kNtpPhaseLimit;
    data_.time_status |= kStaUnsync;
  }
  // Compute the phase adjustment for the next second. time_offset and
  // time_adjust stay 0 until ADJ_OFFSET / adjtime() are modelled.
  data_.tick_length = data_.tick_length_base;
  return 0;
}

absl::StatusOr<int> Ntp::Adjtimex(const Timex& txc) {
  if ((txc.modes & ~kModelledModes) != 0) {
    return absl::UnimplementedError(absl::StrFormat(
        "adjtimex modes 0x%x are not modelled yet (modelled: ADJ_FREQUENCY, "
        "ADJ_TICK)",
        txc.modes & ~kModelledModes));
  }
  // timekeeping_validate_timex(): the quartz may be off by at most 10%.
  if ((txc.modes & kAdjTick) != 0 &&
      (txc.tick < 900000 / kUserHz || txc.tick > 1100000 / kUserHz)) {
    return -kEinval;
  }
  // 64-bit: reject freq values whose scaling would overflow.
  if ((txc.modes & kAdjFrequency) != 0 &&
      (LLONG_MIN / kPpmScale > txc.freq || LLONG_MAX / kPpmScale < txc.freq)) {
    return -kEinval;
  }

  // process_adjtimex_modes(), in the kernel's order.
  if ((txc.modes & kAdjFrequency) != 0) {
    data_.time_freq = txc.freq * kPpmScale;
    data_.time_freq = std::min(data_.time_freq, kMaxFreqScaled);
    data_.time_freq = std::max(data_.time_freq, -kMaxFreqScaled);
  }
  if ((txc.modes & kAdjTick) != 0) {
    data_.tick_usec = static_cast<uint64_t>(txc.tick);
  }
  if ((txc.modes & (kAdjTick | kAdjFrequency | kAdjOffset)) != 0) {
    UpdateFrequency();
  }

  // __do_adjtimex() returns time_state, or TIME_ERROR when is_error_status().
  if ((data_.time_status & kStaUnsync) != 0) return kTimeError;
  return data_.time_state;
}

}  // namespace vdsolab::timekeeper
