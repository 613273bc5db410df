// File: vdso/upstream_reader.h
//
// The upstream vDSO clock_gettime() for x86-64 as of Linux 6.17/6.18:
// lib/vdso/gettimeofday.c (dispatch, do_hres, do_coarse, do_aux, the seq
// loop) with the x86 hooks of arch/x86/include/asm/vdso/gettimeofday.h
// (6.10+: counter & S64_MAX, (s64)cycles >= 0, vdso_calc_ns with max_cycles
// and the bit-62 negative-motion clamp), over the 6.17+ page layout in
// vdso/datapage.h.
//
// A task in a time namespace passes its namespace page (VvarPage::
// timens_data()): every vdso_clock there has seq 1 and mode TIMENS, so the
// seq loops divert to the real time page one page on and add the
// namespace's offsets (do_hres_timens(), do_coarse_timens(), do_aux()'s
// re-read).
//
// Deviations (docs/readers.md): the HVCLOCK (Hyper-V TSC page) counter is
// not modelled and reads as U64_MAX, which sends the caller to the syscall
// as for mode NONE. The PVCLOCK counter (kvm-clock) is modelled:
// vread_pvclock() over the pvclock page of the vvar area, which the kernel
// reaches RIP-relative and the model from the start of the vvar area as
// the task maps it.
//
// Example:
//   vdso::NativeAccess native;
//   std::optional<ClockResult> r =
//       vdso::upstream::ClockGettime(native, page->data(), CLOCK_MONOTONIC);

#ifndef VDSOLAB_VDSO_UPSTREAM_READER_H_
#define VDSOLAB_VDSO_UPSTREAM_READER_H_

#include <cstdint>
#include <optional>
#include <type_traits>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/math64.h"
#include "vdso/access.h"
#include "vdso/datapage.h"

namespace vdsolab::vdso::upstream {

// VDSO_CLOCKMODE_* values the reader tests.
inline constexpr int32_t kClockModeNone = 0;
inline constexpr int32_t kClockModeTsc = 1;
inline constexpr int32_t kClockModePvclock = 2;
inline constexpr int32_t kClockModeTimens = 0x7fffffff;

namespace upstream_internal {

// A loop that the access policy stopped (simulation livelock budget).
struct Abandoned {};

// What the seq loop's open-coded vdso_read_begin_timens() found.
struct Begin {
  uint32_t seq = 0;
  bool timens = false;  // An odd seq on a TIMENS record: divert.
};

// The seq loop's start (6.17/6.18 open-code it in do_hres, do_coarse and
// do_aux): spin while the writer holds seq odd, unless the record is a time
// namespace's (seq 1, mode TIMENS, CONFIG_TIME_NS); then smp_rmb() (pairs
// with smp_wmb() after the writer's seq++ in vdso_write_begin()).
//
// __always_inline, as in lib/vdso: out of line, GCC 12 returns the
// optional through a stack slot it stores in parts and reloads whole, a
// store-forwarding stall that cost the native reader ~16 ns a call
// (docs/benchmarks.md). The same holds for the other seq-loop helpers.
template <VdsoAccess A>
[[gnu::always_inline]] inline std::optional<Begin> ReadBeginTimens(
    A& acc, const uint8_t* vc) {
  uint32_t seq;
  while (((seq = acc.template Load<uint32_t>(vc + kVcSeq)) & 1) != 0) {
    if (static_cast<int32_t>(acc.template Load<uint32_t>(vc + kVcClockMode)) ==
        kClockModeTimens) {
      return Begin{seq, true};
    }
    acc.CpuRelax();
    if (!acc.MayRetry()) return std::nullopt;
  }
  acc.Rmb();
  return Begin{seq, false};
}

// vdso_read_begin(): the plain form, on the real time page.
template <VdsoAccess A>
[[gnu::always_inline]] inline std::optional<uint32_t> ReadBegin(
    A& acc, const uint8_t* vc) {
  uint32_t seq;
  while (((seq = acc.template Load<uint32_t>(vc + kVcSeq)) & 1) != 0) {
    acc.CpuRelax();
    if (!acc.MayRetry()) return std::nullopt;
  }
  acc.Rmb();
  return seq;
}

// vdso_read_retry(): smp_rmb() (pairs with smp_wmb() before the writer's
// final seq++ in vdso_write_end()), then compare seq.
template <VdsoAccess A>
bool ReadRetry(A& acc, const uint8_t* vc, uint32_t start) {
  acc.Rmb();
  return acc.template Load<uint32_t>(vc + kVcSeq) != start;
}

// pvclock_scale_delta() for x86-64: shift, then the 64x32 multiply keeping
// bits 32..95 (mulq; shrd $32).
inline uint64_t PvclockScaleDelta(uint64_t delta, uint32_t mul_frac,
                                  int shift) {
  if (shift < 0) {
    delta = ShrX86(delta, static_cast<uint32_t>(-shift));
  } else {
    delta = ShlX86(delta, static_cast<uint32_t>(shift));
  }
  return static_cast<uint64_t>(
      (static_cast<unsigned __int128>(delta) * mul_frac) >> 32);
}

// vread_pvclock() (6.5+): kvm-clock nanoseconds from vCPU 0's pvclock
// page, under the hypervisor's version protocol; U64_MAX (use the syscall)
// unless the hypervisor says all vCPUs' TSCs are stable.
template <VdsoAccess A>
std::optional<uint64_t> VreadPvclock(A& acc, const uint8_t* pvti) {
  uint64_t ret;
  for (;;) {
    // pvclock_read_begin(): the low bit is ignored, so an update in
    // progress fails the retry check below. virt_rmb() pairs with the
    // hypervisor's write barriers around its version bumps.
    const uint32_t version =
        acc.template Load<uint32_t>(pvti + kPvtiVersion) & ~1u;
    acc.Rmb();
    if ((acc.template Load<uint8_t>(pvti + kPvtiFlags) &
         kPvclockTscStableBit) == 0) {
      return kU64Max;
    }
    // __pvclock_read_cycles(pvti, rdtsc_ordered()). A TSC before the
    // hypervisor's tsc_timestamp (a negative delta as s64) scales as 0, as
    // in the 6.18 vDSO's compiled code (sub; cmovs before the scaling, as
    // `vdsolab conform` found); 6.1's
    // __pvclock_read_cycles() has no such clamp, and the commit that added
    // it is not identified here. It matters where tsc_shift <= -2 (a TSC
    // above 4 GHz): unclamped, the wrapped delta scales to just under 2^62
    // ns past cycle_last, a time decades ahead instead of the base time.
    const uint64_t tsc = acc.ReadTsc();
    uint64_t delta =
        tsc - acc.template Load<uint64_t>(pvti + kPvtiTscTimestamp);
    if (static_cast<int64_t>(delta) < 0) delta = 0;
    const uint32_t mul = acc.template Load<uint32_t>(pvti + kPvtiMul);
    const int8_t shift =
        static_cast<int8_t>(acc.template Load<uint8_t>(pvti + kPvtiShift));
    ret = acc.template Load<uint64_t>(pvti + kPvtiSystemTime) +
          PvclockScaleDelta(delta, mul, shift);
    // pvclock_read_retry(): virt_rmb(), then compare the version.
    acc.Rmb();
    if (version == acc.template Load<uint32_t>(pvti + kPvtiVersion)) break;
    if (!acc.MayRetry()) return std::nullopt;
  }
  return ret & kS64Max;
}

// __arch_get_hw_counter() for x86: the TSC with the sign bit cleared, since
// U64_MAX / a set MSB marks an invalid read; kvm-clock from the pvclock
// page. False: abandoned by the access policy. Always inline, as the
// compiled vDSO has it, and the value through a pointer rather than a
// std::optional: GCC 12 built the optional in a stack slot with an 8-byte
// and a 1-byte store and copied it with one 16-byte load, which cannot be
// forwarded from them (a stall in every simulated call: ~5% of one).
template <VdsoAccess A>
[[gnu::always_inline]] inline bool ArchGetHwCounter(A& acc, int32_t clock_mode,
                                                    const uint8_t* vd,
                                                    uint64_t* cycles) {
  if (clock_mode == kClockModeTsc) {
    *cycles = acc.ReadTsc() & kS64Max;
    return true;
  }
  // The barrier keeps the compiler from hoisting pvclock page loads above
  // the mode check (the 2019 "hoisted vclock reads" fix).
  if (clock_mode == kClockModePvclock) {
    acc.Rmb();
    const std::optional<uint64_t> ns =
        VreadPvclock(acc, vd + kPvclockPageOffset);
    if (!ns) return false;
    *cycles = *ns;
    return true;
  }
  *cycles = kU64Max;
  return true;
}

// arch_vdso_cycles_ok() for x86.
inline bool CyclesOk(uint64_t cycles) {
  return static_cast<int64_t>(cycles) >= 0;
}

// vdso_calc_ns() for x86 (6.10+): one unsigned compare against max_cycles
// catches both negative motion and products that would overflow u64.
template <VdsoAccess A>
[[gnu::always_inline]] inline uint64_t CalcNs(A& acc, const uint8_t* vc,
                                              uint64_t cycles, uint64_t base) {
  const uint64_t delta =
      cycles - acc.template Load<uint64_t>(vc + kVcCycleLast);
  if (delta > acc.template Load<uint64_t>(vc + kVcMaxCycles)) {
    // With S64_MAX as the effective mask, bit 62 is the sign bit: the TSC
    // is behind cycle_last, so stay at the base time.
    if ((delta & (1ull << 62)) != 0) {
      return ShrX86(base, acc.template Load<uint32_t>(vc + kVcShift));
    }
    const uint32_t mult = acc.template Load<uint32_t>(vc + kVcMult);
    const uint32_t shift = acc.template Load<uint32_t>(vc + kVcShift);
    return MulU64U32AddU64Shr(delta & kS64Max, mult, base, shift);
  }
  const uint32_t mult = acc.template Load<uint32_t>(vc + kVcMult);
  const uint32_t shift = acc.template Load<uint32_t>(vc + kVcShift);
  return ShrX86(delta * mult + base, shift);
}

// vdso_get_timestamp(): false sends the caller to the syscall; nullopt:
// abandoned. `vvar` is the start of the vvar area as the task maps it: the
// pvclock page is at a fixed offset from it (the kernel reaches it through
// the pvclock_page symbol), whichever page holds the time data (a task in
// a time namespace has its namespace's page first).
// __always_inline, as vdso_calc_ns(), vdso_get_timestamp() and do_hres()
// are in lib/vdso: one function per clock path (which also lets the
// simulation's QuietAccess keep its state in registers).
template <VdsoAccess A>
[[gnu::always_inline]] inline std::optional<bool> GetTimestamp(
    A& acc, const uint8_t* vvar, const uint8_t* vc, int idx, uint64_t* sec,
    uint64_t* ns) {
  // vdso_clocksource_ok() is always true on x86: mode NONE is caught by the
  // counter read returning U64_MAX.
  const int32_t mode =
      static_cast<int32_t>(acc.template Load<uint32_t>(vc + kVcClockMode));
  uint64_t cycles = 0;
  if (!ArchGetHwCounter(acc, mode, vvar, &cycles)) return std::nullopt;
  if (!CyclesOk(cycles)) return false;
  const uint64_t base = acc.template Load<uint64_t>(vc + VcBasetimeNsec(idx));
  *ns = CalcNs(acc, vc, cycles, base);
  *sec = acc.template Load<uint64_t>(vc + VcBasetimeSec(idx));
  return true;
}

// vdso_set_timespec(): normalise outside the loop, because a racy ns inside
// the loop could make __iter_div_u64_rem() arbitrarily slow.
inline Timespec64 SetTimespec(uint64_t sec, uint64_t ns) {
  uint64_t rem = 0;
  const uint32_t carry =
      IterDivU64Rem(ns, static_cast<uint32_t>(kNsecPerSec), &rem);
  return Timespec64{static_cast<int64_t>(sec + carry),
                    static_cast<int64_t>(rem)};
}

// struct timens_offset at offset[clk] of a namespace page record: sec is
// s64, nsec u64; both are added in u64 as the kernel's sec/ns are.
template <VdsoAccess A>
void AddTimensOffset(A& acc, const uint8_t* vcns, int clk, uint64_t* sec,
                     uint64_t* ns) {
  *sec += acc.template Load<uint64_t>(vcns + VcOffsetSec(clk));
  *ns += acc.template Load<uint64_t>(vcns + VcOffsetNsec(clk));
}

// do_hres_timens(): the real time page is one page after the namespace's
// (__arch_get_vdso_u_timens_data()); read it under its own seq, then add
// the namespace's offset for this clock.
template <VdsoAccess A>
std::optional<bool> DoHresTimens(A& acc, const uint8_t* vdns,
                                 const uint8_t* vcns, ClockId clk,
                                 Timespec64* ts) {
  const uint8_t* vd = vdns + kPageSize;
  const uint8_t* vc =
      vd + ClockDataOffset(clk != kClockMonotonicRaw ? kCsHresCoarse : kCsRaw);
  uint64_t sec = 0, ns = 0;
  for (;;) {
    std::optional<uint32_t> seq = ReadBegin(acc, vc);
    if (!seq) return std::nullopt;
    const std::optional<bool> ok = GetTimestamp(acc, vdns, vc, clk, &sec, &ns);
    if (!ok || !*ok) return ok;
    if (!ReadRetry(acc, vc, *seq)) break;
    if (!acc.MayRetry()) return std::nullopt;
  }
  AddTimensOffset(acc, vcns, clk, &sec, &ns);
  *ts = SetTimespec(sec, ns);
  return true;
}

// do_hres(): true with *ts set; false: use the syscall; nullopt: abandoned.
template <VdsoAccess A>
[[gnu::always_inline]] inline std::optional<bool> DoHres(
    A& acc, const uint8_t* vd, const uint8_t* vc, ClockId clk, Timespec64* ts) {
  uint64_t sec = 0, ns = 0;
  for (;;) {
    std::optional<Begin> begin = ReadBeginTimens(acc, vc);
    if (!begin) return std::nullopt;
    if (begin->timens) return DoHresTimens(acc, vd, vc, clk, ts);
    const std::optional<bool> ok = GetTimestamp(acc, vd, vc, clk, &sec, &ns);
    if (!ok || !*ok) return ok;
    if (!ReadRetry(acc, vc, begin->seq)) break;
    if (!acc.MayRetry()) return std::nullopt;
  }
  *ts = SetTimespec(sec, ns);
  return true;
}

// do_coarse_timens(): the coarse base of the real page under its seq, plus
// the offset, normalised outside the loop.
template <VdsoAccess A>
std::optional<bool> DoCoarseTimens(A& acc, const uint8_t* vdns,
                                   const uint8_t* vcns, ClockId clk,
                                   Timespec64* ts) {
  const uint8_t* vc = vdns + kPageSize + ClockDataOffset(kCsHresCoarse);
  uint64_t sec = 0, nsec = 0;
  for (;;) {
    std::optional<uint32_t> seq = ReadBegin(acc, vc);
    if (!seq) return std::nullopt;
    sec = acc.template Load<uint64_t>(vc + VcBasetimeSec(clk));
    nsec = acc.template Load<uint64_t>(vc + VcBasetimeNsec(clk));
    if (!ReadRetry(acc, vc, *seq)) break;
    if (!acc.MayRetry()) return std::nullopt;
  }
  AddTimensOffset(acc, vcns, clk, &sec, &nsec);
  *ts = SetTimespec(sec, nsec);
  return true;
}

// do_coarse(): the coarse bases hold plain ns; copy them under the seq.
template <VdsoAccess A>
std::optional<bool> DoCoarse(A& acc, const uint8_t* vd, const uint8_t* vc,
                             ClockId clk, Timespec64* ts) {
  for (;;) {
    std::optional<Begin> begin = ReadBeginTimens(acc, vc);
    if (!begin) return std::nullopt;
    if (begin->timens) return DoCoarseTimens(acc, vd, vc, clk, ts);
    ts->tv_sec = static_cast<int64_t>(
        acc.template Load<uint64_t>(vc + VcBasetimeSec(clk)));
    ts->tv_nsec = static_cast<int64_t>(
        acc.template Load<uint64_t>(vc + VcBasetimeNsec(clk)));
    if (!ReadRetry(acc, vc, begin->seq)) return true;
    if (!acc.MayRetry()) return std::nullopt;
  }
}

// How do_aux() leaves a time namespace page.
enum class AuxTimens {
  // 6.17/6.18: the open-coded begin loop moves to the real page and goes
  // on spinning there, so the loop only ends on the real page's even seq.
  kOpenCoded,
  // The newest lib/vdso (vdso_read_begin_timens() in do_aux): `continue`
  // jumps to the do/while condition, which compares the real page's seq
  // with the namespace page's seq, 1. If the real aux clock's seq is 1 too
  // (its first update in progress, or after seq wraps, every 2^31
  // updates) the loop ends with sec and ns never read. C leaves them
  // uninitialised; the model's hold 0. (Read from the source; no test here
  // runs this form, and docs/findings.md does not claim it.)
  kContinueToRetry,
};

// do_aux() (6.17+): a disabled aux clock (mode NONE) goes to the syscall.
// Aux clocks have no namespace offset: the namespace page only diverts.
template <VdsoAccess A>
std::optional<bool> DoAux(A& acc, const uint8_t* vd, ClockId clock,
                          Timespec64* ts,
                          AuxTimens form = AuxTimens::kOpenCoded) {
  const int idx = clock - kClockAux;
  const uint8_t* const vvar = vd;  // Where the pvclock page is reached from.
  const uint8_t* vc = vd + AuxClockDataOffset(idx);
  uint64_t sec = 0, ns = 0;
  for (;;) {
    std::optional<Begin> begin = ReadBeginTimens(acc, vc);
    if (!begin) return std::nullopt;
    while (begin->timens) {
      vd += kPageSize;  // __arch_get_vdso_u_timens_data()
      vc = vd + AuxClockDataOffset(idx);
      if (form == AuxTimens::kContinueToRetry) break;
      // Still inside the begin loop: its next pass reads the real page.
      begin = ReadBeginTimens(acc, vc);
      if (!begin) return std::nullopt;
    }
    if (begin->timens) {
      if (!ReadRetry(acc, vc, begin->seq)) break;  // seq 1 both: done.
      if (!acc.MayRetry()) return std::nullopt;
      continue;
    }
    const int32_t mode =
        static_cast<int32_t>(acc.template Load<uint32_t>(vc + kVcClockMode));
    if (mode == kClockModeNone) return false;
    const std::optional<bool> ok =
        GetTimestamp(acc, vvar, vc, kVdsoBaseAux, &sec, &ns);
    if (!ok || !*ok) return ok;
    if (!ReadRetry(acc, vc, begin->seq)) break;
    if (!acc.MayRetry()) return std::nullopt;
  }
  *ts = SetTimespec(sec, ns);
  return true;
}

// __cvdso_clock_gettime_common(): true if the vDSO answered.
template <VdsoAccess A>
[[gnu::always_inline]] inline std::optional<bool> ClockGettimeCommonInline(
    A& acc, const uint8_t* vd, ClockId clock, Timespec64* ts) {
  // vdso_clockid_valid(): negative ids wrap to large u32 values.
  if (static_cast<uint32_t>(clock) > static_cast<uint32_t>(kClockAuxLast)) {
    return false;
  }
  // Convert the clock id to a bit and look it up in the served sets.
  const uint32_t msk = 1u << clock;
  if ((msk & kVdsoHres) != 0) {
    return DoHres(acc, vd, vd + ClockDataOffset(kCsHresCoarse), clock, ts);
  }
  if ((msk & kVdsoCoarse) != 0) {
    return DoCoarse(acc, vd, vd + ClockDataOffset(kCsHresCoarse), clock, ts);
  }
  if ((msk & kVdsoRaw) != 0) {
    return DoHres(acc, vd, vd + ClockDataOffset(kCsRaw), clock, ts);
  }
  if ((msk & kVdsoAux) != 0) return DoAux(acc, vd, clock, ts);
  return false;
}

// The same, where the compiler chooses to inline it or not.
template <VdsoAccess A>
std::optional<bool> ClockGettimeCommon(A& acc, const uint8_t* vd, ClockId clock,
                                       Timespec64* ts) {
  return ClockGettimeCommonInline(acc, vd, clock, ts);
}

}  // namespace upstream_internal

// __cvdso_clock_gettime_data(): the vDSO's answer, or the syscall's when the
// vDSO does not serve this clock or mode. std::nullopt only when the access
// policy abandoned the call (never with NativeAccess).
template <VdsoAccess A>
std::optional<ClockResult> ClockGettime(A& acc, const uint8_t* vd,
                                        ClockId clock) {
  Timespec64 ts;
  // lib/vdso's __always_inline, for the simulation's policies only: out of
  // line, the caller reloaded the timespec it had stored word by word with
  // one 16-byte load, a store-forwarding stall in every simulated call
  // (7% of one). Natively GCC 12 inlines to slower code (17.9 -> 23.7 ns
  // per MONOTONIC call, 1.3 -> 7.3 ns per COARSE one), so it chooses there.
  std::optional<bool> ok;
  if constexpr (std::is_same_v<A, NativeAccess>) {
    ok = upstream_internal::ClockGettimeCommon(acc, vd, clock, &ts);
  } else {
    ok = upstream_internal::ClockGettimeCommonInline(acc, vd, clock, &ts);
  }
  if (!ok) return std::nullopt;
  if (!*ok) return acc.Fallback(clock);
  return ClockResult::Ok(ts);
}

}  // namespace vdsolab::vdso::upstream

#endif  // VDSOLAB_VDSO_UPSTREAM_READER_H_
