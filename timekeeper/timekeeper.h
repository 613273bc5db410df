// File: timekeeper/timekeeper.h
//
// The timekeeper's state (include/linux/timekeeper_internal.h, 6.17+: the
// core timekeeper and, with `id` 1..8, an aux clock's). Field names, types
// and units are the kernel's: *xtime_nsec are nanoseconds shifted left by
// `shift`.

#ifndef VDSOLAB_TIMEKEEPER_TIMEKEEPER_H_
#define VDSOLAB_TIMEKEEPER_TIMEKEEPER_H_

#include <cstdint>

#include "common/timespec.h"
#include "timekeeper/clocksource.h"

namespace vdsolab::timekeeper {

// struct tk_read_base: everything needed to turn a counter value into time.
struct TkReadBase {
  const Clocksource* clock = nullptr;
  uint64_t mask = 0;
  uint64_t cycle_last = 0;
  uint32_t mult = 0;
  uint32_t shift = 0;
  uint64_t xtime_nsec = 0;  // ns << shift since the last whole second.
  Ktime base = 0;           // ktime at cycle_last, without xtime_nsec.
  uint64_t base_real = 0;   // base + offs_real.
};

// struct timekeeper.
struct Timekeeper {
  TkReadBase tkr_mono;
  uint64_t xtime_sec = 0;        // CLOCK_REALTIME seconds.
  uint64_t ktime_sec = 0;        // CLOCK_MONOTONIC seconds.
  Timespec64 wall_to_monotonic;  // REALTIME + this = MONOTONIC.
  Ktime offs_real = 0;           // MONOTONIC -> REALTIME (= -wtm).
  Ktime offs_boot = 0;           // MONOTONIC -> BOOTTIME (sleep time).
  Ktime offs_tai = 0;            // MONOTONIC -> TAI.
  uint32_t coarse_nsec = 0;      // ns part for the _COARSE clocks (6.15+).
  TkReadBase tkr_raw;
  uint64_t raw_sec = 0;  // CLOCK_MONOTONIC_RAW seconds.
  uint32_t clock_was_set_seq = 0;
  uint8_t cs_was_changed_seq = 0;
  Timespec64 monotonic_to_boot;  // offs_boot as a timespec, for the vDSO.
  uint64_t cycle_interval = 0;   // Counter cycles per NTP interval (tick).
  uint64_t xtime_interval = 0;   // Shifted ns per interval at tkr_mono.mult.
  int64_t xtime_remainder = 0;   // Shifted ns the rounding of mult loses.
  uint64_t raw_interval = 0;     // Shifted raw ns per interval.
  Ktime next_leap_ktime = kKtimeMax;
  uint64_t ntp_tick = 0;  // NTP tick length seen last, ns << 32.
  int64_t ntp_error = 0;  // NTP - clock, in ns << ntp_error_shift.
  uint32_t ntp_error_shift = 0;
  uint32_t ntp_err_mult = 0;  // 1 while mult carries the error nudge.
  uint32_t skip_second_overflow = 0;
  int32_t tai_offset = 0;  // TAI - UTC in seconds.
  // 6.17+: which timekeeper (TIMEKEEPER_CORE 0, aux clocks 1..8), whether
  // its clock may be read (an aux clock while enabled), and an aux clock's
  // offset from its own MONOTONIC (the kernel keeps monotonic_to_aux in a
  // union with monotonic_to_boot; separate fields here).
  int id = 0;
  bool clock_valid = true;
  Ktime offs_aux = 0;
  Timespec64 monotonic_to_aux;
};

inline constexpr int kTimekeeperCore = 0;      // TIMEKEEPER_CORE
inline constexpr int kTimekeeperAuxFirst = 1;  // TIMEKEEPER_AUX_FIRST
inline constexpr int kMaxAuxTimekeepers = 8;   // MAX_AUX_CLOCKS

}  // namespace vdsolab::timekeeper

#endif  // VDSOLAB_TIMEKEEPER_TIMEKEEPER_H_
