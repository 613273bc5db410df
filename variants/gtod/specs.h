// File: variants/gtod/specs.h
//
// The 4.16-family reader configurations of the variants in this directory:
// a layout's field table plus the CLOCK_MONOTONIC_RAW and CLOCK_TRACE
// patches the reader carries.

#ifndef VDSOLAB_VARIANTS_GTOD_SPECS_H_
#define VDSOLAB_VARIANTS_GTOD_SPECS_H_

#include "variants/gtod/trace_clock.h"
#include "variants/gtod/vclock_gettime_416.h"
#include "variants/gtod/vgtod_416.h"

namespace vdsolab::variants::gtod {

namespace specs_internal {
constexpr Vdso416Spec Make(const GtodFields& f, RawClock raw,
                           TraceClock trace) {
  Vdso416Spec s;
  s.f = f;
  s.raw = raw;
  s.trace = trace;
  return s;
}
}  // namespace specs_internal

inline constexpr Vdso416Spec kSpec416 =
    specs_internal::Make(kFields416, RawClock::kNone, TraceClock::kNone);
inline constexpr Vdso416Spec kSpecVasDiasV1 = specs_internal::Make(
    kFieldsVasDiasV1, RawClock::kVasDias, TraceClock::kNone);
inline constexpr Vdso416Spec kSpecVasDiasRdtscp = specs_internal::Make(
    kFieldsVasDiasRdtscp, RawClock::kVasDiasRdtscp, TraceClock::kNone);
inline constexpr Vdso416Spec kSpecRc5 =
    specs_internal::Make(kFieldsRc5, RawClock::kRc5, TraceClock::kNone);
inline constexpr Vdso416Spec kSpecTscCalibration = specs_internal::Make(
    kFieldsTscCalibration, RawClock::kVasDiasRdtscp, TraceClock::kNone);
inline constexpr Vdso416Spec kSpecTraceClock =
    specs_internal::Make(kFieldsTraceClock, RawClock::kNone, TraceClock::kRfc);
inline constexpr Vdso416Spec kSpecTraceClockReviewed = specs_internal::Make(
    kFieldsTraceClock, RawClock::kNone, TraceClock::kReviewed);

}  // namespace vdsolab::variants::gtod

#endif  // VDSOLAB_VARIANTS_GTOD_SPECS_H_
