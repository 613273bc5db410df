#include "sim/aux_oracle.h"

#include "common/math64.h"
#include "timekeeper/readers.h"

namespace vdsolab::sim {

ClockResult AuxSyscall(const timekeeper::Timekeeper& aux_tk, uint64_t cycles) {
  const std::optional<Ktime> t = timekeeper::KtimeGetAux(aux_tk, cycles);
  if (!t) return ClockResult::Error(-kEnodev);
  return ClockResult::Ok(NsToTimespec64(*t));
}

ClockResult AuxVdso(const timekeeper::Timekeeper& tk, uint64_t counter) {
  if (!tk.clock_valid || tk.tkr_mono.clock == nullptr ||
      tk.tkr_mono.clock->vdso_clock_mode == timekeeper::kVdsoClockmodeNone) {
    return AuxSyscall(tk, counter);  // Mode NONE: the syscall answers.
  }
  // The published base (vdso_time_update_aux()).
  const uint32_t shift = tk.tkr_mono.shift;
  uint64_t sec =
      tk.xtime_sec + static_cast<uint64_t>(tk.monotonic_to_aux.tv_sec);
  uint64_t rem = 0;
  sec += IterDivU64Rem((tk.tkr_mono.xtime_nsec >> shift) +
                           static_cast<uint64_t>(tk.monotonic_to_aux.tv_nsec),
                       static_cast<uint32_t>(kNsecPerSec), &rem);
  const uint64_t base = rem << shift;
  // The x86 vdso_calc_ns() (6.10+) on the TSC & S64_MAX.
  const uint64_t delta = (counter & kS64Max) - tk.tkr_mono.cycle_last;
  uint64_t ns;
  if (delta > tk.tkr_mono.clock->max_cycles) {
    ns = (delta & (1ull << 62)) != 0
             ? ShrX86(base, shift)
             : MulU64U32AddU64Shr(delta & kS64Max, tk.tkr_mono.mult, base,
                                  shift);
  } else {
    ns = ShrX86(delta * tk.tkr_mono.mult + base, shift);
  }
  // vdso_set_timespec().
  sec += IterDivU64Rem(ns, static_cast<uint32_t>(kNsecPerSec), &rem);
  return ClockResult::Ok(
      Timespec64{static_cast<int64_t>(sec), static_cast<int64_t>(rem)});
}

}  // namespace vdsolab::sim
