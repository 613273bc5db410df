// Setting the time (kernel/time/timekeeping.c, 6.15-6.18): settimeofday,
// ADJ_SETOFFSET's offset injection, the TAI offset and do_adjtimex().

#include "common/clock_result.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/tk_internal.h"

namespace vdsolab::timekeeper {

using tk_internal::kTkClockWasSet;
using tk_internal::kTkUpdateAll;

// The error path of do_settimeofday64() and timekeeping_inject_offset()
// after the timekeeper was forwarded: 6.13+ drops the shadow's changes;
// before, the kernel published them (with TK_CLEAR_NTP, TK_CLOCK_WAS_SET)
// since the time had been forwarded anyway.
void Timekeeping::SetError(TkData& tkd) {
  if (profile_.set_error_restores_shadow) {
    RestoreShadow(tkd);
  } else {
    UpdateFromShadow(tkd, kTkUpdateAll);
  }
}

// Models do_settimeofday64().
int Timekeeping::SetTimeOfDay(const Timespec64& ts, uint64_t now) {
  if (!tk_internal::Timespec64ValidSettod(ts)) return -kEinval;
  Timekeeper& tks = core_.shadow_timekeeper;
  ForwardNow(tks, now);
  const Timespec64 ts_delta = Timespec64Sub(ts, tk_internal::TkXtime(tks));
  // MONOTONIC = REALTIME + wall_to_monotonic must not go negative.
  if (Timespec64Compare(tks.wall_to_monotonic, ts_delta) > 0) {
    SetError(core_);
    return -kEinval;
  }
  tk_internal::TkSetWallToMono(tks,
                               Timespec64Sub(tks.wall_to_monotonic, ts_delta));
  tk_internal::TkSetXtime(tks, ts);
  UpdateFromShadow(core_, kTkUpdateAll);
  return 0;
}

// Models __timekeeping_inject_offset() (6.17+: the core timekeeper steps
// REALTIME; an aux clock moves offs_aux).
int Timekeeping::InjectOffsetTkd(TkData& tkd, const Timespec64& offset,
                                 uint64_t now) {
  if (offset.tv_nsec < 0 || offset.tv_nsec >= tk_internal::kNsecPerSecS) {
    return -kEinval;
  }
  Timekeeper& tks = tkd.shadow_timekeeper;
  ForwardNow(tks, now);
  if (tks.id == kTimekeeperCore) {
    // The new REALTIME must be settable, and MONOTONIC must not go
    // negative.
    const Timespec64 tmp =
        tk_internal::Timespec64AddWrap(tk_internal::TkXtime(tks), offset);
    if (Timespec64Compare(tks.wall_to_monotonic, offset) > 0 ||
        !tk_internal::Timespec64ValidSettod(tmp)) {
      SetError(tkd);
      return -kEinval;
    }
    tk_internal::TkXtimeAdd(tks, offset);
    tk_internal::TkSetWallToMono(tks,
                                 Timespec64Sub(tks.wall_to_monotonic, offset));
  } else {
    // The aux clock's time now, without its offset; the new offset must
    // not make it negative.
    const Ktime base = tks.tkr_mono.base;  // As of the last update.
    const Ktime current = static_cast<Ktime>(
        static_cast<uint64_t>(base) +
        TimekeepingCyclesToNs(tks.tkr_mono, tks.tkr_mono.cycle_last));
    const Ktime offs =
        static_cast<Ktime>(static_cast<uint64_t>(tks.offs_aux) +
                           static_cast<uint64_t>(Timespec64ToKtime(offset)));
    if (static_cast<Ktime>(static_cast<uint64_t>(current) +
                           static_cast<uint64_t>(offs)) < 0) {
      RestoreShadow(tkd);
      return -kEinval;
    }
    tk_internal::TkUpdateAuxOffs(tks, offs);
  }
  UpdateFromShadow(tkd, kTkUpdateAll);
  return 0;
}

// Models timekeeping_inject_offset().
int Timekeeping::InjectOffset(const Timespec64& offset, uint64_t now) {
  return InjectOffsetTkd(core_, offset, now);
}

// Models __do_adjtimex() (6.17+: one tk_data, core or aux): validate, read
// the time, inject ADJ_SETOFFSET, the NTP modes, a TAI change, then
// TK_ADV_FREQ.
int Timekeeping::DoAdjtimex(TkData& tkd, Timex* txc, uint64_t now) {
  const bool aux_clock = tkd.timekeeper.id != kTimekeeperCore;
  if (const int ret = ValidateTimex(*txc, aux_clock); ret != 0) return ret;
  // The time the read-back reports, before anything below changes it.
  Timespec64 ts;
  if (!aux_clock) {
    ts = KtimeGetRealTs64(tkd.timekeeper, now);
  } else if (const std::optional<Ktime> aux =
                 KtimeGetAux(tkd.timekeeper, now)) {
    ts = NsToTimespec64(*aux);
  }
  Timekeeper& tks = tkd.shadow_timekeeper;
  if (!tks.clock_valid) return -kEnodev;

  if ((txc->modes & kAdjSetoffset) != 0) {
    Timespec64 delta{txc->time.tv_sec, txc->time.tv_usec};
    if ((txc->modes & kAdjNano) == 0) delta.tv_nsec *= 1000;
    if (const int ret = InjectOffsetTkd(tkd, delta, now); ret != 0) {
      return ret;
    }
    // do_adjtimex() before 6.17 reads the time after the injection.
    if (profile_.adjtimex_time_after_setoffset && !aux_clock) {
      ts = KtimeGetRealTs64(tkd.timekeeper, now);
    }
  }

  const int32_t orig_tai = tks.tai_offset;
  int32_t tai = orig_tai;
  // ktime_get_ntp_seconds(): the published timekeeper's seconds.
  const int ret = tkd.ntp.DoAdjtimex(
      txc, ts, &tai, static_cast<int64_t>(tkd.timekeeper.xtime_sec));
  if (tai != orig_tai) {
    tk_internal::TkSetTaiOffset(tks, tai);
    UpdateFromShadow(tkd, kTkClockWasSet);
  } else {
    UpdateLeapStateAll(tkd);
  }
  // Update the multiplier immediately if frequency was set directly.
  if ((txc->modes & (kAdjFrequency | kAdjTick)) != 0) {
    AdvanceTkd(tkd, AdvanceMode::kFreq, now);
  }
  return ret;
}

// Models do_adjtimex().
int Timekeeping::Adjtimex(Timex* txc, uint64_t now) {
  return DoAdjtimex(core_, txc, now);
}

absl::StatusOr<int> Timekeeping::Adjtimex(const Timex& txc, uint64_t now) {
  Timex copy = txc;
  return Adjtimex(&copy, now);
}

}  // namespace vdsolab::timekeeper
