#include "variants/era_oracle.h"

#include "common/math64.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/readers.h"

namespace vdsolab::variants {
namespace {

bool IsHres(ClockId c) {
  return c >= 0 && c < kMaxClocks && ((1u << c) & (kVdsoHres | kVdsoRaw)) != 0;
}

}  // namespace

EraOracle::EraOracle(const Variant& variant, const PublishContext& ctx,
                     CounterFacts counter)
    : variant_(variant),
      ctx_(ctx),
      counter_(counter),
      may_wrap_(!variant.semantics.overflow_protected && counter.tsc &&
                counter.wide),
      clamps_to_last_(variant.semantics.counter ==
                      CounterSemantics::kClampToLast) {
  for (const ClockDef& c : variant.own_clocks) {
    if (c.id >= 0 && c.id < 64) own_ids_ |= uint64_t{1} << c.id;
    if (c.same_as >= 0) has_aliases_ = true;
  }
}

ClockResult EraOracle::Expected(const timekeeper::Timekeeper& tk, ClockId clock,
                                uint64_t counter) const {
  timekeeper::SyscallContext sc;
  sc.cycles = counter;
  const ClockDef* own = Own(clock);
  if (own != nullptr && own->same_as >= 0) {
    // Judged as the kernel clock it stands for, by the era's rules.
    clock = own->same_as;
  } else if (own != nullptr && own->kind == ClockKind::kVariantSyscall) {
    return VariantSyscall(variant_, ctx_, tk, clock, sc);
  }
  const Semantics& era = variant_.semantics;
  if (!era.coarse_from_coarse_nsec && clock == kClockRealtimeCoarse) {
    return ClockResult::Ok(timekeeper::TkXtimePre615(tk));
  }
  if (!era.coarse_from_coarse_nsec && clock == kClockMonotonicCoarse) {
    return ClockResult::Ok(timekeeper::KtimeGetCoarseTs64Pre615(tk));
  }
  if (counter_.tsc && counter_.wide && IsHres(clock)) {
    const uint64_t last = tk.tkr_mono.cycle_last;
    if (era.counter == CounterSemantics::kMasked63) {
      // The x86 vDSO (6.5+) converts with 63-bit counter arithmetic and
      // takes bit 62 of the delta as its sign (docs/readers.md); with a
      // 64-bit counter its answer is the syscall's at the counter it
      // effectively used.
      const uint64_t e = (counter - last) & kS64Max;
      sc.cycles = (e & (1ull << 62)) != 0 ? last : last + e;
    } else if (counter < last) {
      // Before 6.5 a counter behind cycle_last is clamped to it.
      sc.cycles = last;
    }
  }
  return timekeeper::SysClockGettime(tk, clock, sc);
}

std::optional<ClockResult> EraOracle::EraValue(const timekeeper::Timekeeper& tk,
                                               ClockId clock,
                                               uint64_t counter) const {
  if (has_aliases_) clock = JudgedAs(Own(clock), clock);
  const Semantics& era = variant_.semantics;
  if (era.overflow_protected || !IsHres(clock) || !counter_.tsc ||
      !counter_.wide) {
    return std::nullopt;
  }
  const timekeeper::TkReadBase& tkr =
      clock == kClockMonotonicRaw ? tk.tkr_raw : tk.tkr_mono;
  // The delta the era's reader multiplies (after its counter rules).
  uint64_t delta = 0;
  if (era.counter == CounterSemantics::kMasked63) {
    delta = (counter - tkr.cycle_last) & kS64Max;
    if ((delta & (1ull << 62)) != 0) return std::nullopt;  // Clamped.
  } else {
    if (counter <= tkr.cycle_last || (counter >> 63) != 0) return std::nullopt;
    delta = counter - tkr.cycle_last;
  }
  const unsigned __int128 product =
      static_cast<unsigned __int128>(delta) * tkr.mult;
  if ((product >> 64) == 0) return std::nullopt;  // No wrap: the syscall's.
  // The page's base for this clock (shifted ns), as every era's writer
  // publishes it.
  const uint32_t shift = tkr.shift;
  uint64_t sec = tk.xtime_sec;
  uint64_t nsec = tk.tkr_mono.xtime_nsec;
  const auto add = [&](const Timespec64& off) {
    sec += static_cast<uint64_t>(off.tv_sec);
    nsec += static_cast<uint64_t>(off.tv_nsec) << shift;
    NormaliseShiftedNsec(&sec, &nsec, shift);
  };
  switch (clock) {
    case kClockRealtime:
      break;
    case kClockMonotonic:
      add(tk.wall_to_monotonic);
      break;
    case kClockBoottime:
      add(tk.wall_to_monotonic);
      add(tk.monotonic_to_boot);
      break;
    case kClockTai:
      sec += static_cast<uint64_t>(static_cast<int64_t>(tk.tai_offset));
      break;
    case kClockMonotonicRaw:
      sec = tk.raw_sec;
      nsec = tk.tkr_raw.xtime_nsec;
      break;
    default:
      return std::nullopt;
  }
  // (base + delta * mult) mod 2^64, >> shift: the era's arithmetic.
  const uint64_t ns = (nsec + delta * tkr.mult) >> shift;
  uint64_t rem = 0;
  const uint32_t carry =
      IterDivU64Rem(ns, static_cast<uint32_t>(kNsecPerSec), &rem);
  return ClockResult::Ok(
      Timespec64{static_cast<int64_t>(sec + carry), static_cast<int64_t>(rem)});
}

const char* EraOracle::ExplainOddAnswer(const timekeeper::Timekeeper& tk,
                                        ClockId clock, uint64_t counter,
                                        const ClockResult& got) const {
  // ExplainAnswer() has mapped an alias to its kernel clock.
  if (!IsHres(clock)) return nullptr;
  if (const ClockDef* own = Own(clock);
      own != nullptr && own->kind != ClockKind::kKernel) {
    return nullptr;
  }
  const std::optional<ClockResult> era = EraValue(tk, clock, counter);
  if (era && *era == got) return kOverflowWhy;
  const timekeeper::TkReadBase& tkr =
      clock == kClockMonotonicRaw ? tk.tkr_raw : tk.tkr_mono;
  // A counter numerically behind cycle_last but less than 2^62 ahead of it
  // modulo 2^64 wrapped past 2^64: the era froze at the base.
  if (variant_.semantics.counter == CounterSemantics::kClampToLast &&
      counter < tkr.cycle_last && counter - tkr.cycle_last < (1ull << 62) &&
      Expected(tk, clock, counter) == got) {
    return kWrapFreezeWhy;
  }
  return nullptr;
}

const char* EraOracle::ExplainCoarseStepBack(__int128 back_ns,
                                             bool after_ntp_change) const {
  // By xtime_nsec's adjustment: at most the NTP correction over one tick.
  constexpr __int128 kCoarseBackMaxNs = 1000000;
  if (!variant_.semantics.coarse_from_coarse_nsec && after_ntp_change &&
      back_ns > 0 && back_ns <= kCoarseBackMaxNs) {
    return kCoarseBackWhy;
  }
  return nullptr;
}

}  // namespace vdsolab::variants
