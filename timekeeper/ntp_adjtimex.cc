// adjtimex()'s NTP half (kernel/time/ntp.c: process_adj_status(),
// process_adjtimex_modes(), __do_adjtimex(); 6.12-6.18) and the request
// validation of kernel/time/timekeeping.c (timekeeping_validate_timex()).

#include <algorithm>
#include <climits>

#include "common/clock_result.h"
#include "common/math64.h"
#include "timekeeper/ntp.h"

namespace vdsolab::timekeeper {

// Models timekeeping_validate_timex() (6.17+, the aux_clock argument; the
// core checks are the same since 3.x). Permission checks are not modelled.
int ValidateTimex(const Timex& txc, bool aux_clock) {
  if ((txc.modes & kAdjAdjtime) != 0) {
    // The kernel means to refuse ADJ_ADJTIME without the singleshot bit,
    // but tests modes & ADJ_OFFSET_SINGLESHOT, which ADJ_ADJTIME (part of
    // it) always satisfies: 0x8000 alone is an adjtime() like 0x8001. The
    // test is kept as the kernel has it (docs/timekeeper.md).
    if ((txc.modes & kAdjOffsetSingleshot) == 0) return -kEinval;
  } else if ((txc.modes & kAdjTick) != 0 &&
             (txc.tick < 900000 / kUserHz || txc.tick > 1100000 / kUserHz)) {
    // A tick more than 10% off means something is very wrong.
    return -kEinval;
  }
  if ((txc.modes & kAdjSetoffset) != 0) {
    // The offset is the sum of the fields: tv_sec may be negative, the
    // sub-second part must be a normalised fraction.
    if (txc.time.tv_usec < 0) return -kEinval;
    const int64_t limit = (txc.modes & kAdjNano) != 0
                              ? static_cast<int64_t>(kNsecPerSec)
                              : static_cast<int64_t>(kUsecPerSec);
    if (txc.time.tv_usec >= limit) return -kEinval;
  }
  // 64-bit: freq * PPM_SCALE must not overflow.
  if ((txc.modes & kAdjFrequency) != 0 &&
      (LLONG_MIN / kPpmScale > txc.freq || LLONG_MAX / kPpmScale < txc.freq)) {
    return -kEinval;
  }
  if (aux_clock) {
    // Aux clocks are like TAI: no leap seconds, no TAI offset, no PPS.
    if ((txc.modes & kAdjStatus) != 0 &&
        (txc.status & (kStaIns | kStaDel)) != 0) {
      return -kEinval;
    }
    if ((txc.modes & kAdjTai) != 0) return -kEinval;
    if ((txc.modes & kAdjStatus) != 0 &&
        (txc.status & (kStaPpsfreq | kStaPpstime)) != 0) {
      return -kEinval;
    }
  }
  return 0;
}

// Models process_adj_status(): turning the PLL off resets the state
// machine; turning it on starts the PLL's interval now.
void Ntp::ProcessAdjStatus(const Timex& txc, int64_t real_seconds) {
  NtpData& d = data_;
  if ((d.time_status & kStaPll) != 0 && (txc.status & kStaPll) == 0) {
    d.time_state = kTimeOk;
    d.time_status = kStaUnsync;
    d.next_leap_sec = kTime64Max;
  }
  if ((d.time_status & kStaPll) == 0 && (txc.status & kStaPll) != 0) {
    d.time_reftime = real_seconds;
  }
  d.time_status &= kStaRonly;
  d.time_status |= txc.status & ~kStaRonly;
}

// Models process_adjtimex_modes(), in the kernel's order.
void Ntp::ProcessAdjtimexModes(const Timex& txc, int32_t* time_tai,
                               int64_t real_seconds) {
  NtpData& d = data_;
  if ((txc.modes & kAdjStatus) != 0) ProcessAdjStatus(txc, real_seconds);
  if ((txc.modes & kAdjNano) != 0) d.time_status |= kStaNano;
  if ((txc.modes & kAdjMicro) != 0) d.time_status &= ~kStaNano;
  if ((txc.modes & kAdjFrequency) != 0) {
    d.time_freq = txc.freq * kPpmScale;  // Validated not to overflow.
    d.time_freq = std::min(d.time_freq, kMaxFreqScaled);
    d.time_freq = std::max(d.time_freq, -kMaxFreqScaled);
  }
  if ((txc.modes & kAdjMaxerror) != 0) {
    d.time_maxerror =
        quirks_.maxerror_unclamped
            ? txc.maxerror
            : std::clamp<int64_t>(txc.maxerror, 0, kNtpPhaseLimit);
  }
  if ((txc.modes & kAdjEsterror) != 0) {
    d.time_esterror =
        quirks_.maxerror_unclamped
            ? txc.esterror
            : std::clamp<int64_t>(txc.esterror, 0, kNtpPhaseLimit);
  }
  if ((txc.modes & kAdjTimeconst) != 0) {
    if (quirks_.time_constant_add_before_clamp) {
      // Pre-6.11: the +4 can wrap a huge constant negative first.
      d.time_constant = txc.constant;
      if ((d.time_status & kStaNano) == 0) {
        d.time_constant = WrapAdd(d.time_constant, 4);
      }
      d.time_constant = std::min(d.time_constant, kMaxTc);
      d.time_constant = std::max<int64_t>(d.time_constant, 0);
    } else {
      d.time_constant = std::clamp<int64_t>(txc.constant, 0, kMaxTc);
      if ((d.time_status & kStaNano) == 0) d.time_constant += 4;
      d.time_constant = std::clamp<int64_t>(d.time_constant, 0, kMaxTc);
    }
  }
  // An out-of-range TAI offset is ignored, not refused.
  if ((txc.modes & kAdjTai) != 0 && txc.constant >= 0 &&
      txc.constant <= kMaxTaiOffset) {
    *time_tai = static_cast<int32_t>(txc.constant);
  }
  if ((txc.modes & kAdjOffset) != 0) UpdateOffset(txc.offset, real_seconds);
  if ((txc.modes & kAdjTick) != 0) {
    d.tick_usec = static_cast<uint64_t>(txc.tick);
  }
  if ((txc.modes & (kAdjTick | kAdjFrequency | kAdjOffset)) != 0) {
    UpdateFrequency();
  }
}

// Models the read-back half of __do_adjtimex() (everything but the result).
void Ntp::ReadBack(Timex* txc, const Timespec64& ts, int32_t time_tai) const {
  const NtpData& d = data_;
  txc->freq = NtpShiftRight((d.time_freq >> kPpmScaleInvShift) * kPpmScaleInv,
                            kNtpScaleShift);
  txc->maxerror = d.time_maxerror;
  txc->esterror = d.time_esterror;
  txc->status = d.time_status;
  txc->constant = d.time_constant;
  txc->precision = 1;
  txc->tolerance = kMaxFreqScaled / kPpmScale;
  txc->tick = static_cast<int64_t>(d.tick_usec);
  txc->tai = time_tai;
  // pps_fill_timex() without CONFIG_NTP_PPS.
  txc->ppsfreq = txc->jitter = txc->stabil = 0;
  txc->jitcnt = txc->calcnt = txc->errcnt = txc->stbcnt = 0;
  txc->shift = 0;
  txc->time.tv_sec = ts.tv_sec;
  txc->time.tv_usec = ts.tv_nsec;
  if ((d.time_status & kStaNano) == 0) {
    txc->time.tv_usec = ts.tv_nsec / static_cast<int64_t>(kNsecPerUsec);
  }
}

// Models __do_adjtimex() (ntp_adjtimex() in 6.17+).
int Ntp::DoAdjtimex(Timex* txc, const Timespec64& ts, int32_t* time_tai,
                    int64_t real_seconds) {
  NtpData& d = data_;
  if ((txc->modes & kAdjAdjtime) != 0) {
    // adjtime() is independent of the NTP modes: it returns the slew
    // still pending and, unless read-only, replaces it.
    const int64_t save_adjust = d.time_adjust;
    if ((txc->modes & kAdjOffsetReadonly) == 0) {
      d.time_adjust = txc->offset;
      UpdateFrequency();
    }
    txc->offset = save_adjust;
  } else {
    if (txc->modes != 0) ProcessAdjtimexModes(*txc, time_tai, real_seconds);
    // time_offset is per tick: * HZ gives the phase still to slew.
    txc->offset = NtpShiftRight(WrapMul(d.time_offset, d.hz), kNtpScaleShift);
    if ((d.time_status & kStaNano) == 0) {
      if (quirks_.offset_readback_u32) {
        // Pre-6.13: (u32)txc->offset / NSEC_PER_USEC, unsigned.
        txc->offset = static_cast<int64_t>(static_cast<uint32_t>(txc->offset) /
                                           kNsecPerUsec);
      } else {
        txc->offset /= static_cast<int64_t>(kNsecPerUsec);  // div_s64
      }
    }
  }

  int result = d.time_state;  // Mostly TIME_OK.
  if ((d.time_status & (kStaUnsync | kStaClockerr)) != 0) {
    result = kTimeError;  // is_error_status() without PPS.
  }
  ReadBack(txc, ts, *time_tai);

  // Around a leap second the read-back shows the leap being applied,
  // before the tick that applies it (23:59:60 for an insertion).
  if (ts.tv_sec >= d.next_leap_sec) {
    if (d.time_state == kTimeIns && (d.time_status & kStaIns) != 0) {
      result = kTimeOop;
      ++txc->tai;
      --txc->time.tv_sec;
    }
    if (d.time_state == kTimeDel && (d.time_status & kStaDel) != 0) {
      result = kTimeWait;
      --txc->tai;
      ++txc->time.tv_sec;
    }
    if (d.time_state == kTimeOop && ts.tv_sec == d.next_leap_sec) {
      result = kTimeWait;
    }
  }
  return result;
}

absl::StatusOr<int> Ntp::Adjtimex(const Timex& txc) {
  if (const int ret = ValidateTimex(txc, data_.aux); ret != 0) return ret;
  Timex copy = txc;
  int32_t tai = 0;
  return DoAdjtimex(&copy, Timespec64{}, &tai, 0);
}

}  // namespace vdsolab::timekeeper
