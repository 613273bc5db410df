// File: variants/gtod/vclock_gettime_416.h
//
// The 4.16 x86-64 vDSO clock_gettime() (arch/x86/entry/vdso/
// vclock_gettime.c, 4.15-4.19 series) over struct vsyscall_gtod_data, and
// the seeds' patches to it, as one reader parameterised by a Vdso416Spec:
// the layout's field table, which CLOCK_MONOTONIC_RAW patch (if any) and
// which CLOCK_TRACE patch (if any).
//
// 4.16 serves REALTIME and MONOTONIC (seq loop, vread_tsc() clamped to
// cycle_last, ((cycles - cycle_last) & mask) * mult, the u32 second carry
// outside the loop) and the two COARSE clocks (copied under the seq); every
// other id goes to the syscall.
//
// kvm-clock (VCLOCK_PVCLOCK): vread_pvclock() over vCPU 0's pvclock page,
// clamped to cycle_last as vread_tsc() is; without PVCLOCK_TSC_STABLE_BIT
// *mode = VCLOCK_NONE and the caller falls back. The seeds' MONOTONIC_RAW
// patches call the same vread_pvclock() (seed 000's vgetsns_raw()).
//
// Deviation (all variants here): the Hyper-V page is not modelled. With
// vclock_mode VCLOCK_HVCLOCK the reader behaves as 4.16 does when that page
// says the clock is unusable (vread_hvclock() reading U64_MAX):
// *mode = VCLOCK_NONE, cycles 0, and the caller falls back.

#ifndef VDSOLAB_VARIANTS_GTOD_VCLOCK_GETTIME_416_H_
#define VDSOLAB_VARIANTS_GTOD_VCLOCK_GETTIME_416_H_

#include <cstdint>
#include <optional>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/math64.h"
#include "variants/gtod/gtod_seq.h"
#include "variants/gtod/trace_clock.h"
#include "variants/gtod/vgtod_416.h"
#include "vdso/access.h"
#include "vdso/datapage.h"
#include "vdso/pvclock_loop.h"

namespace vdsolab::variants::gtod {

// Which CLOCK_MONOTONIC_RAW the vDSO serves.
enum class RawClock : uint8_t {
  kNone,  // 4.16: the syscall.
  // Seed 000, vdso_clock_monotonic_raw_1.patch: vread_tsc_raw() clamped to
  // raw_cycle_last, ((cycles - raw_cycle_last) & raw_mask) * raw_mult.
  kVasDias,
  // Seed 000, "[PATCH v4.16-rc4 2/2]": as kVasDias, but vread_tsc_raw()
  // reads with rdtscp when gtod->has_rdtscp.
  kVasDiasRdtscp,
  // Seed 001, "[PATCH v4.16-rc5 (2)]" (reconstructed, see vgtod_416.h):
  // vread_tsc() and the mono clock's cycle_last and mask, raw_mult and
  // raw_shift.
  kRc5,
};

struct Vdso416Spec {
  GtodFields f;
  RawClock raw = RawClock::kNone;
  TraceClock trace = TraceClock::kNone;
};

namespace vclock416_internal {

using gtod_internal::GtodReadBegin;
using gtod_internal::GtodReadRetry;
using gtod_internal::Load32;
using gtod_internal::Load64;

// vread_tsc() (4.16): rdtsc_ordered(), then clamp to cycle_last, so that a
// CPU whose TSC lags the one that last updated cycle_last does not produce
// an unsigned delta near 2^64 (kernel-reference.md §8.1).
template <const Vdso416Spec& S, vdso::VdsoAccess A>
uint64_t VreadTsc(A& acc, const uint8_t* vd) {
  const uint64_t ret = acc.ReadTsc();
  const uint64_t last = Load64(acc, vd, S.f.cycle_last);
  if (ret >= last) return ret;
  return last;
}

// vread_tsc_raw() (seed 000): raw_cycle_last is loaded before the counter
// is read, as the patch writes it. The 2/2 revision reads with rdtscp where
// the page says the CPU has it.
template <const Vdso416Spec& S, vdso::VdsoAccess A>
uint64_t VreadTscRaw(A& acc, const uint8_t* vd) {
  const uint64_t last = Load64(acc, vd, S.f.raw_cycle_last);
  uint64_t tsc;
  if constexpr (S.raw == RawClock::kVasDiasRdtscp) {
    tsc = Load32(acc, vd, S.f.has_rdtscp) != 0 ? acc.ReadTscp() : acc.ReadTsc();
  } else {
    tsc = acc.ReadTsc();
  }
  if (tsc >= last) return tsc;
  return last;
}

// vread_hvclock() on a page that says "unusable" (see the file comment):
// VCLOCK_NONE and 0 cycles.
inline uint64_t UnusableVclock(int32_t* mode) {
  *mode = kVclockNone;
  return 0;
}

// vread_pvclock() (4.16): VCLOCK_NONE and 0 without the stable bit; else
// kvm-clock clamped to cycle_last ("refer to vread_tsc() comment for
// rationale"). nullopt: abandoned.
template <const Vdso416Spec& S, vdso::VdsoAccess A>
std::optional<uint64_t> VreadPvclock(A& acc, const uint8_t* vd, int32_t* mode) {
  const std::optional<vdso::PvclockReading> r =
      vdso::ReadPvclockPre615(acc, vd + vdso::kPvclockPageOffset);
  if (!r) return std::nullopt;
  if (!r->stable) return UnusableVclock(mode);
  const uint64_t last = Load64(acc, vd, S.f.cycle_last);
  if (r->ns >= last) return r->ns;
  return last;
}

// The counter of vgetsns() and vgetsns_raw() in a mode other than TSC:
// kvm-clock, Hyper-V (unusable), else nothing (nullopt in `cycles`: the
// caller returns 0). The outer nullopt: abandoned.
template <const Vdso416Spec& S, vdso::VdsoAccess A>
std::optional<std::optional<uint64_t>> VclockCycles(A& acc, const uint8_t* vd,
                                                    int32_t vclock,
                                                    int32_t* mode) {
  if (vclock == kVclockPvclock) {
    const std::optional<uint64_t> c = VreadPvclock<S>(acc, vd, mode);
    if (!c) return std::nullopt;
    return std::optional<uint64_t>(*c);
  }
  if (vclock == kVclockHvclock) {
    return std::optional<uint64_t>(UnusableVclock(mode));
  }
  return std::optional<uint64_t>();
}

// vgetsns() (4.16): shifted ns since cycle_last; 0 for a mode the vDSO
// cannot read (the caller then sees VCLOCK_NONE and falls back). The mode
// is loaded again here, as the source does (the kernel builds with
// -fno-strict-aliasing, so the store to ts in between forces a reload).
// nullopt: abandoned.
template <const Vdso416Spec& S, vdso::VdsoAccess A>
std::optional<uint64_t> Vgetsns(A& acc, const uint8_t* vd, int32_t* mode) {
  const int32_t vclock = static_cast<int32_t>(Load32(acc, vd, S.f.vclock_mode));
  uint64_t cycles;
  if (vclock == kVclockTsc) {
    cycles = VreadTsc<S>(acc, vd);
  } else {
    const std::optional<std::optional<uint64_t>> c =
        VclockCycles<S>(acc, vd, vclock, mode);
    if (!c) return std::nullopt;
    if (!*c) return 0;
    cycles = **c;
  }
  const uint64_t v =
      (cycles - Load64(acc, vd, S.f.cycle_last)) & Load64(acc, vd, S.f.mask);
  return v * Load32(acc, vd, S.f.mult);  // u64 * u32: wraps past max_cycles.
}

// vgetsns_raw() (seed 000 / reconstructed seed 001). nullopt: abandoned.
template <const Vdso416Spec& S, vdso::VdsoAccess A>
std::optional<uint64_t> VgetsnsRaw(A& acc, const uint8_t* vd, int32_t* mode) {
  const int32_t vclock = static_cast<int32_t>(Load32(acc, vd, S.f.vclock_mode));
  uint64_t cycles;
  if (vclock == kVclockTsc) {
    if constexpr (S.raw == RawClock::kRc5) {
      cycles = VreadTsc<S>(acc, vd);
    } else {
      cycles = VreadTscRaw<S>(acc, vd);
    }
  } else {
    const std::optional<std::optional<uint64_t>> c =
        VclockCycles<S>(acc, vd, vclock, mode);
    if (!c) return std::nullopt;
    if (!*c) return 0;
    cycles = **c;
  }
  uint64_t v;
  if constexpr (S.raw == RawClock::kRc5) {
    // Reconstructed: the stripped-down patch publishes no raw_cycle_last or
    // raw_mask; tkr_raw shares tkr_mono's cycle_last and mask.
    v = (cycles - Load64(acc, vd, S.f.cycle_last)) & Load64(acc, vd, S.f.mask);
  } else {
    v = (cycles - Load64(acc, vd, S.f.raw_cycle_last)) &
        Load64(acc, vd, S.f.raw_mask);
  }
  return v * Load32(acc, vd, S.f.raw_mult);
}

// do_realtime() / do_monotonic() (4.16), and do_monotonic_raw() (seeds 000
// and 001) when kRaw: the base seconds and shifted ns under the seq, then
// __iter_div_u64_rem() outside the loop. Returns the vclock mode (NONE:
// use the syscall); nullopt: abandoned by the access policy.
// __always_inline: see vdso/upstream_reader.h's ReadBeginTimens().
template <const Vdso416Spec& S, bool kRaw, vdso::VdsoAccess A>
[[gnu::always_inline]] inline std::optional<int32_t> DoHres(
    A& acc, const uint8_t* vd, uint32_t sec_field, uint32_t snsec_field,
    Timespec64* ts) {
  uint64_t ns;
  int32_t mode;
  for (;;) {
    const std::optional<uint32_t> seq = GtodReadBegin(acc, vd, S.f.seq);
    if (!seq) return std::nullopt;
    mode = static_cast<int32_t>(Load32(acc, vd, S.f.vclock_mode));
    ts->tv_sec = static_cast<int64_t>(Load64(acc, vd, sec_field));
    ns = Load64(acc, vd, snsec_field);
    const std::optional<uint64_t> sns =
        kRaw ? VgetsnsRaw<S>(acc, vd, &mode) : Vgetsns<S>(acc, vd, &mode);
    if (!sns) return std::nullopt;
    ns += *sns;
    ns = ShrX86(ns, Load32(acc, vd, kRaw ? S.f.raw_shift : S.f.shift));
    if (!GtodReadRetry(acc, vd, S.f.seq, *seq)) break;
    if (!acc.MayRetry()) return std::nullopt;
  }
  uint64_t rem = 0;
  // The kernel builds with -fno-strict-overflow: a garbled tv_sec wraps.
  ts->tv_sec = static_cast<int64_t>(
      static_cast<uint64_t>(ts->tv_sec) +
      IterDivU64Rem(ns, static_cast<uint32_t>(kNsecPerSec), &rem));
  ts->tv_nsec = static_cast<int64_t>(rem);
  return mode;
}

// do_realtime_coarse() / do_monotonic_coarse() (4.16): plain ns, copied
// under the seq; served whatever the vclock mode.
template <const Vdso416Spec& S, vdso::VdsoAccess A>
std::optional<Timespec64> DoCoarse(A& acc, const uint8_t* vd,
                                   uint32_t sec_field, uint32_t nsec_field) {
  for (;;) {
    const std::optional<uint32_t> seq = GtodReadBegin(acc, vd, S.f.seq);
    if (!seq) return std::nullopt;
    Timespec64 ts;
    ts.tv_sec = static_cast<int64_t>(Load64(acc, vd, sec_field));
    ts.tv_nsec = static_cast<int64_t>(Load64(acc, vd, nsec_field));
    if (!GtodReadRetry(acc, vd, S.f.seq, *seq)) return ts;
    if (!acc.MayRetry()) return std::nullopt;
  }
}

// do_trace_clock() (seed 002): no seq; trace_clock_is_sync and cpu_khz are
// read bare. "rdtsc_barrier(); vget_cycles(); rdtsc_barrier()" is
// rdtsc_ordered() in effect.
template <const Vdso416Spec& S, vdso::VdsoAccess A>
ClockResult DoTraceClock(A& acc, const uint8_t* vd) {
  const int32_t is_sync =
      static_cast<int32_t>(Load32(acc, vd, S.f.trace_clock_is_sync));
  if (is_sync == 0) return ClockResult::Error(-kEperm);
  const uint64_t cycles = acc.ReadTsc();
  return TraceClockResult(S.trace, cycles, Load64(acc, vd, S.f.cpu_khz));
}

// An hres clock's outcome: VCLOCK_NONE goes to the syscall.
template <vdso::VdsoAccess A>
std::optional<ClockResult> HresResult(A& acc, ClockId clock,
                                      std::optional<int32_t> mode,
                                      const Timespec64& ts) {
  if (!mode) return std::nullopt;
  if (*mode == kVclockNone) return acc.Fallback(clock);
  return ClockResult::Ok(ts);
}

}  // namespace vclock416_internal

// __vdso_clock_gettime() (4.16 with the spec's patches). `vd` is the time
// data page (vvar); the struct is at vd + 128. std::nullopt only when the
// access policy abandoned the call.
template <const Vdso416Spec& S, vdso::VdsoAccess A>
std::optional<ClockResult> ClockGettime416(A& acc, const uint8_t* vd,
                                           ClockId clock) {
  namespace in = vclock416_internal;
  Timespec64 ts;
  if (clock == kClockRealtime) {
    return in::HresResult(acc, clock,
                          in::DoHres<S, false>(acc, vd, S.f.wall_time_sec,
                                               S.f.wall_time_snsec, &ts),
                          ts);
  }
  if (clock == kClockMonotonic) {
    return in::HresResult(acc, clock,
                          in::DoHres<S, false>(acc, vd, S.f.monotonic_time_sec,
                                               S.f.monotonic_time_snsec, &ts),
                          ts);
  }
  if constexpr (S.raw != RawClock::kNone) {
    if (clock == kClockMonotonicRaw) {
      return in::HresResult(
          acc, clock,
          in::DoHres<S, true>(acc, vd, S.f.monotonic_time_raw_sec,
                              S.f.monotonic_time_raw_nsec, &ts),
          ts);
    }
  }
  if (clock == kClockRealtimeCoarse || clock == kClockMonotonicCoarse) {
    const bool real = clock == kClockRealtimeCoarse;
    const std::optional<Timespec64> coarse = in::DoCoarse<S>(
        acc, vd,
        real ? S.f.wall_time_coarse_sec : S.f.monotonic_time_coarse_sec,
        real ? S.f.wall_time_coarse_nsec : S.f.monotonic_time_coarse_nsec);
    if (!coarse) return std::nullopt;
    return ClockResult::Ok(*coarse);
  }
  if constexpr (S.trace != TraceClock::kNone) {
    if (clock == kClockTrace) return in::DoTraceClock<S>(acc, vd);
    // The RFC's switch ends in "default: return -EINVAL;": every other id,
    // MONOTONIC_RAW, BOOTTIME, TAI and the CPU clocks included, fails
    // without reaching the syscall.
    return ClockResult::Error(-kEinval);
  }
  return acc.Fallback(clock);  // default: goto fallback.
}

}  // namespace vdsolab::variants::gtod

#endif  // VDSOLAB_VARIANTS_GTOD_VCLOCK_GETTIME_416_H_
