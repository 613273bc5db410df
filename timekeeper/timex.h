// File: timekeeper/timex.h
//
// What adjtimex() and clock_adjtime() exchange with the kernel: struct
// __kernel_timex (include/uapi/linux/timex.h), the mode and status bits, and
// the NTP constants of include/linux/timex.h and kernel/time/ntp.c. Values
// are the kernel's; the names follow the model's style (kAdjOffset for
// ADJ_OFFSET).

#ifndef VDSOLAB_TIMEKEEPER_TIMEX_H_
#define VDSOLAB_TIMEKEEPER_TIMEX_H_

#include <cstdint>

namespace vdsolab::timekeeper {

inline constexpr int kUserHz = 100;        // USER_HZ on x86.
inline constexpr int kNtpScaleShift = 32;  // NTP_SCALE_SHIFT
inline constexpr int kShiftPll = 2;        // SHIFT_PLL: PLL gain (shift).
inline constexpr int kShiftFll = 2;        // SHIFT_FLL: FLL gain (shift).
inline constexpr int64_t kMaxTc = 10;      // MAXTC: largest time constant.
inline constexpr int kShiftUsec = 16;      // SHIFT_USEC: freq is ppm << 16.
// PPM_SCALE: scaled ppm (ppm << 16) to ns/s << 32.
inline constexpr int64_t kPpmScale = int64_t{1000}
                                     << (kNtpScaleShift - kShiftUsec);
// PPM_SCALE_INV_SHIFT / PPM_SCALE_INV: the read-back's inverse of PPM_SCALE
// (a multiply and two shifts instead of a division).
inline constexpr int kPpmScaleInvShift = 19;
inline constexpr int64_t kPpmScaleInv =
    (int64_t{1} << (kPpmScaleInvShift + kNtpScaleShift)) / kPpmScale + 1;
inline constexpr int64_t kMaxPhase = 500000000;  // MAXPHASE: ns.
inline constexpr int64_t kMaxFreq = 500000;      // MAXFREQ: 500 ppm in ns/s.
inline constexpr int64_t kMaxFreqScaled = kMaxFreq << kNtpScaleShift;
inline constexpr int64_t kMinSec = 256;   // MINSEC: shortest FLL interval.
inline constexpr int64_t kMaxSec = 2048;  // MAXSEC: longest PLL interval.
// NTP_PHASE_LIMIT: maxerror/esterror's ceiling, in us.
inline constexpr int64_t kNtpPhaseLimit = (kMaxPhase / 1000) << 5;
inline constexpr int64_t kMaxTickAdj = 500;       // MAX_TICKADJ: us per s.
inline constexpr int32_t kMaxTaiOffset = 100000;  // MAX_TAI_OFFSET
inline constexpr int64_t kSecsPerDay = 86400;     // SECS_PER_DAY
inline constexpr int64_t kTime64Max = INT64_MAX;  // TIME64_MAX

// adjtimex() mode bits (include/uapi/linux/timex.h).
inline constexpr uint32_t kAdjOffset = 0x0001;
inline constexpr uint32_t kAdjFrequency = 0x0002;
inline constexpr uint32_t kAdjMaxerror = 0x0004;
inline constexpr uint32_t kAdjEsterror = 0x0008;
inline constexpr uint32_t kAdjStatus = 0x0010;
inline constexpr uint32_t kAdjTimeconst = 0x0020;
inline constexpr uint32_t kAdjTai = 0x0080;
inline constexpr uint32_t kAdjSetoffset = 0x0100;
inline constexpr uint32_t kAdjMicro = 0x1000;
inline constexpr uint32_t kAdjNano = 0x2000;
inline constexpr uint32_t kAdjTick = 0x4000;
// The adjtime() flavour: ADJ_ADJTIME selects it, ADJ_OFFSET_SINGLESHOT
// (0x8001 in user space) sets the slew, ADJ_OFFSET_SS_READ (0xa001) only
// reads it back (the kernel's ADJ_OFFSET_READONLY is 0x2000).
inline constexpr uint32_t kAdjAdjtime = 0x8000;
inline constexpr uint32_t kAdjOffsetSingleshot = 0x8001;
inline constexpr uint32_t kAdjOffsetSsRead = 0xa001;
inline constexpr uint32_t kAdjOffsetReadonly = 0x2000;

// time_status bits (STA_*).
inline constexpr int32_t kStaPll = 0x0001;
inline constexpr int32_t kStaPpsfreq = 0x0002;
inline constexpr int32_t kStaPpstime = 0x0004;
inline constexpr int32_t kStaFll = 0x0008;
inline constexpr int32_t kStaIns = 0x0010;
inline constexpr int32_t kStaDel = 0x0020;
inline constexpr int32_t kStaUnsync = 0x0040;
inline constexpr int32_t kStaFreqhold = 0x0080;
inline constexpr int32_t kStaPpssignal = 0x0100;
inline constexpr int32_t kStaPpsjitter = 0x0200;
inline constexpr int32_t kStaPpswander = 0x0400;
inline constexpr int32_t kStaPpserror = 0x0800;
inline constexpr int32_t kStaClockerr = 0x1000;
inline constexpr int32_t kStaNano = 0x2000;
inline constexpr int32_t kStaMode = 0x4000;
inline constexpr int32_t kStaClk = 0x8000;
// STA_RONLY: bits ADJ_STATUS cannot set.
inline constexpr int32_t kStaRonly =
    kStaPpssignal | kStaPpsjitter | kStaPpswander | kStaPpserror |
    kStaClockerr | kStaNano | kStaMode | kStaClk;

// Leap-second state machine states (time_state), returned by adjtimex().
enum TimeState : int32_t {
  kTimeOk = 0,
  kTimeIns = 1,
  kTimeDel = 2,
  kTimeOop = 3,
  kTimeWait = 4,
  kTimeError = 5,
};

// struct __kernel_timex_timeval: tv_usec holds ns with STA_NANO / ADJ_NANO.
struct TimexTimeval {
  int64_t tv_sec = 0;
  int64_t tv_usec = 0;

  friend bool operator==(const TimexTimeval&, const TimexTimeval&) = default;
};

// struct __kernel_timex: the caller's request in, the NTP state out.
struct Timex {
  uint32_t modes = 0;
  int64_t offset = 0;    // us (ns with STA_NANO); adjtime(): us.
  int64_t freq = 0;      // Scaled ppm: ppm << 16.
  int64_t maxerror = 0;  // us
  int64_t esterror = 0;  // us
  int32_t status = 0;    // STA_*
  int64_t constant = 0;  // PLL time constant; the TAI offset for ADJ_TAI.
  int64_t precision = 0;
  int64_t tolerance = 0;
  TimexTimeval time;  // The time now; the offset for ADJ_SETOFFSET.
  int64_t tick = 0;   // Microseconds per USER_HZ tick.
  // PPS fields: CONFIG_NTP_PPS is off on x86 (it needs !NO_HZ), so the
  // kernel returns zeros.
  int64_t ppsfreq = 0;
  int64_t jitter = 0;
  int32_t shift = 0;
  int64_t stabil = 0;
  int64_t jitcnt = 0;
  int64_t calcnt = 0;
  int64_t errcnt = 0;
  int64_t stbcnt = 0;
  int32_t tai = 0;  // TAI - UTC in seconds.

  friend bool operator==(const Timex&, const Timex&) = default;
};

// shift_right(): a sign-symmetric arithmetic shift (include/linux/timex.h):
// negative values round toward zero. Computed in u64 so that INT64_MIN
// does not overflow the negation.
constexpr int64_t NtpShiftRight(int64_t x, int s) {
  if (x >= 0) return x >> s;
  const uint64_t magnitude = 0 - static_cast<uint64_t>(x);
  return static_cast<int64_t>(0 - (magnitude >> s));
}

// s64 << n, two's complement: the kernel compiles with
// -fno-strict-overflow, so a shift that leaves the range wraps.
constexpr int64_t WrapShl(int64_t x, int s) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) << s);
}
constexpr int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
constexpr int64_t WrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

}  // namespace vdsolab::timekeeper

#endif  // VDSOLAB_TIMEKEEPER_TIMEX_H_
