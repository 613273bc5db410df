// File: variants/gtod/tsc_calibration.h
//
// Seed 000 (000_5692cb57e0a08a89.txt), the "[PATCH v4.16-rc4 2/2]"
// revisions that add __vdso_linux_tsc_calibration() and the uapi header
// asm/vdso_tsc_calibration.h (Jason Vas Dias, March 2018). The getter hands
// out {raw_mult, raw_shift, tsc_khz} while vclock_mode is VCLOCK_TSC; the
// header's comment then suggests three user-space conversions of an rdtscp
// value, modelled here as three user-space clocks:
//
//   tsc_cal_direct: ns = (mult * tsc) >> shift, in unsigned long. The
//     product wraps once mult * tsc passes 2^64: at 2.6 GHz (mult 6452775,
//     shift 24) after 2^64 / mult = 2.86e12 cycles, 1100 s after the TSC
//     started counting; from then on it reads small, wrapped values.
//   tsc_cal_delta: the "better results" version, exactly as written, with
//     process-wide statics previous_tsc/nsec/sec starting at 0. It stores
//     previous_nsec = ts->tv_nsec << shift, so the sub-ns part of every
//     conversion is dropped: the clock loses up to 1 ns per call against
//     the exact sum. Its first call converts the whole tsc (previous_tsc is
//     0), so it wraps like the direct clock there.
//   tsc_cal_float: ns = lround((double)tsc / ((double)tsc_khz / 1e3)).
//     tsc_khz / 1e3 is ticks per microsecond, not per ns (the comment's
//     "if tsc_khz is 3000, there are 3 tsc ticks per nanosecond" takes kHz
//     for MHz), so this "ns" count runs at a thousandth of real time; the
//     comment's "very little difference (@ 0.02%)" from the direct value is
//     in fact 99.9%. Modelled as written.
//
// Choices the header leaves open (documented deviations):
// - Each call first calls the getter (no caching); when it returns 0 (the
//   clocksource is not the TSC) the clock answers -EINVAL. The header's
//   example prints a warning and goes on converting with zeros.
// - The direct and floating conversions yield ns; the clock returns them
//   as {ns / 10^9, ns % 10^9}. The delta clock builds its timespec as the
//   comment writes it.
// - tsc_khz == 0 would make the floating conversion lround(inf): -EINVAL.
//   A quotient of 2^63 or more (out of long's range) gives LONG_MIN, the
//   value x86-64's conversion instruction produces.
// - The comment's asm binds tsc_hi to eax and tsc_lo to edx (swapped); it is
//   pseudo-code (it does not compile) and is not modelled: the counter is
//   the rdtscp value.

#ifndef VDSOLAB_VARIANTS_GTOD_TSC_CALIBRATION_H_
#define VDSOLAB_VARIANTS_GTOD_TSC_CALIBRATION_H_

#include <cstdint>
#include <optional>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "variants/gtod/specs.h"
#include "variants/gtod/vclock_gettime_416.h"
#include "variants/gtod/vgtod_416.h"
#include "vdso/access.h"

namespace vdsolab::variants::gtod {

// The user-space clocks' ids: a private range no kernel id reaches.
inline constexpr ClockId kTscCalDirect = 0x10000;
inline constexpr ClockId kTscCalDelta = 0x10001;
inline constexpr ClockId kTscCalFloat = 0x10002;

// struct linux_tsc_calibration (uapi asm/vdso_tsc_calibration.h).
struct LinuxTscCalibration {
  uint32_t mult = 0;
  uint32_t shift = 0;
  uint32_t tsc_khz = 0;
};

// The delta clock's statics: static u64 previous_tsc, previous_nsec,
// previous_sec, all 0 at process start. Process-wide: one per reader
// instance (variants/variant.h, SimReader).
struct TscCalDeltaState {
  uint64_t previous_tsc = 0;
  uint64_t previous_nsec = 0;
  uint64_t previous_sec = 0;
};

// The three conversions (tsc_calibration.cc).
uint64_t TscCalDirectNs(uint64_t tsc, const LinuxTscCalibration& cal);
Timespec64 TscCalDeltaStep(uint64_t tsc, const LinuxTscCalibration& cal,
                           TscCalDeltaState* state);
std::optional<uint64_t> TscCalFloatNs(uint64_t tsc, uint32_t tsc_khz);

// __vdso_linux_tsc_calibration() (seed 000): reads vclock_mode, then
// tsc_khz, raw_mult and raw_shift, without the seq. false: not the TSC.
template <vdso::VdsoAccess A>
bool VdsoLinuxTscCalibration(A& acc, const uint8_t* vd,
                             LinuxTscCalibration* cal) {
  const GtodFields& f = kFieldsTscCalibration;
  if (static_cast<int32_t>(acc.template Load<uint32_t>(vd + f.vclock_mode)) !=
      kVclockTsc) {
    return false;
  }
  cal->tsc_khz = acc.template Load<uint32_t>(vd + f.tsc_khz);
  cal->mult = acc.template Load<uint32_t>(vd + f.raw_mult);
  cal->shift = acc.template Load<uint32_t>(vd + f.raw_shift);
  return true;
}

// The tsc-calibration variant's clock_gettime(): its three user-space
// clocks, and the kernel clocks as the rdtscp revision serves them.
template <vdso::VdsoAccess A>
std::optional<ClockResult> TscCalibrationClockGettime(A& acc, const uint8_t* vd,
                                                      ClockId clock,
                                                      TscCalDeltaState* state) {
  if (clock != kTscCalDirect && clock != kTscCalDelta &&
      clock != kTscCalFloat) {
    return ClockGettime416<kSpecTscCalibration>(acc, vd, clock);
  }
  LinuxTscCalibration cal;
  if (!VdsoLinuxTscCalibration(acc, vd, &cal)) {
    return ClockResult::Error(-kEinval);
  }
  const uint64_t tsc = acc.ReadTscp();  // The header's example: rdtscp.
  if (clock == kTscCalDelta) {
    return ClockResult::Ok(TscCalDeltaStep(tsc, cal, state));
  }
  const std::optional<uint64_t> ns = clock == kTscCalDirect
                                         ? TscCalDirectNs(tsc, cal)
                                         : TscCalFloatNs(tsc, cal.tsc_khz);
  if (!ns) return ClockResult::Error(-kEinval);
  return ClockResult::Ok(Timespec64{static_cast<int64_t>(*ns / kNsecPerSec),
                                    static_cast<int64_t>(*ns % kNsecPerSec)});
}

}  // namespace vdsolab::variants::gtod

#endif  // VDSOLAB_VARIANTS_GTOD_TSC_CALIBRATION_H_
