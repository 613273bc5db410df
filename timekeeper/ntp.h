// File: timekeeper/ntp.h
//
// The part of kernel/time/ntp.c (6.13+) that steers the timekeeper: the NTP
// tick length and the once-a-second bookkeeping. adjtimex() modes modelled so
// far: ADJ_FREQUENCY and ADJ_TICK. Not yet modelled (and rejected with
// kUnimplemented): ADJ_OFFSET and the PLL/FLL, ADJ_STATUS and leap seconds,
// ADJ_SETOFFSET, ADJ_TAI, adjtime() slewing, PPS.

#ifndef VDSOLAB_TIMEKEEPER_NTP_H_
#define VDSOLAB_TIMEKEEPER_NTP_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace vdsolab::timekeeper {

inline constexpr int kUserHz = 100;        // USER_HZ on x86.
inline constexpr int kNtpScaleShift = 32;  // NTP_SCALE_SHIFT
inline constexpr int64_t kPpmScale = int64_t{1000} << (kNtpScaleShift - 16);
inline constexpr int64_t kMaxFreq = 500000;  // MAXFREQ: 500 ppm in ns/s.
inline constexpr int64_t kMaxFreqScaled = kMaxFreq << kNtpScaleShift;
inline constexpr int64_t kMaxPhase = 500000000;  // MAXPHASE
inline constexpr int64_t kNtpPhaseLimit = (kMaxPhase / 1000) << 5;

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

// time_status bits used so far.
inline constexpr int32_t kStaUnsync = 0x0040;

// Leap-second state machine states (time_state), returned by adjtimex().
enum TimeState : int32_t {
  kTimeOk = 0,
  kTimeIns = 1,
  kTimeDel = 2,
  kTimeOop = 3,
  kTimeWait = 4,
  kTimeError = 5,
};

// struct __kernel_timex, the fields the modelled modes use.
struct Timex {
  uint32_t modes = 0;
  int64_t freq = 0;  // Scaled ppm: ppm << 16.
  int64_t tick = 0;  // Microseconds per USER_HZ tick.
};

// The NTP state of one timekeeper (struct ntp_data, 6.13+).
struct NtpData {
  int hz = 0;                     // NTP_INTERVAL_FREQ (CONFIG_HZ).
  uint64_t tick_usec = 0;         // USER_HZ tick length in us (ADJ_TICK).
  uint64_t tick_length = 0;       // This tick's length in ns << 32.
  uint64_t tick_length_base = 0;  // Tick length without the phase terms.
  int32_t time_state = kTimeOk;
  int32_t time_status = kStaUnsync;
  int64_t time_offset = 0;
  int64_t time_constant = 2;
  int64_t time_maxerror = kNtpPhaseLimit;
  int64_t time_esterror = kNtpPhaseLimit;
  int64_t time_freq = 0;  // Frequency offset in ns/s << 32.
  int64_t time_adjust = 0;
  int64_t ntp_tick_adj = 0;  // Boot parameter ntp_tick_adj=, << 32.
};

class Ntp {
 public:
  // ntp_init(): USER_TICK_USEC, TIME_OK, STA_UNSYNC, then ntp_clear().
  explicit Ntp(int hz);

  // ntp_tick_length(): ns << 32 for the current tick.
  uint64_t TickLength() const { return data_.tick_length; }

  // ntp_clear().
  void Clear();

  // second_overflow(): once per accumulated second. Returns the leap
  // (-1 insert, +1 delete, 0); always 0 until ADJ_STATUS is modelled.
  int SecondOverflow(int64_t secs);

  // The NTP half of do_adjtimex(): timekeeping_validate_timex() for the
  // modelled modes, then process_adjtimex_modes(). Returns the kernel's
  // return value (time_state, or TIME_ERROR while unsynchronised) or
  // -EINVAL; kUnimplemented for modes the model does not have yet.
  absl::StatusOr<int> Adjtimex(const Timex& txc);

  const NtpData& data() const { return data_; }

 private:
  void UpdateFrequency();  // ntp_update_frequency()

  NtpData data_;
};

}  // namespace vdsolab::timekeeper

#endif  // VDSOLAB_TIMEKEEPER_NTP_H_
