#include "timekeeper/readers.h"

#include "common/math64.h"

namespace vdsolab::timekeeper {

uint64_t TimekeepingCyclesToNs(const TkReadBase& tkr, uint64_t cycles) {
  const uint64_t mask = tkr.mask;
  const uint64_t delta = (cycles - tkr.cycle_last) & mask;
  // One test catches both negative motion and a product that overflows.
  if (delta > tkr.clock->max_cycles) {
    // The MSB of the masked delta set: the counter went backwards (another
    // CPU's counter is behind). Return the base time, not a jump forward.
    if ((delta & ~(mask >> 1)) != 0) return tkr.xtime_nsec >> tkr.shift;
    return MulU64U32AddU64Shr(delta, tkr.mult, tkr.xtime_nsec, tkr.shift);
  }
  return (delta * tkr.mult + tkr.xtime_nsec) >> tkr.shift;
}

Timespec64 KtimeGetRealTs64(const Timekeeper& tk, uint64_t cycles) {
  Timespec64 ts{static_cast<int64_t>(tk.xtime_sec), 0};
  TimespecAddNs(&ts, TimekeepingCyclesToNs(tk.tkr_mono, cycles));
  return ts;
}

Timespec64 KtimeGetTs64(const Timekeeper& tk, uint64_t cycles) {
  const uint64_t nsec = TimekeepingCyclesToNs(tk.tkr_mono, cycles);
  const Timespec64& tomono = tk.wall_to_monotonic;
  Timespec64 ts{static_cast<int64_t>(tk.xtime_sec) + tomono.tv_sec, 0};
  TimespecAddNs(&ts, nsec + static_cast<uint64_t>(tomono.tv_nsec));
  return ts;
}

Timespec64 KtimeGetRawTs64(const Timekeeper& tk, uint64_t cycles) {
  Timespec64 ts{static_cast<int64_t>(tk.raw_sec), 0};
  TimespecAddNs(&ts, TimekeepingCyclesToNs(tk.tkr_raw, cycles));
  return ts;
}

// Models ktime_get_with_offset(): ktime arithmetic wraps like the kernel's.
Ktime KtimeGetWithOffset(const Timekeeper& tk, TkOffset offs, uint64_t cycles) {
  Ktime offset = 0;
  switch (offs) {
    case TkOffset::kReal:
      offset = tk.offs_real;
      break;
    case TkOffset::kBoot:
      offset = tk.offs_boot;
      break;
    case TkOffset::kTai:
      offset = tk.offs_tai;
      break;
  }
  const uint64_t base =
      static_cast<uint64_t>(tk.tkr_mono.base) + static_cast<uint64_t>(offset);
  return static_cast<Ktime>(base + TimekeepingCyclesToNs(tk.tkr_mono, cycles));
}

Timespec64 KtimeGetBoottimeTs64(const Timekeeper& tk, uint64_t cycles) {
  return NsToTimespec64(KtimeGetWithOffset(tk, TkOffset::kBoot, cycles));
}

Timespec64 KtimeGetClocktaiTs64(const Timekeeper& tk, uint64_t cycles) {
  return NsToTimespec64(KtimeGetWithOffset(tk, TkOffset::kTai, cycles));
}

Timespec64 KtimeGetCoarseRealTs64(const Timekeeper& tk) {
  return Timespec64{static_cast<int64_t>(tk.xtime_sec),
                    static_cast<int64_t>(tk.coarse_nsec)};
}

Timespec64 KtimeGetCoarseTs64(const Timekeeper& tk) {
  const Timespec64& mono = tk.wall_to_monotonic;
  return SetNormalizedTimespec64(
      static_cast<int64_t>(tk.xtime_sec) + mono.tv_sec,
      static_cast<int64_t>(tk.coarse_nsec) + mono.tv_nsec);
}

std::optional<Ktime> KtimeGetAux(const Timekeeper& tk, uint64_t cycles) {
  if (!tk.clock_valid) return std::nullopt;
  const uint64_t base = static_cast<uint64_t>(tk.tkr_mono.base) +
                        static_cast<uint64_t>(tk.offs_aux);
  return static_cast<Ktime>(base + TimekeepingCyclesToNs(tk.tkr_mono, cycles));
}

Ktime KtimeGetUpdateOffsetsNow(const Timekeeper& tk, uint64_t cycles,
                               HrtimerOffsets* offsets, bool leap_adjust) {
  const Ktime base =
      static_cast<Ktime>(static_cast<uint64_t>(tk.tkr_mono.base) +
                         TimekeepingCyclesToNs(tk.tkr_mono, cycles));
  if (offsets->cwsseq != tk.clock_was_set_seq) {
    offsets->cwsseq = tk.clock_was_set_seq;
    offsets->offs_real = tk.offs_real;
    offsets->offs_boot = tk.offs_boot;
    offsets->offs_tai = tk.offs_tai;
  }
  // Handle leap second insertion adjustments.
  if (leap_adjust && base >= tk.next_leap_ktime) {
    offsets->offs_real = tk.offs_real - int64_t{1000000000};
  }
  return base;
}

Timespec64 TkXtimePre615(const Timekeeper& tk) {
  return Timespec64{
      static_cast<int64_t>(tk.xtime_sec),
      static_cast<int64_t>(tk.tkr_mono.xtime_nsec >> tk.tkr_mono.shift)};
}

Timespec64 KtimeGetCoarseTs64Pre615(const Timekeeper& tk) {
  const Timespec64 now = TkXtimePre615(tk);
  const Timespec64& mono = tk.wall_to_monotonic;
  return SetNormalizedTimespec64(now.tv_sec + mono.tv_sec,
                                 now.tv_nsec + mono.tv_nsec);
}

}  // namespace vdsolab::timekeeper
