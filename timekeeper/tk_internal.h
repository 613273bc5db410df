// File: timekeeper/tk_internal.h
//
// The small static helpers of kernel/time/timekeeping.c that the model's
// timekeeping*.cc and aux_clocks.cc share (tk_set_xtime(), tk_xtime_add(),
// tk_set_wall_to_mono(), ...), and the update actions. Internal to
// //timekeeper:timekeeping.

#ifndef VDSOLAB_TIMEKEEPER_TK_INTERNAL_H_
#define VDSOLAB_TIMEKEEPER_TK_INTERNAL_H_

#include <cstdint>

#include "common/math64.h"
#include "common/timespec.h"
#include "timekeeper/timekeeper.h"

namespace vdsolab::timekeeper::tk_internal {

inline constexpr unsigned kTkClearNtp = 1u << 0;     // TK_CLEAR_NTP
inline constexpr unsigned kTkClockWasSet = 1u << 1;  // TK_CLOCK_WAS_SET
inline constexpr unsigned kTkUpdateAll = kTkClearNtp | kTkClockWasSet;

// TIME_UPTIME_SEC_MAX and TIME_SETTOD_SEC_MAX: common/timespec.h.
using ::vdsolab::kTimeSettodSecMax;
using ::vdsolab::kTimeUptimeSecMax;

inline constexpr int64_t kNsecPerSecS = static_cast<int64_t>(kNsecPerSec);

// Not in the kernel: a bound on the model's loops, which end in a few
// steps there (seconds carried, chunks accumulated: at most one per second
// or per max_cycles of a pause). One that runs past it is a defect that
// would hang the kernel; the guard stops it and names it in `*stalled`
// (Timekeeping::stalled_loop()), and once that is set every guarded loop
// stops at once.
inline constexpr uint64_t kMaxLoopIterations = uint64_t{1} << 24;
class LoopGuard {
 public:
  LoopGuard(const char* where, const char** stalled)
      : where_(where), stalled_(stalled) {}
  bool Next() {
    if (*stalled_ != nullptr) return false;
    if (++n_ <= kMaxLoopIterations) return true;
    *stalled_ = where_;
    return false;
  }

 private:
  const char* where_;
  const char** stalled_;
  uint64_t n_ = 0;
};

// timespec64_valid().
inline bool Timespec64Valid(const Timespec64& ts) {
  return ts.tv_sec >= 0 && ts.tv_nsec >= 0 && ts.tv_nsec < kNsecPerSecS;
}

// timespec64_valid_settod(): no time so late that uptime could overflow
// ktime_t.
inline bool Timespec64ValidSettod(const Timespec64& ts) {
  return Timespec64Valid(ts) && static_cast<uint64_t>(ts.tv_sec) <
                                    static_cast<uint64_t>(kTimeSettodSecMax);
}

// timespec64_valid_strict(): representable as ktime_t.
inline bool Timespec64ValidStrict(const Timespec64& ts) {
  return Timespec64Valid(ts) &&
         static_cast<uint64_t>(ts.tv_sec) < static_cast<uint64_t>(kKtimeSecMax);
}

// timespec64_add() as the kernel computes it: the seconds add wraps
// (-fno-strict-overflow) instead of being undefined; then normalised.
inline Timespec64 Timespec64AddWrap(const Timespec64& a, const Timespec64& b) {
  const int64_t sec = static_cast<int64_t>(static_cast<uint64_t>(a.tv_sec) +
                                           static_cast<uint64_t>(b.tv_sec));
  return SetNormalizedTimespec64(sec, a.tv_nsec + b.tv_nsec);
}

// tk_normalize_xtime(): carry whole seconds out of both xtime_nsec fields.
inline void TkNormalizeXtime(Timekeeper& tk) {
  while (tk.tkr_mono.xtime_nsec >= (kNsecPerSec << tk.tkr_mono.shift)) {
    tk.tkr_mono.xtime_nsec -= kNsecPerSec << tk.tkr_mono.shift;
    ++tk.xtime_sec;
  }
  while (tk.tkr_raw.xtime_nsec >= (kNsecPerSec << tk.tkr_raw.shift)) {
    tk.tkr_raw.xtime_nsec -= kNsecPerSec << tk.tkr_raw.shift;
    ++tk.raw_sec;
  }
}

// tk_update_coarse_nsecs() (6.15+): the coarse clocks' ns moves only when
// time is accumulated or set, never by the mult adjustment.
inline void TkUpdateCoarseNsecs(Timekeeper& tk) {
  tk.coarse_nsec =
      static_cast<uint32_t>(tk.tkr_mono.xtime_nsec >> tk.tkr_mono.shift);
}

// tk_xtime(): REALTIME at cycle_last.
inline Timespec64 TkXtime(const Timekeeper& tk) {
  return Timespec64{
      static_cast<int64_t>(tk.xtime_sec),
      static_cast<int64_t>(tk.tkr_mono.xtime_nsec >> tk.tkr_mono.shift)};
}

// tk_set_xtime(): the sub-ns part of xtime_nsec is discarded.
inline void TkSetXtime(Timekeeper& tk, const Timespec64& ts) {
  tk.xtime_sec = static_cast<uint64_t>(ts.tv_sec);
  tk.tkr_mono.xtime_nsec = static_cast<uint64_t>(ts.tv_nsec)
                           << tk.tkr_mono.shift;
  TkUpdateCoarseNsecs(tk);
}

// tk_xtime_add(): a normalised delta (tv_nsec >= 0), seconds signed.
inline void TkXtimeAdd(Timekeeper& tk, const Timespec64& ts) {
  tk.xtime_sec += static_cast<uint64_t>(ts.tv_sec);
  tk.tkr_mono.xtime_nsec += static_cast<uint64_t>(ts.tv_nsec)
                            << tk.tkr_mono.shift;
  TkNormalizeXtime(tk);
  TkUpdateCoarseNsecs(tk);
}

// tk_set_wall_to_mono(): keeps offs_real = -wall_to_monotonic and
// offs_tai = offs_real + tai_offset.
inline void TkSetWallToMono(Timekeeper& tk, const Timespec64& wtm) {
  tk.wall_to_monotonic = wtm;
  const Timespec64 neg = SetNormalizedTimespec64(-wtm.tv_sec, -wtm.tv_nsec);
  tk.offs_real = Timespec64ToKtime(neg);
  tk.offs_tai = tk.offs_real + int64_t{tk.tai_offset} * kNsecPerSecS;
}

// __timekeeping_set_tai_offset().
inline void TkSetTaiOffset(Timekeeper& tk, int32_t tai_offset) {
  tk.tai_offset = tai_offset;
  tk.offs_tai = tk.offs_real + int64_t{tai_offset} * kNsecPerSecS;
}

// tk_update_sleep_time(): BOOTTIME gains the sleep; the timespec copy
// spares the vDSO update a division.
inline void TkUpdateSleepTime(Timekeeper& tk, Ktime delta) {
  tk.offs_boot += delta;
  tk.monotonic_to_boot = NsToTimespec64(tk.offs_boot);
}

// tk_update_aux_offs() (6.17+, with the Sep 2025 timespec copy).
inline void TkUpdateAuxOffs(Timekeeper& tk, Ktime offs) {
  tk.offs_aux = offs;
  tk.monotonic_to_aux = NsToTimespec64(offs);
}

// tk_update_ktime_data(): the ktime_t bases of the ktime_get*() readers.
inline void TkUpdateKtimeData(Timekeeper& tk) {
  uint64_t seconds = static_cast<uint64_t>(static_cast<int64_t>(tk.xtime_sec) +
                                           tk.wall_to_monotonic.tv_sec);
  uint32_t nsec = static_cast<uint32_t>(tk.wall_to_monotonic.tv_nsec);
  tk.tkr_mono.base = static_cast<Ktime>(seconds * kNsecPerSec + nsec);
  // xtime's and wtm's ns parts can sum to a whole second.
  nsec += static_cast<uint32_t>(tk.tkr_mono.xtime_nsec >> tk.tkr_mono.shift);
  if (nsec >= kNsecPerSec) ++seconds;
  tk.ktime_sec = seconds;
  tk.tkr_raw.base = static_cast<Ktime>(tk.raw_sec * kNsecPerSec);
}

}  // namespace vdsolab::timekeeper::tk_internal

#endif  // VDSOLAB_TIMEKEEPER_TK_INTERNAL_H_
