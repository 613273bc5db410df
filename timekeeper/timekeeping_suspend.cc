// Suspend, resume and clocksource changes (kernel/time/timekeeping.c and
// the suspend timing of kernel/time/clocksource.c, 6.15-6.18).

#include "absl/strings/str_format.h"
#include "common/math64.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/tk_internal.h"

namespace vdsolab::timekeeper {

using tk_internal::kTkClockWasSet;
using tk_internal::kTkUpdateAll;

namespace {

// cycles_to_nsec_safe(): the sleep measured on the suspend clocksource.
uint64_t CyclesToNsecSafe(const Clocksource& cs, uint64_t start, uint64_t end) {
  const uint64_t delta =
      ClocksourceDelta(end, start, cs.mask, cs.max_raw_delta);
  if (delta < cs.max_cycles) return (delta * cs.mult) >> cs.shift;
  return MulU64U32AddU64Shr(delta, cs.mult, 0, cs.shift);  // mul_u64_u32_shr
}

}  // namespace

// Models timekeeping_suspend(). The model's suspend clocksource is the
// current clocksource when it keeps running in suspend
// (clocksource_start_suspend_timing() with cs == suspend_clocksource).
void Timekeeping::Suspend(uint64_t now, const Timespec64& persistent) {
  suspend_time_ = persistent;
  if (persistent.tv_sec != 0 || persistent.tv_nsec != 0) {
    persistent_clock_exists_ = true;
  }
  Timekeeper& tks = core_.shadow_timekeeper;
  // Account the time since the last tick before cycle_last stops meaning
  // anything (the pre-2.6.23 defect skips this).
  if (!profile_.defects.suspend_without_forward) ForwardNow(tks, now);
  suspended_ = true;
  suspend_start_.reset();
  if (tks.tkr_mono.clock->suspend_nonstop) {
    suspend_start_ = tks.tkr_mono.cycle_last;
  }
  if (persistent_clock_exists_) {
    // Keep the system and persistent clocks' difference steady across
    // suspends, which each could add up to a second of rounding error.
    const Timespec64 delta =
        Timespec64Sub(tk_internal::TkXtime(tks), suspend_time_);
    const Timespec64 delta_delta = Timespec64Sub(delta, old_delta_);
    if (delta_delta.tv_sec >= 2 || delta_delta.tv_sec <= -2) {
      old_delta_ = delta;  // The clock was set: start over.
    } else {
      suspend_time_ = Timespec64Add(suspend_time_, delta_delta);
    }
  }
  UpdateFromShadow(core_, 0);
}

// Models __timekeeping_inject_sleeptime(): REALTIME and BOOTTIME advance
// by the sleep, MONOTONIC and RAW do not.
void Timekeeping::InjectSleeptime(Timekeeper& tk, const Timespec64& delta) {
  if (!tk_internal::Timespec64ValidStrict(delta)) {
    Log("__timekeeping_inject_sleeptime: Invalid sleep delta value!");
    return;
  }
  tk_internal::TkXtimeAdd(tk, delta);
  tk_internal::TkSetWallToMono(tk, Timespec64Sub(tk.wall_to_monotonic, delta));
  tk_internal::TkUpdateSleepTime(tk, Timespec64ToKtime(delta));
}

// Models timekeeping_resume().
Timespec64 Timekeeping::Resume(const ResumeInput& in) {
  Timekeeper& tks = core_.shadow_timekeeper;
  // The preference: the nonstop clocksource, then the persistent clock;
  // otherwise the RTC driver injects later (InjectSleeptime64()).
  uint64_t nsec = 0;
  if (suspend_start_ && in.now > *suspend_start_) {  // Unmasked, as there.
    nsec = CyclesToNsecSafe(*tks.tkr_mono.clock, *suspend_start_, in.now);
  }
  suspend_start_.reset();
  Timespec64 ts_delta;
  bool inject = false;
  if (nsec > 0) {
    ts_delta = NsToTimespec64(static_cast<int64_t>(nsec));
    inject = true;
  } else if (Timespec64Compare(in.persistent, suspend_time_) > 0) {
    ts_delta = Timespec64Sub(in.persistent, suspend_time_);
    inject = true;
  }
  if (inject) InjectSleeptime(tks, ts_delta);

  // Re-base: the cycles the counter ran in suspend are not time the
  // clocks lived through (the sleep went in as an offset).
  tks.tkr_mono.cycle_last = in.now;
  tks.tkr_raw.cycle_last = in.now;
  tks.ntp_error = 0;
  suspended_ = false;
  UpdateFromShadow(core_, kTkClockWasSet);
  return inject ? ts_delta : Timespec64{};
}

// Models timekeeping_inject_sleeptime64() (rtc_resume()'s path).
void Timekeeping::InjectSleeptime64(const Timespec64& delta, uint64_t now) {
  Timekeeper& tks = core_.shadow_timekeeper;
  ForwardNow(tks, now);
  InjectSleeptime(tks, delta);
  UpdateFromShadow(core_, kTkUpdateAll);
}

// Models change_clocksource() with tk_aux_update_clocksource().
void Timekeeping::ChangeClocksource(const Clocksource& next, uint64_t now_old,
                                    uint64_t now_new) {
  const Clocksource* clock = Register(next);
  Timekeeper& tks = core_.shadow_timekeeper;
  ForwardNow(tks, now_old);
  SetupInternals(tks, clock, now_new);
  UpdateFromShadow(core_, kTkUpdateAll);
  Log(absl::StrFormat("clocksource: Switched to clocksource %s", clock->name));
  // Every enabled aux clock follows the core's (raw) clocksource.
  for (std::optional<TkData>& aux : aux_) {
    if (!aux || !aux->shadow_timekeeper.clock_valid) continue;
    ForwardNow(aux->shadow_timekeeper, now_old);
    SetupInternals(aux->shadow_timekeeper, clock, now_new);
    UpdateFromShadow(*aux, kTkUpdateAll);
  }
}

}  // namespace vdsolab::timekeeper
