// File: variants/gtod/vclock_gettime_420.h
//
// The 4.20-5.2 x86-64 vDSO clock_gettime() (arch/x86/entry/vdso/
// vclock_gettime.c after the 4.20 rework: basetime[], do_hres(), vgetcyc(),
// VGTOD_HRES = REALTIME | MONOTONIC | TAI) with seed 003's
// do_monotonic_raw() (Alexander Sverdlin, "[PATCH v2] x86/vdso: implement
// clock_gettime(CLOCK_MONOTONIC_RAW, ...)", June 2019) when the layout
// carries raw_mult/raw_shift.
//
// The counter is used unmasked: a value with bit 63 set sends the call to
// the syscall ((s64)cycles < 0, which is also how U64_MAX from an unusable
// vclock does it), and a counter at or behind cycle_last adds nothing
// ("if (cycles > last)"), the era's clamp.
//
// kvm-clock: vread_pvclock() over vCPU 0's pvclock page (U64_MAX without
// PVCLOCK_TSC_STABLE_BIT); the caller's (s64) test and cycles > last clamp
// apply to it as to the TSC.
//
// Deviation: vread_hvclock() is not modelled; it reads as U64_MAX (an
// unusable clock), which sends the call to the syscall.

#ifndef VDSOLAB_VARIANTS_GTOD_VCLOCK_GETTIME_420_H_
#define VDSOLAB_VARIANTS_GTOD_VCLOCK_GETTIME_420_H_

#include <cstdint>
#include <optional>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/math64.h"
#include "variants/gtod/gtod_seq.h"
#include "variants/gtod/vgtod_420.h"
#include "vdso/access.h"
#include "vdso/datapage.h"
#include "vdso/pvclock_loop.h"

namespace vdsolab::variants::gtod {
namespace vclock420_internal {

using gtod_internal::GtodReadBegin;
using gtod_internal::GtodReadRetry;
using gtod_internal::Load32;
using gtod_internal::Load64;

// vgetcyc() (4.20): rdtsc_ordered() for VCLOCK_TSC, vread_pvclock() after
// barrier() for VCLOCK_PVCLOCK ("x86/vdso: Prevent segfaults due to
// hoisted vclock reads", 4.20: no load of the pvclock page before the
// mode check), U64_MAX otherwise. `vd` is the vvar area's start. nullopt:
// abandoned.
template <vdso::VdsoAccess A>
std::optional<uint64_t> Vgetcyc(A& acc, int32_t mode, const uint8_t* vd) {
  if (mode == kVclockTsc) return acc.ReadTsc();
  if (mode == kVclockPvclock) {
    acc.Rmb();
    const std::optional<vdso::PvclockReading> r =
        vdso::ReadPvclockPre615(acc, vd + vdso::kPvclockPageOffset);
    if (!r) return std::nullopt;
    return r->stable ? r->ns : kU64Max;
  }
  return kU64Max;
}

// The shared seq loop of do_hres() (4.20) and do_monotonic_raw() (seed
// 003, "a copy of do_hres()"): they differ in mult/shift only. false: the
// call went to the syscall inside the loop; nullopt: abandoned.
template <const Gtod420Fields& F, vdso::VdsoAccess A>
std::optional<bool> HresLoop(A& acc, const uint8_t* vd, ClockId clk,
                             uint32_t mult_field, uint32_t shift_field,
                             Timespec64* ts) {
  uint64_t sec, ns;
  for (;;) {
    const std::optional<uint32_t> seq = GtodReadBegin(acc, vd, F.seq);
    if (!seq) return std::nullopt;
    const std::optional<uint64_t> counter =
        Vgetcyc(acc, static_cast<int32_t>(Load32(acc, vd, F.vclock_mode)), vd);
    if (!counter) return std::nullopt;
    const uint64_t cycles = *counter;
    ns = Load64(acc, vd, F.BasetimeNsec(clk));
    const uint64_t last = Load64(acc, vd, F.cycle_last);
    if (static_cast<int64_t>(cycles) < 0) return false;
    if (cycles > last) ns += (cycles - last) * Load32(acc, vd, mult_field);
    ns = ShrX86(ns, Load32(acc, vd, shift_field));
    sec = Load64(acc, vd, F.BasetimeSec(clk));
    if (!GtodReadRetry(acc, vd, F.seq, *seq)) break;
    if (!acc.MayRetry()) return std::nullopt;
  }
  // Outside the loop: a racy ns could make __iter_div_u64_rem() slow.
  uint64_t rem = 0;
  ts->tv_sec = static_cast<int64_t>(
      sec + IterDivU64Rem(ns, static_cast<uint32_t>(kNsecPerSec), &rem));
  ts->tv_nsec = static_cast<int64_t>(rem);
  return true;
}

// do_coarse() (4.20): plain ns copied under the seq.
template <const Gtod420Fields& F, vdso::VdsoAccess A>
std::optional<Timespec64> DoCoarse(A& acc, const uint8_t* vd, ClockId clk) {
  for (;;) {
    const std::optional<uint32_t> seq = GtodReadBegin(acc, vd, F.seq);
    if (!seq) return std::nullopt;
    Timespec64 ts;
    ts.tv_sec = static_cast<int64_t>(Load64(acc, vd, F.BasetimeSec(clk)));
    ts.tv_nsec = static_cast<int64_t>(Load64(acc, vd, F.BasetimeNsec(clk)));
    if (!GtodReadRetry(acc, vd, F.seq, *seq)) return ts;
    if (!acc.MayRetry()) return std::nullopt;
  }
}

template <vdso::VdsoAccess A>
std::optional<ClockResult> Finish(A& acc, ClockId clock,
                                  std::optional<bool> served,
                                  const Timespec64& ts) {
  if (!served) return std::nullopt;
  if (!*served) return acc.Fallback(clock);
  return ClockResult::Ok(ts);
}

}  // namespace vclock420_internal

// __vdso_clock_gettime() (4.20; plus seed 003 when F has raw_mult).
template <const Gtod420Fields& F, vdso::VdsoAccess A>
std::optional<ClockResult> ClockGettime420(A& acc, const uint8_t* vd,
                                           ClockId clock) {
  namespace in = vclock420_internal;
  // Sort out negative (CPU/FD) and invalid clocks.
  if (static_cast<uint32_t>(clock) >= static_cast<uint32_t>(kMaxClocks)) {
    return acc.Fallback(clock);
  }
  const uint32_t msk = 1u << clock;
  Timespec64 ts;
  if ((msk & kVgtodHres) != 0) {  // do_hres()
    return in::Finish(
        acc, clock, in::HresLoop<F>(acc, vd, clock, F.mult, F.shift, &ts), ts);
  }
  if ((msk & kVgtodCoarse) != 0) {
    const std::optional<Timespec64> coarse = in::DoCoarse<F>(acc, vd, clock);
    if (!coarse) return std::nullopt;
    return ClockResult::Ok(*coarse);
  }
  if constexpr (F.raw_mult != kNoField) {
    if (clock == kClockMonotonicRaw) {  // do_monotonic_raw() (seed 003)
      return in::Finish(
          acc, clock,
          in::HresLoop<F>(acc, vd, clock, F.raw_mult, F.raw_shift, &ts), ts);
    }
  }
  return acc.Fallback(clock);
}

}  // namespace vdsolab::variants::gtod

#endif  // VDSOLAB_VARIANTS_GTOD_VCLOCK_GETTIME_420_H_
