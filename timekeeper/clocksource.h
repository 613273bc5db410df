// File: timekeeper/clocksource.h
//
// A clocksource as the timekeeper sees it (include/linux/clocksource.h) and
// the registration arithmetic of kernel/time/clocksource.c (mainline, with
// the Dec 2024 max_raw_delta): mult/shift from a frequency, the 11% maxadj
// headroom, max_cycles and max_idle_ns.
//
// Deviation: the counter itself is not read through the clocksource. Every
// model function that would call clock->read() takes the counter value as a
// parameter, so that the simulation decides it (design rule 4).

#ifndef VDSOLAB_TIMEKEEPER_CLOCKSOURCE_H_
#define VDSOLAB_TIMEKEEPER_CLOCKSOURCE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace vdsolab::timekeeper {

// enum vdso_clock_mode on x86 (include/vdso/clocksource.h, 5.8+).
enum VdsoClockMode : int32_t {
  kVdsoClockmodeNone = 0,
  kVdsoClockmodeTsc = 1,
  kVdsoClockmodePvclock = 2,
  kVdsoClockmodeHvclock = 3,
  kVdsoClockmodeTimens = 0x7fffffff,
};

// CLOCKSOURCE_MASK(bits).
constexpr uint64_t ClocksourceMask(int bits) {
  return bits < 64 ? (1ull << bits) - 1 : ~0ull;
}

struct Clocksource {
  std::string name;
  uint64_t mask = 0;
  uint32_t mult = 0;
  uint32_t shift = 0;
  uint32_t maxadj = 0;         // 11% of mult: the NTP steering headroom.
  uint64_t max_cycles = 0;     // Largest delta cyc2ns() takes safely.
  uint64_t max_idle_ns = 0;    // Half of max_cycles in ns (NO_HZ limit).
  uint64_t max_raw_delta = 0;  // 7/8 of mask: larger deltas are "negative".
  int32_t vdso_clock_mode = kVdsoClockmodeNone;
  int rating = 0;
  // CLOCK_SOURCE_SUSPEND_NONSTOP: the counter keeps running in suspend
  // (x86: a TSC with X86_FEATURE_NONSTOP_TSC_S3), so resume can measure
  // the sleep with it.
  bool suspend_nonstop = false;
};

// clocks_calc_mult_shift(): mult/shift converting `from` Hz to `to` Hz with
// at most `maxsec` seconds of input before the u64 product overflows.
void ClocksCalcMultShift(uint32_t* mult, uint32_t* shift, uint32_t from,
                         uint32_t to, uint32_t maxsec);

// clocks_calc_max_nsecs(): returns max_idle_ns (50% of what converts safely)
// and, through max_cyc, the cycle limit min(ULLONG_MAX / (mult + maxadj),
// mask).
uint64_t ClocksCalcMaxNsecs(uint32_t mult, uint32_t shift, uint32_t maxadj,
                            uint64_t mask, uint64_t* max_cyc);

// clocksource_max_adjustment(): mult * 11 / 100.
uint32_t ClocksourceMaxAdjustment(uint32_t mult);

// __clocksource_register_scale() for a clocksource of frequency
// scale * freq Hz (clocksource_register_khz: scale 1000; _hz: scale 1).
// Runs __clocksource_update_freq_scale() and
// clocksource_update_max_deferment().
absl::StatusOr<Clocksource> ClocksourceRegisterScale(
    std::string name, uint64_t mask, uint32_t scale, uint32_t freq,
    int32_t vdso_clock_mode, int rating);

// The x86 TSC clocksource as arch/x86/kernel/tsc.c registers it: 64-bit mask,
// VDSO_CLOCKMODE_TSC, clocksource_register_khz(&clocksource_tsc, tsc_khz).
absl::StatusOr<Clocksource> MakeTscClocksource(uint32_t tsc_khz);

}  // namespace vdsolab::timekeeper

#endif  // VDSOLAB_TIMEKEEPER_CLOCKSOURCE_H_
