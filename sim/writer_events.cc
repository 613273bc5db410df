// What each scenario event does to the timekeeper model (sim/writer.h):
// the syscall it stands for, at the timekeeping CPU's counter, with its
// return value and read-back recorded and checked against the scenario's
// expectations.

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/writer.h"
#include "timekeeper/readers.h"
#include "timekeeper/timex_names.h"

namespace vdsolab::sim {

void Writer::RecordOutcome(const EventSpec& e, uint64_t start, std::string what,
                           int64_t ret, const timekeeper::Timex* readback) {
  EventOutcome o;
  o.event = event_index_[current_event_];
  o.at_ns = start;
  o.what = std::move(what);
  o.ret = ret;
  if (readback != nullptr) o.readback = *readback;
  if (e.expect_ret != kNoExpectedRet && e.expect_ret != ret) {
    o.mismatches.push_back(
        absl::StrFormat("returned %d, expected %d", ret, e.expect_ret));
  }
  absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> want =
      ParseReadback(e.expect_readback);  // Validated with the scenario.
  if (want.ok()) {
    for (const auto& [field, value] : *want) {
      const std::optional<int64_t> got =
          readback != nullptr ? timekeeper::TimexField(*readback, field)
                              : std::nullopt;
      if (!got) {
        o.mismatches.push_back(
            absl::StrFormat("no read-back of %s to compare", field));
      } else if (*got != value) {
        o.mismatches.push_back(absl::StrFormat("read back %s = %d, expected %d",
                                               field, *got, value));
      }
    }
  }
  outcomes_.push_back(std::move(o));
}

std::optional<__int128> Writer::SteppedClockNs(int aux,
                                               uint64_t counter) const {
  // Only a read the forward before the step reproduces exactly: past
  // max_cycles (a long pause) the reads before and after the forward
  // legitimately differ.
  const timekeeper::TkReadBase& tkr =
      aux < 0 ? tk_->timekeeper().tkr_mono : tk_->aux_timekeeper(aux).tkr_mono;
  // A narrow counter is left out: its wraps alias a long gap as a short one.
  if (tkr.clock == nullptr || tkr.mask != ~0ull ||
      ((counter - tkr.cycle_last) & tkr.mask) > tkr.clock->max_cycles) {
    return std::nullopt;
  }
  if (aux < 0) {
    const Timespec64 t = tk_->GetRealTs64(counter);
    return static_cast<__int128>(t.tv_sec) * kNsecPerSec + t.tv_nsec;
  }
  if (!tk_->AuxEnabled(aux)) return std::nullopt;
  const std::optional<Ktime> t =
      timekeeper::KtimeGetAux(tk_->aux_timekeeper(aux), counter);
  if (!t) return std::nullopt;
  return *t;
}

// ADJ_SETOFFSET accepted: the clock it steps (REALTIME or the aux clock)
// reads, at the same counter, exactly the offset more than before the
// call: an expectation of every accepted step, independent of how the
// timekeeper stores it (wall_to_monotonic and xtime, or offs_aux).
void Writer::CheckStep(uint32_t modes, const Timespec64& offset, int aux,
                       const std::optional<__int128>& before, int ret,
                       uint64_t counter) {
  if ((modes & timekeeper::kAdjSetoffset) == 0 || ret < 0 || !before) return;
  const std::optional<__int128> after = SteppedClockNs(aux, counter);
  if (!after) return;
  const int64_t unit = (modes & timekeeper::kAdjNano) != 0 ? 1 : 1000;
  const __int128 want = static_cast<__int128>(offset.tv_sec) * kNsecPerSec +
                        static_cast<__int128>(offset.tv_nsec) * unit;
  if (*after - *before != want) {
    outcomes_.back().mismatches.push_back(absl::StrFormat(
        "the clock moved by %d ns at the same counter, not the offset's %d ns",
        static_cast<int64_t>(*after - *before), static_cast<int64_t>(want)));
  }
}

void Writer::Tick(uint64_t counter) {
  tk_->Advance(timekeeper::AdvanceMode::kTick, counter);
  if (tree_ != nullptr) tree_->Tick(counter);
}

int Writer::Adjtimex(timekeeper::Timex* txc, uint64_t counter) {
  const timekeeper::Timex request = *txc;
  const int ret = tk_->Adjtimex(txc, counter);
  if (tree_ != nullptr) {
    NoteTreeDifference(tree_->Adjtimex(request, counter, ret, *txc));
  }
  return ret;
}

int Writer::SetTimeOfDay(const Timespec64& ts, uint64_t counter) {
  const int ret = tk_->SetTimeOfDay(ts, counter);
  if (tree_ != nullptr) {
    NoteTreeDifference(tree_->SetTimeOfDay(ts, counter, ret));
  }
  return ret;
}

void Writer::Suspend(uint64_t counter, const Timespec64& rtc) {
  tk_->Suspend(counter, rtc);
  if (tree_ != nullptr) tree_->Suspend(counter, rtc);
}

Timespec64 Writer::Resume(uint64_t counter, const Timespec64& rtc) {
  const Timespec64 slept = tk_->Resume({counter, rtc});
  if (tree_ != nullptr) tree_->Resume(counter, rtc);
  return slept;
}

void Writer::InjectSleeptime(const Timespec64& delta, uint64_t counter) {
  tk_->InjectSleeptime64(delta, counter);
  if (tree_ != nullptr) tree_->InjectSleeptime(delta, counter);
}

void Writer::RunEvent(const EventSpec& e, uint64_t start, uint64_t counter) {
  const int tk_cpu = scenario_.kernel.timekeeping_cpu;
  switch (e.kind) {
    case EventKind::kAdjtimexFrequency:
    case EventKind::kAdjtimexTick: {
      timekeeper::Timex txc;
      if (e.kind == EventKind::kAdjtimexFrequency) {
        txc.modes = timekeeper::kAdjFrequency;
        txc.freq = e.freq_scaled_ppm;
      } else {
        txc.modes = timekeeper::kAdjTick;
        txc.tick = e.tick_usec;
      }
      (void)Adjtimex(&txc, counter);  // Validated with the scenario.
      return;
    }
    case EventKind::kSetTime: {
      const int ret = SetTimeOfDay(e.realtime, counter);
      if (e.expect_ret != kNoExpectedRet || ret != 0) {
        RecordOutcome(e, start,
                      absl::StrFormat("clock_settime(REALTIME, %s)",
                                      FormatTimespec(e.realtime)),
                      ret, nullptr);
      }
      return;
    }
    case EventKind::kAdjtimex: {
      const int aux = e.clock == kClockRealtime ? -1 : e.clock - kClockAux;
      const std::optional<__int128> before = SteppedClockNs(aux, counter);
      timekeeper::Timex txc;
      txc.modes = e.modes;
      txc.offset = e.offset;
      txc.freq = e.freq;
      txc.maxerror = e.maxerror;
      txc.esterror = e.esterror;
      txc.status = e.status;
      txc.constant = e.constant;
      txc.time = {e.time_sec, e.time_usec};
      txc.tick = e.tick_usec;
      const int ret =
          e.clock == kClockRealtime
              ? Adjtimex(&txc, counter)
              : tk_->AuxAdjtimex(e.clock - kClockAux, &txc, counter);
      RecordOutcome(e, start,
                    absl::StrFormat("clock_adjtime(%s, modes %#x)",
                                    ClockShortName(e.clock), e.modes),
                    ret, &txc);
      CheckStep(e.modes, {e.time_sec, e.time_usec}, aux, before, ret, counter);
      return;
    }
    case EventKind::kSetTai: {
      timekeeper::Timex txc;
      txc.modes = timekeeper::kAdjTai;
      txc.constant = e.tai;
      const int ret = Adjtimex(&txc, counter);
      RecordOutcome(e, start, absl::StrFormat("adjtimex(ADJ_TAI, %d)", e.tai),
                    ret, &txc);
      return;
    }
    case EventKind::kSetOffset: {
      const std::optional<__int128> before = SteppedClockNs(-1, counter);
      timekeeper::Timex txc;
      txc.modes = timekeeper::kAdjSetoffset | timekeeper::kAdjNano;
      txc.time = {e.offset_time.tv_sec, e.offset_time.tv_nsec};
      const int ret = Adjtimex(&txc, counter);
      RecordOutcome(
          e, start,
          absl::StrFormat("adjtimex(ADJ_SETOFFSET, %d s + %d ns)",
                          e.offset_time.tv_sec, e.offset_time.tv_nsec),
          ret, &txc);
      CheckStep(txc.modes, {e.offset_time.tv_sec, e.offset_time.tv_nsec}, -1,
                before, ret, counter);
      return;
    }
    case EventKind::kLeap: {
      // leap-a-day's request: STA_INS or STA_DEL as the whole status.
      timekeeper::Timex txc;
      txc.modes = timekeeper::kAdjStatus;
      txc.status =
          e.leap == "delete" ? timekeeper::kStaDel : timekeeper::kStaIns;
      const int ret = Adjtimex(&txc, counter);
      RecordOutcome(e, start,
                    absl::StrFormat("adjtimex(ADJ_STATUS, STA_%s)",
                                    e.leap == "delete" ? "DEL" : "INS"),
                    ret, &txc);
      return;
    }
    case EventKind::kSuspend:
      Suspend(counter, PersistentClock(start));
      return;
    case EventKind::kResume: {
      const Timespec64 slept = Resume(counter, PersistentClock(start));
      if (slept == Timespec64{} && !scenario_.kernel.tsc_nonstop &&
          !scenario_.kernel.persistent_clock) {
        // Neither a nonstop clocksource nor a persistent clock: the RTC
        // driver's rtc_resume() injects the RTC's whole seconds.
        const int64_t secs =
            static_cast<int64_t>(start / kNsecPerSec) -
            static_cast<int64_t>((start - e.duration_ns) / kNsecPerSec);
        if (secs > 0) InjectSleeptime({secs, 0}, counter);
      }
      const timekeeper::Timekeeper& tk = tk_->timekeeper();
      raw_epoch_counter_ = tk.tkr_raw.cycle_last;
      raw_epoch_sec_ = tk.raw_sec;
      raw_epoch_nsec_ = tk.tkr_raw.xtime_nsec;
      raw_epoch_moved_ = true;
      return;
    }
    case EventKind::kClocksource: {
      const CounterSource next = SourceNamed(scenario_.machine, e.clocksource);
      if (next == source_) return;  // timekeeping_notify(): nothing to do.
      const uint64_t now_new = sources_.Read(next, tk_cpu, start);
      tk_->ChangeClocksource(clocksources_[static_cast<size_t>(next)], counter,
                             now_new);
      source_ = next;
      const timekeeper::Timekeeper& tk = tk_->timekeeper();
      raw_epoch_counter_ = tk.tkr_raw.cycle_last;
      raw_epoch_sec_ = tk.raw_sec;
      raw_epoch_nsec_ = tk.tkr_raw.xtime_nsec;
      raw_epoch_moved_ = true;
      return;
    }
    case EventKind::kAuxEnable:
      tk_->EnableAux(e.aux, counter);
      return;
    case EventKind::kAuxDisable:
      tk_->DisableAux(e.aux);
      return;
    case EventKind::kAuxSettime: {
      const int ret = tk_->AuxSetTime(e.aux, e.realtime, counter);
      RecordOutcome(e, start,
                    absl::StrFormat("clock_settime(AUX+%d, %s)", e.aux,
                                    FormatTimespec(e.realtime)),
                    ret, nullptr);
      return;
    }
    case EventKind::kIdle:
    case EventKind::kPause:
    case EventKind::kPvclockUpdate:  // The hypervisor's: RunPvclockRewrite().
      return;
  }
}

}  // namespace vdsolab::sim
