// The NTP state machine (kernel/time/ntp.c, 6.13+): tick length, the
// once-a-second update and the PLL/FLL. adjtimex()'s modes and read-back are
// in ntp_adjtimex.cc.

#include "timekeeper/ntp.h"

#include <algorithm>

#include "common/math64.h"

namespace vdsolab::timekeeper {
namespace {
// USER_TICK_USEC: the default ADJ_TICK value, (1e6 + USER_HZ/2) / USER_HZ.
constexpr uint64_t kUserTickUsec = (kUsecPerSec + kUserHz / 2) / kUserHz;
}  // namespace

Ntp::Ntp(int hz, NtpQuirks quirks, bool aux, int64_t tick_adj)
    : quirks_(quirks) {
  data_.hz = hz;
  data_.aux = aux;
  data_.ntp_tick_adj = tick_adj;
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
  data_.next_leap_sec = kTime64Max;
}

// Models ntp_get_next_leap(): only an insertion that is still armed has a
// time; ktime_set() saturates at KTIME_MAX.
Ktime Ntp::GetNextLeap() const {
  if (data_.aux) return kKtimeMax;
  if (data_.time_state == kTimeIns && (data_.time_status & kStaIns) != 0) {
    if (data_.next_leap_sec >= kKtimeSecMax) return kKtimeMax;
    return data_.next_leap_sec * static_cast<int64_t>(kNsecPerSec);
  }
  return kKtimeMax;
}

// Models second_overflow(): the leap state machine, maxerror, and next
// second's tick length from the phase and adjtime() slews.
int Ntp::SecondOverflow(int64_t secs) {
  NtpData& d = data_;
  int leap = 0;
  // div_s64_rem() truncates toward zero, as C's % does.
  switch (d.time_state) {
    case kTimeOk:
      if ((d.time_status & kStaIns) != 0) {
        // Arm the insertion for the end of this UTC day.
        d.time_state = kTimeIns;
        d.next_leap_sec = secs + kSecsPerDay - secs % kSecsPerDay;
      } else if ((d.time_status & kStaDel) != 0) {
        // A deletion skips 23:59:59, so it fires a second earlier.
        d.time_state = kTimeDel;
        d.next_leap_sec = secs + kSecsPerDay - (secs + 1) % kSecsPerDay;
      }
      break;
    case kTimeIns:
      if ((d.time_status & kStaIns) == 0) {
        d.next_leap_sec = kTime64Max;
        d.time_state = kTimeOk;
      } else if (secs == d.next_leap_sec) {
        leap = -1;  // 23:59:60: the second is repeated.
        d.time_state = kTimeOop;
      }
      break;
    case kTimeDel:
      if ((d.time_status & kStaDel) == 0) {
        d.next_leap_sec = kTime64Max;
        d.time_state = kTimeOk;
      } else if (secs == d.next_leap_sec) {
        leap = 1;
        d.next_leap_sec = kTime64Max;
        d.time_state = kTimeWait;
      }
      break;
    case kTimeOop:
      d.next_leap_sec = kTime64Max;
      d.time_state = kTimeWait;
      break;
    case kTimeWait:
      if ((d.time_status & (kStaIns | kStaDel)) == 0) d.time_state = kTimeOk;
      break;
  }

  // Bump the maximum error; past the limit the clock is unsynchronised.
  // (With maxerror unclamped on input, this add can wrap: the kernel's
  // -fno-strict-overflow makes it two's complement.)
  d.time_maxerror =
      WrapAdd(d.time_maxerror, kMaxFreq / static_cast<int64_t>(kNsecPerUsec));
  if (d.time_maxerror > kNtpPhaseLimit) {
    d.time_maxerror = kNtpPhaseLimit;
    d.time_status |= kStaUnsync;
  }

  // Next second's phase correction: a fraction of what is left, set by the
  // time constant (ntp_offset_chunk() without PPS).
  d.tick_length = d.tick_length_base;
  const int64_t delta = NtpShiftRight(
      d.time_offset, kShiftPll + static_cast<int>(d.time_constant));
  d.time_offset -= delta;
  d.tick_length += static_cast<uint64_t>(delta);

  // adjtime()'s slew: at most MAX_TICKADJ us per second.
  if (d.time_adjust == 0) return leap;
  const int64_t max_tickadj_scaled =
      ((kMaxTickAdj * static_cast<int64_t>(kNsecPerUsec)) << kNtpScaleShift) /
      d.hz;
  if (d.time_adjust > kMaxTickAdj) {
    d.time_adjust -= kMaxTickAdj;
    d.tick_length += static_cast<uint64_t>(max_tickadj_scaled);
    return leap;
  }
  if (d.time_adjust < -kMaxTickAdj) {
    d.time_adjust += kMaxTickAdj;
    d.tick_length -= static_cast<uint64_t>(max_tickadj_scaled);
    return leap;
  }
  // The remainder in one go, truncated to whole ns per tick.
  const int64_t per_tick =
      d.time_adjust * static_cast<int64_t>(kNsecPerUsec) / d.hz;
  d.tick_length += static_cast<uint64_t>(WrapShl(per_tick, kNtpScaleShift));
  d.time_adjust = 0;
  return leap;
}

// Models ntp_update_offset_fll(): the FLL's share, for long intervals or
// when STA_FLL asks for it.
int64_t Ntp::UpdateOffsetFll(int64_t offset64, int64_t secs) {
  data_.time_status &= ~kStaMode;
  if (secs < kMinSec) return 0;
  if ((data_.time_status & kStaFll) == 0 && secs <= kMaxSec) return 0;
  data_.time_status |= kStaMode;
  return WrapShl(offset64, kNtpScaleShift - kShiftFll) / secs;  // div64_long
}

// Models ntp_update_offset() (ADJ_OFFSET): the PLL/FLL frequency update and
// the new phase to slew.
void Ntp::UpdateOffset(int64_t offset, int64_t real_seconds) {
  NtpData& d = data_;
  if ((d.time_status & kStaPll) == 0) return;
  if ((d.time_status & kStaNano) == 0) {
    // Clamp first so that the multiplication cannot overflow.
    offset = std::clamp<int64_t>(offset, -static_cast<int64_t>(kUsecPerSec),
                                 static_cast<int64_t>(kUsecPerSec));
    offset *= static_cast<int64_t>(kNsecPerUsec);
  }
  offset = std::clamp(offset, -kMaxPhase, kMaxPhase);

  // The interval since the last update: negative after the clock was set
  // back, as in the kernel.
  int64_t secs = WrapAdd(real_seconds, -d.time_reftime);
  if ((d.time_status & kStaFreqhold) != 0) secs = 0;
  d.time_reftime = real_seconds;

  const int64_t offset64 = offset;
  int64_t freq_adj = UpdateOffsetFll(offset64, secs);
  // Clamp the interval, to lower the PLL's gain after a long gap.
  const int64_t max_secs =
      int64_t{1} << (kShiftPll + 1 + static_cast<int>(d.time_constant));
  if (secs > max_secs) secs = max_secs;
  freq_adj = WrapAdd(
      freq_adj,
      WrapShl(WrapMul(offset64, secs),
              kNtpScaleShift -
                  2 * (kShiftPll + 2 + static_cast<int>(d.time_constant))));
  freq_adj = std::min(WrapAdd(freq_adj, d.time_freq), kMaxFreqScaled);
  d.time_freq = std::max(freq_adj, -kMaxFreqScaled);
  d.time_offset = WrapShl(offset64, kNtpScaleShift) / d.hz;  // div_s64
}

}  // namespace vdsolab::timekeeper
