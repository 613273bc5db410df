// File: timekeeper/ntp.h
//
// kernel/time/ntp.c (6.13+; 6.17+ keeps one instance per timekeeper, which
// the model does by giving each timekeeper its own Ntp): the NTP tick
// length, the once-a-second bookkeeping of second_overflow() (the leap
// second state machine, the PLL's phase slew in time_offset chunks,
// adjtime()'s slew at MAX_TICKADJ), the PLL/FLL of ntp_update_offset(), and
// the NTP half of adjtimex(): process_adjtimex_modes() and the read-back of
// __do_adjtimex(). PPS is not modelled: CONFIG_NTP_PPS needs !NO_HZ, which
// x86 kernels are not built with, so its status bits are plain bits here
// and its read-back fields are 0, as on those kernels.
//
// Time comes from the caller: the real seconds PLL/FLL intervals are
// measured in, and the timespec the read-back reports.

#ifndef VDSOLAB_TIMEKEEPER_NTP_H_
#define VDSOLAB_TIMEKEEPER_NTP_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/timespec.h"
#include "timekeeper/timex.h"

namespace vdsolab::timekeeper {

// Defects ntp.c once shipped, reintroduced for the history tests
// (docs/findings.md); all off means today's code.
struct NtpQuirks {
  // Before "ntp: Remove invalid cast in time offset math" (f5807b0606da,
  // 6.13): the microsecond read-back divided a (u32) cast of the offset,
  // so a negative offset read back as about 4.29e6.
  bool offset_readback_u32 = false;
  // Before "ntp: Safeguard against time_constant overflow" (6.11): ADJ_
  // TIMECONST added 4 to the caller's value before clamping, so a huge
  // constant wrapped negative and was clamped to 0.
  bool time_constant_add_before_clamp = false;
  // Before "ntp: Clamp maxerror and esterror to operating range" (6.11):
  // ADJ_MAXERROR / ADJ_ESTERROR stored any value, and second_overflow()'s
  // maxerror += 500 could wrap it negative, where it never reaches the
  // limit that sets STA_UNSYNC.
  bool maxerror_unclamped = false;

  friend bool operator==(const NtpQuirks&, const NtpQuirks&) = default;
};

// The NTP state of one timekeeper (struct ntp_data, 6.13+).
struct NtpData {
  int hz = 0;                     // NTP_INTERVAL_FREQ (CONFIG_HZ).
  uint64_t tick_usec = 0;         // USER_HZ tick length in us (ADJ_TICK).
  uint64_t tick_length = 0;       // This tick's length in ns << 32.
  uint64_t tick_length_base = 0;  // Tick length without the phase terms.
  int32_t time_state = kTimeOk;
  int32_t time_status = kStaUnsync;
  int64_t time_offset = 0;  // Phase still to slew, ns << 32 per tick.
  int64_t time_constant = 2;
  int64_t time_maxerror = kNtpPhaseLimit;
  int64_t time_esterror = kNtpPhaseLimit;
  int64_t time_freq = 0;               // Frequency offset in ns/s << 32.
  int64_t time_reftime = 0;            // Real seconds of the last ADJ_OFFSET.
  int64_t time_adjust = 0;             // adjtime() slew still to do, us.
  int64_t ntp_tick_adj = 0;            // Boot parameter ntp_tick_adj=, << 32.
  int64_t next_leap_sec = kTime64Max;  // ntp_next_leap_sec
  bool aux = false;  // An aux clock's NTP (6.17+): never a leap second.

  friend bool operator==(const NtpData&, const NtpData&) = default;
};

class Ntp {
 public:
  // ntp_init(): USER_TICK_USEC, TIME_OK, STA_UNSYNC, then ntp_clear().
  // `tick_adj` is ntp_tick_adj as the boot parameter left it (ns per
  // second << NTP_SCALE_SHIFT; one global in the kernel, so every
  // timekeeper's NTP, aux clocks' too, gets the same).
  explicit Ntp(int hz, NtpQuirks quirks = {}, bool aux = false,
               int64_t tick_adj = 0);

  // ntp_tick_length(): ns << 32 for the current tick.
  uint64_t TickLength() const { return data_.tick_length; }

  // ntp_clear(): stop the slews, cancel a pending leap, STA_UNSYNC.
  void Clear();

  // second_overflow(): once per accumulated second, with the new
  // CLOCK_REALTIME seconds. Returns the leap (-1 insert, +1 delete, 0).
  int SecondOverflow(int64_t secs);

  // ntp_get_next_leap(): the pending insertion's CLOCK_REALTIME as ktime,
  // or KTIME_MAX (always for an aux clock).
  Ktime GetNextLeap() const;

  // __do_adjtimex() (6.12; ntp_adjtimex() 6.17+): the modes, then the
  // read-back into *txc. `ts` is CLOCK_REALTIME (the aux clock's time for
  // an aux clock) read before the call; `real_seconds` the timekeeper's
  // xtime_sec, the PLL/FLL's clock; `time_tai` the timekeeper's TAI offset
  // in and out. Returns time_state, TIME_ERROR while unsynchronised, or
  // the leap states the read-back reports around a leap second. The input
  // must have passed ValidateTimex().
  int DoAdjtimex(Timex* txc, const Timespec64& ts, int32_t* time_tai,
                 int64_t real_seconds);

  // ValidateTimex() then DoAdjtimex() at time 0 with no TAI: the NTP state
  // change alone, for tests. Returns the syscall's value (-EINVAL for a
  // refused request, which changes nothing).
  absl::StatusOr<int> Adjtimex(const Timex& txc);

  const NtpData& data() const { return data_; }
  const NtpQuirks& quirks() const { return quirks_; }

 private:
  void UpdateFrequency();  // ntp_update_frequency()
  void UpdateOffset(int64_t offset, int64_t real_seconds);
  int64_t UpdateOffsetFll(int64_t offset64, int64_t secs);
  void ProcessAdjStatus(const Timex& txc, int64_t real_seconds);
  void ProcessAdjtimexModes(const Timex& txc, int32_t* time_tai,
                            int64_t real_seconds);
  void ReadBack(Timex* txc, const Timespec64& ts, int32_t time_tai) const;

  NtpData data_;
  NtpQuirks quirks_;
};

// timekeeping_validate_timex() (6.17+ with `aux_clock`): 0, or -EINVAL for
// a request the kernel refuses before touching any state. Permissions are
// not modelled (the caller has CAP_SYS_TIME).
int ValidateTimex(const Timex& txc, bool aux_clock);

}  // namespace vdsolab::timekeeper

#endif  // VDSOLAB_TIMEKEEPER_NTP_H_
