// File: variants/eras/era_reader.h
//
// The x86-64 generic vDSO clock_gettime() by kernel era. As in the kernel,
// one generic reader (lib/vdso/gettimeofday.c) is parameterised by the x86
// hooks of arch/x86/include/asm/vdso/gettimeofday.h; here an era policy
// picks the generic code's generation, the x86 hooks and the record layout
// (variants/eras/datapage.h):
//
//   era   generic code          x86 hooks                      record
//   5.3   5.3 (first generic)   raw TSC, cycles > last clamp   vdso_data 240
//   6.1   6.1 (timens check)    raw TSC, cycles > last clamp   vdso_data 240
//   6.5   6.1                   TSC & S64_MAX, bit-62 filter   vdso_data 240
//   6.10  6.10 (vdso_calc_ns)   TSC & S64_MAX, max_cycles      vdso_data 248
//   6.15  6.15 = 6.17 minus aux (vdso/upstream_reader.h)       vdso_clock 232
//
// kvm-clock: every era models vread_pvclock() over vCPU 0's pvclock page,
// which the simulated vvar area holds at vdso::kPvclockPageOffset from its
// start for every layout (the kernel reaches it RIP-relative through the
// pvclock_page symbol, so only the page matters, not where it sits). Before
// 6.5 it returns the scaled value as it is; 6.5+ masks it with S64_MAX; no
// era before 6.15 clamps a negative TSC delta (6.1's and 6.12's
// __pvclock_read_cycles() scale it as the huge u64 it is).
//
// Deviations: time namespaces are not modelled (no TIMENS page is ever
// published; 6.1+ still loads clock_mode where the kernel's open-coded
// timens check does). HVCLOCK reads as U64_MAX and goes to the syscall, as
// mode NONE does. 6.15 reuses the upstream reader's hooks.

#ifndef VDSOLAB_VARIANTS_ERAS_ERA_READER_H_
#define VDSOLAB_VARIANTS_ERAS_ERA_READER_H_

#include <cstdint>
#include <optional>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/math64.h"
#include "variants/eras/datapage.h"
#include "vdso/access.h"
#include "vdso/datapage.h"
#include "vdso/pvclock_loop.h"
#include "vdso/upstream_reader.h"

namespace vdsolab::variants::eras {

// Clock modes as the era pages number them. 5.3 stored the x86 VCLOCK_*
// value (VCLOCK_NONE 0, VCLOCK_TSC 1, VCLOCK_PVCLOCK 2, VCLOCK_HVCLOCK 3);
// later eras (6.1 here) store VDSO_CLOCKMODE_*, with the same values on
// x86.
inline constexpr int32_t kEraClockModeNone = 0;
inline constexpr int32_t kEraClockModeTsc = 1;
inline constexpr int32_t kEraClockModePvclock = 2;
inline constexpr int32_t kEraClockModeHvclock = 3;
inline constexpr int32_t kEraClockModeTimens = 0x7fffffff;  // 5.6+

namespace internal {

// --- x86 hooks (arch/x86/include/asm/vdso/gettimeofday.h) by era ---------

// vread_pvclock() (5.3-6.14, vdso/pvclock_loop.h): U64_MAX (the syscall)
// unless all vCPUs' TSCs are stable; 6.5+ masks the result with S64_MAX
// ("x86/vdso: Fix gettimeofday masking"). nullopt: abandoned.
template <bool kMaskS64, vdso::VdsoAccess A>
std::optional<uint64_t> VreadPvclock(A& acc, const uint8_t* pvti) {
  const std::optional<vdso::PvclockReading> r =
      vdso::ReadPvclockPre615(acc, pvti);
  if (!r) return std::nullopt;
  if (!r->stable) return kU64Max;
  if constexpr (kMaskS64) return r->ns & kS64Max;
  return r->ns;
}

// __arch_get_hw_counter()'s PVCLOCK branch: barrier() first, so that no
// load of the pvclock page is hoisted above the mode check (it would fault
// where the page is not mapped).
template <bool kMaskS64, vdso::VdsoAccess A>
std::optional<uint64_t> PvclockCounter(A& acc, const uint8_t* page) {
  acc.Rmb();
  return VreadPvclock<kMaskS64>(acc, page + vdso::kPvclockPageOffset);
}

// 5.3-6.4.
struct X86Pre65 {
  // __arch_get_hw_counter(): the raw TSC (rdtsc_ordered) in TSC mode, so a
  // counter with bit 63 set reaches the caller's sign check; kvm-clock in
  // PVCLOCK mode. `page` is the start of the vvar area.
  template <vdso::VdsoAccess A>
  static std::optional<uint64_t> GetHwCounter(A& acc, int32_t clock_mode,
                                              const uint8_t* page) {
    if (clock_mode == kEraClockModeTsc) return acc.ReadTsc();
    if (clock_mode == kEraClockModePvclock) {
      return PvclockCounter<false>(acc, page);
    }
    return kU64Max;  // HVCLOCK not modelled (see the file comment).
  }
  // vdso_calc_delta() override: a TSC behind cycle_last (cross-socket
  // wobble) converts as cycle_last; no mask (x86 masks are U64_MAX), and
  // nothing stops delta * mult from wrapping in u64.
  static uint64_t CalcDelta(uint64_t cycles, uint64_t last, uint32_t mult) {
    if (cycles > last) return (cycles - last) * mult;
    return 0;
  }
};

// 6.5-6.9: "x86/vdso: Fix gettimeofday masking" (Peter Zijlstra, 2023).
struct X86From65 {
  // U64_MAX is the pv clocks' invalid marker and vdso_cycles_ok() rejects a
  // set MSB, so the effective counter mask is S64_MAX.
  template <vdso::VdsoAccess A>
  static std::optional<uint64_t> GetHwCounter(A& acc, int32_t clock_mode,
                                              const uint8_t* page) {
    if (clock_mode == kEraClockModeTsc) return acc.ReadTsc() & kS64Max;
    if (clock_mode == kEraClockModePvclock) {
      return PvclockCounter<true>(acc, page);
    }
    return kU64Max;
  }
  // vdso_calc_delta() override: with a 63-bit mask, bit 62 is the sign of
  // the delta; negative motion adds nothing. A large positive delta still
  // wraps in u64.
  static uint64_t CalcDelta(uint64_t cycles, uint64_t last, uint32_t mult) {
    const uint64_t delta = (cycles - last) & kS64Max;
    if ((delta & (1ull << 62)) != 0) return 0;
    return delta * mult;
  }
};

// 6.10+: "x86/vdso: Make delta calculation overflow safe" (Adrian Hunter,
// 2024), with CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT.
struct X86From610 {
  template <vdso::VdsoAccess A>
  static std::optional<uint64_t> GetHwCounter(A& acc, int32_t clock_mode,
                                              const uint8_t* page) {
    return X86From65::GetHwCounter(acc, clock_mode, page);
  }
  // vdso_calc_ns() override: one unsigned compare against max_cycles
  // catches negative motion (bit 62 set: stay at the base) and products
  // that would overflow u64 (the 128-bit multiply).
  template <vdso::VdsoAccess A>
  static uint64_t CalcNs(A& acc, const uint8_t* vd, const RecordOffsets& r,
                         uint64_t cycles, uint64_t base) {
    const uint64_t delta =
        cycles - acc.template Load<uint64_t>(vd + r.cycle_last);
    if (delta > acc.template Load<uint64_t>(vd + r.max_cycles)) {
      if ((delta & (1ull << 62)) != 0) {
        return ShrX86(base, acc.template Load<uint32_t>(vd + r.shift));
      }
      const uint32_t mult = acc.template Load<uint32_t>(vd + r.mult);
      const uint32_t shift = acc.template Load<uint32_t>(vd + r.shift);
      return MulU64U32AddU64Shr(delta & kS64Max, mult, base, shift);
    }
    const uint32_t mult = acc.template Load<uint32_t>(vd + r.mult);
    const uint32_t shift = acc.template Load<uint32_t>(vd + r.shift);
    return ShrX86(delta * mult + base, shift);
  }
};

// --- Generations of lib/vdso/gettimeofday.c -----------------------------

enum class Generic {
  k53,   // 5.3: plain vdso_read_begin(); base and cycle_last loaded before
         // the (s64)cycles < 0 test; vdso_calc_delta() + shift.
  k61,   // 6.1-6.9: open-coded timens check in the seq loop;
         // vdso_cycles_ok() before any data load; vdso_calc_delta().
  k610,  // 6.10-6.14: as k61, with vdso_calc_ns(vd, cycles, base).
};

}  // namespace internal

// The era policies: which generation of the generic code, which x86 hooks,
// which record layout.
struct Era53 {
  using Arch = internal::X86Pre65;
  static constexpr internal::Generic kGeneric = internal::Generic::k53;
  static constexpr RecordOffsets kRecord = kVdsoData53;
};
struct Era61 {
  using Arch = internal::X86Pre65;
  static constexpr internal::Generic kGeneric = internal::Generic::k61;
  static constexpr RecordOffsets kRecord = kVdsoData53;
};
struct Era65 {
  using Arch = internal::X86From65;  // The only change from 6.1.
  static constexpr internal::Generic kGeneric = internal::Generic::k61;
  static constexpr RecordOffsets kRecord = kVdsoData53;
};
struct Era610 {
  using Arch = internal::X86From610;
  static constexpr internal::Generic kGeneric = internal::Generic::k610;
  static constexpr RecordOffsets kRecord = kVdsoData610;
};

static_assert(Era610::kRecord.max_cycles != kNoField,
              "vdso_calc_ns() of 6.10 reads max_cycles");
static_assert(Era53::kRecord.max_cycles == kNoField &&
              Era65::kRecord.max_cycles == kNoField);

namespace internal {

// vdso_read_begin() (5.3) or the open-coded loop of do_hres()/do_coarse()
// (6.1+): spin while the writer holds seq odd, then smp_rmb() (pairs with
// the smp_wmb() after the writer's seq++ in vdso_write_begin()). 6.1+ loads
// clock_mode on an odd seq to divert to the time namespace page; it never
// diverts here.
template <class Era, vdso::VdsoAccess A>
std::optional<uint32_t> ReadBegin(A& acc, const uint8_t* vd) {
  constexpr const RecordOffsets& r = Era::kRecord;
  uint32_t seq;
  while (((seq = acc.template Load<uint32_t>(vd + r.seq)) & 1) != 0) {
    if constexpr (Era::kGeneric != Generic::k53) {
      (void)acc.template Load<uint32_t>(vd + r.clock_mode);  // TIMENS?
    }
    acc.CpuRelax();
    if (!acc.MayRetry()) return std::nullopt;
  }
  acc.Rmb();
  return seq;
}

// vdso_read_retry(): smp_rmb() (pairs with the smp_wmb() before the
// writer's final seq++ in vdso_write_end()), then compare seq.
template <class Era, vdso::VdsoAccess A>
bool ReadRetry(A& acc, const uint8_t* vd, uint32_t start) {
  acc.Rmb();
  return acc.template Load<uint32_t>(vd + Era::kRecord.seq) != start;
}

// The body of do_hres()'s seq loop: false sends the caller to the syscall;
// nullopt: abandoned. Loads in kernel source order. x86's
// vdso_clocksource_ok() and __arch_vdso_hres_capable() are constant true
// and load nothing; the mask argument of vdso_calc_delta() is unused by the
// x86 override, so the compiled code never loads vd->mask. `page` is the
// start of the vvar area (the pvclock page's reference), `vd` the record.
template <class Era, vdso::VdsoAccess A>
std::optional<bool> GetTimestamp(A& acc, const uint8_t* page, const uint8_t* vd,
                                 ClockId clk, uint64_t* sec, uint64_t* ns) {
  using Arch = typename Era::Arch;
  constexpr const RecordOffsets& r = Era::kRecord;
  const int32_t mode =
      static_cast<int32_t>(acc.template Load<uint32_t>(vd + r.clock_mode));
  const std::optional<uint64_t> counter = Arch::GetHwCounter(acc, mode, page);
  if (!counter) return std::nullopt;
  const uint64_t cycles = *counter;
  if constexpr (Era::kGeneric == Generic::k53) {
    // 5.3 reads the base and cycle_last first, then tests the counter.
    uint64_t n = acc.template Load<uint64_t>(vd + r.BasetimeNsec(clk));
    const uint64_t last = acc.template Load<uint64_t>(vd + r.cycle_last);
    if (static_cast<int64_t>(cycles) < 0) return false;
    n +=
        Arch::CalcDelta(cycles, last, acc.template Load<uint32_t>(vd + r.mult));
    n = ShrX86(n, acc.template Load<uint32_t>(vd + r.shift));
    *ns = n;
  } else {
    // vdso_cycles_ok() x86 override: U64_MAX (an invalidated pv clock) or
    // any counter with the MSB set goes to the syscall.
    if (static_cast<int64_t>(cycles) < 0) return false;
    const uint64_t base = acc.template Load<uint64_t>(vd + r.BasetimeNsec(clk));
    if constexpr (Era::kGeneric == Generic::k61) {
      const uint64_t last = acc.template Load<uint64_t>(vd + r.cycle_last);
      uint64_t n =
          base + Arch::CalcDelta(cycles, last,
                                 acc.template Load<uint32_t>(vd + r.mult));
      *ns = ShrX86(n,
                   acc.template Load<uint32_t>(vd + r.shift));  // vdso_shift_ns
    } else {
      *ns = Arch::CalcNs(acc, vd, r, cycles, base);
    }
  }
  *sec = acc.template Load<uint64_t>(vd + r.BasetimeSec(clk));
  return true;
}

// do_hres(): true with *ts set; false: use the syscall; nullopt: abandoned.
template <class Era, vdso::VdsoAccess A>
std::optional<bool> DoHres(A& acc, const uint8_t* page, const uint8_t* vd,
                           ClockId clk, Timespec64* ts) {
  uint64_t sec = 0, ns = 0;
  for (;;) {
    const std::optional<uint32_t> seq = ReadBegin<Era>(acc, vd);
    if (!seq) return std::nullopt;
    const std::optional<bool> ok =
        GetTimestamp<Era>(acc, page, vd, clk, &sec, &ns);
    if (!ok || !*ok) return ok;
    if (!ReadRetry<Era>(acc, vd, *seq)) break;
    if (!acc.MayRetry()) return std::nullopt;
  }
  // Normalised outside the loop (all eras): a racy ns inside it could make
  // __iter_div_u64_rem() arbitrarily slow. The carry is a u32.
  *ts = vdso::upstream::upstream_internal::SetTimespec(sec, ns);
  return true;
}

// do_coarse(): the coarse bases hold plain ns; copy them under the seq.
template <class Era, vdso::VdsoAccess A>
std::optional<bool> DoCoarse(A& acc, const uint8_t* vd, ClockId clk,
                             Timespec64* ts) {
  constexpr const RecordOffsets& r = Era::kRecord;
  for (;;) {
    const std::optional<uint32_t> seq = ReadBegin<Era>(acc, vd);
    if (!seq) return std::nullopt;
    ts->tv_sec = static_cast<int64_t>(
        acc.template Load<uint64_t>(vd + r.BasetimeSec(clk)));
    ts->tv_nsec = static_cast<int64_t>(
        acc.template Load<uint64_t>(vd + r.BasetimeNsec(clk)));
    if (!ReadRetry<Era>(acc, vd, *seq)) return true;
    if (!acc.MayRetry()) return std::nullopt;
  }
}

// __cvdso_clock_gettime_common() (5.3: the body of __cvdso_clock_gettime()):
// `page` is the vvar page; _vdso_data[] starts at vvar+128.
template <class Era, vdso::VdsoAccess A>
std::optional<bool> ClockGettimeCommon(A& acc, const uint8_t* page,
                                       ClockId clock, Timespec64* ts) {
  // Negative ids wrap to large u32 values. Before 6.17 there are no aux
  // clocks: every id from MAX_CLOCKS on goes to the syscall.
  if (static_cast<uint32_t>(clock) >= static_cast<uint32_t>(kMaxClocks)) {
    return false;
  }
  const uint32_t msk = 1u << clock;
  const RecordOffsets& r = Era::kRecord;
  if ((msk & kVdsoHres) != 0) {
    return DoHres<Era>(acc, page, page + VdsoDataOffset(r, vdso::kCsHresCoarse),
                       clock, ts);
  }
  if ((msk & kVdsoCoarse) != 0) {
    return DoCoarse<Era>(acc, page + VdsoDataOffset(r, vdso::kCsHresCoarse),
                         clock, ts);
  }
  if ((msk & kVdsoRaw) != 0) {
    return DoHres<Era>(acc, page, page + VdsoDataOffset(r, vdso::kCsRaw), clock,
                       ts);
  }
  return false;
}

// 6.15/6.16 __cvdso_clock_gettime_common(): the 6.17 reader's do_hres() and
// do_coarse() over struct vdso_clock, without the aux clock ids.
template <vdso::VdsoAccess A>
std::optional<bool> ClockGettimeCommon615(A& acc, const uint8_t* vd,
                                          ClockId clock, Timespec64* ts) {
  namespace up = vdso::upstream::upstream_internal;
  if (static_cast<uint32_t>(clock) >= static_cast<uint32_t>(kMaxClocks)) {
    return false;
  }
  const uint32_t msk = 1u << clock;
  const uint8_t* hres = vd + vdso::ClockDataOffset(vdso::kCsHresCoarse);
  if ((msk & kVdsoHres) != 0) return up::DoHres(acc, vd, hres, clock, ts);
  if ((msk & kVdsoCoarse) != 0) return up::DoCoarse(acc, vd, hres, clock, ts);
  if ((msk & kVdsoRaw) != 0) {
    return up::DoHres(acc, vd, vd + vdso::ClockDataOffset(vdso::kCsRaw), clock,
                      ts);
  }
  return false;
}

// __cvdso_clock_gettime_data(): the vDSO's answer, or the syscall's.
template <vdso::VdsoAccess A>
std::optional<ClockResult> Finish(A& acc, ClockId clock, std::optional<bool> ok,
                                  const Timespec64& ts) {
  if (!ok) return std::nullopt;
  if (!*ok) return acc.Fallback(clock);
  return ClockResult::Ok(ts);
}

}  // namespace internal

// clock_gettime() of the era: `page` is the start of the simulated vvar
// area (vdso::VvarPage::data()). nullopt only when the access policy
// abandoned the call.
template <class Era, vdso::VdsoAccess A>
std::optional<ClockResult> ClockGettime(A& acc, const uint8_t* page,
                                        ClockId clock) {
  Timespec64 ts;
  const std::optional<bool> ok =
      internal::ClockGettimeCommon<Era>(acc, page, clock, &ts);
  return internal::Finish(acc, clock, ok, ts);
}

template <vdso::VdsoAccess A>
std::optional<ClockResult> ClockGettime615(A& acc, const uint8_t* page,
                                           ClockId clock) {
  Timespec64 ts;
  const std::optional<bool> ok =
      internal::ClockGettimeCommon615(acc, page, clock, &ts);
  return internal::Finish(acc, clock, ok, ts);
}

}  // namespace vdsolab::variants::eras

#endif  // VDSOLAB_VARIANTS_ERAS_ERA_READER_H_
