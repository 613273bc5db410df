#include "sim/writer.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/math64.h"
#include "timekeeper/clocksource.h"

namespace vdsolab::sim {
namespace {

absl::StatusOr<timekeeper::Clocksource> MakeClocksource(const MachineSpec& m) {
  const uint64_t hz = m.calibrated_hz != 0 ? m.calibrated_hz : m.counter_hz;
  const uint64_t mask = timekeeper::ClocksourceMask(m.width_bits);
  if (m.clocksource == "tsc") {
    // tsc.c registers tsc_khz: the calibration is truncated to whole kHz.
    return timekeeper::ClocksourceRegisterScale(
        "tsc", mask, 1000, static_cast<uint32_t>(hz / 1000),
        timekeeper::kVdsoClockmodeTsc, 300);
  }
  if (hz > UINT32_MAX) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "machine: %s at %d Hz does not fit clocksource_register_hz()",
        m.clocksource, hz));
  }
  return timekeeper::ClocksourceRegisterScale(
      m.clocksource, mask, 1, static_cast<uint32_t>(hz),
      timekeeper::kVdsoClockmodeNone, m.clocksource == "hpet" ? 250 : 200);
}

}  // namespace

Writer::Writer(const Scenario& scenario, const Machine* machine)
    : scenario_(scenario),
      machine_(machine),
      tick_ns_(kNsecPerSec / static_cast<uint64_t>(scenario.kernel.hz)) {
  events_ = scenario.events;
  std::stable_sort(
      events_.begin(), events_.end(),
      [](const EventSpec& a, const EventSpec& b) { return a.at_ns < b.at_ns; });
}

void VariantPublisher::UpdateVsyscall(const timekeeper::Timekeeper& tk) {
  pending_.push_back(variant_->build_update(tk, seq_, ctx_));
  seq_ += 2;
}

variants::PublishContext MakePublishContext(const Scenario& scenario,
                                            uint64_t boot_counter) {
  variants::PublishContext ctx;
  ctx.hrtimer_res = scenario.kernel.hrtimer_res_ns;
  const MachineSpec& m = scenario.machine;
  const uint64_t hz = m.calibrated_hz != 0 ? m.calibrated_hz : m.counter_hz;
  ctx.tsc_khz = static_cast<uint32_t>(hz / 1000);
  ctx.has_rdtscp = m.rdtscp;
  // The kernel's TSC sync check passes when every CPU's counter agrees.
  ctx.counters_synced = true;
  for (const CpuCounterSpec& cpu : m.cpus) {
    if (!(cpu == CpuCounterSpec{})) ctx.counters_synced = false;
  }
  ctx.boot_counter = boot_counter;
  return ctx;
}

absl::StatusOr<std::unique_ptr<Writer>> Writer::Create(
    const Scenario& scenario, const Machine* machine, vdso::VvarPage* page,
    const variants::Variant* variant) {
  absl::StatusOr<timekeeper::Clocksource> cs =
      MakeClocksource(scenario.machine);
  if (!cs.ok()) return cs.status();
  std::unique_ptr<Writer> w(new Writer(scenario, machine));
  const uint64_t c0 = machine->Counter(scenario.kernel.timekeeping_cpu, 0);
  w->publisher_ = std::make_unique<VariantPublisher>(
      variant, MakePublishContext(scenario, c0));
  w->tk_ = std::make_unique<timekeeper::Timekeeping>(*cs, scenario.kernel.hz,
                                                     w->publisher_.get());
  // timekeeping_init() at true time 0; its update is on the page from the
  // start, before any reader runs.
  w->tk_->Init(c0, scenario.kernel.boot_realtime, scenario.kernel.boot_offset);
  for (const vdso::VvarUpdate& update : w->publisher_->pending()) {
    page->Apply(update);
  }
  w->publisher_->pending().clear();
  w->coarse_sec_ = w->tk_->timekeeper().xtime_sec;
  w->cycle_last_ideal_ =
      machine->IdealCounter(scenario.kernel.timekeeping_cpu, 0);
  w->updates_.push_back(w->MakeRecord("timekeeping_init", 0, c0));
  return w;
}

UpdateRecord Writer::MakeRecord(const std::string& cause, uint64_t start,
                                uint64_t counter) {
  UpdateRecord record;
  record.id = next_update_id_++;
  record.start_ns = start;
  record.end_ns = start;
  record.cause = cause;
  record.counter = counter;
  record.tk = tk_->timekeeper();
  record.clock_was_set_seq = record.tk.clock_was_set_seq;
  const timekeeper::NtpData& ntp = tk_->ntp().data();
  const timekeeper::Timekeeper& tk = record.tk;
  const uint64_t ntpinterval = (kNsecPerSec / static_cast<uint64_t>(ntp.hz))
                               << tk.tkr_mono.shift;
  record.mono_rate_num = (ntp.tick_length_base >> tk.ntp_error_shift) -
                         static_cast<uint64_t>(tk.xtime_remainder);
  record.mono_rate_den =
      ntpinterval - static_cast<uint64_t>(tk.xtime_remainder);
  record.ntp_generation = ntp_generation_;
  record.coarse_off_by_second = record.tk.xtime_sec != coarse_sec_;
  record.wrap_losses = wrap_losses_;
  record.cycle_last_ideal = cycle_last_ideal_;
  return record;
}

bool Writer::InPause(uint64_t t_ns) const {
  for (const EventSpec& e : events_) {
    if (e.kind == EventKind::kPause && t_ns >= e.at_ns &&
        t_ns - e.at_ns < e.duration_ns) {
      return true;
    }
  }
  return false;
}

uint64_t Writer::PauseEnd(uint64_t t_ns) const {
  for (const EventSpec& e : events_) {
    if (e.kind == EventKind::kPause && t_ns >= e.at_ns &&
        t_ns - e.at_ns < e.duration_ns) {
      return e.at_ns + e.duration_ns;
    }
  }
  return t_ns;
}

bool Writer::InNoTickWindow(uint64_t t_ns) const {
  for (const EventSpec& e : events_) {
    if ((e.kind == EventKind::kIdle || e.kind == EventKind::kPause) &&
        t_ns >= e.at_ns && t_ns - e.at_ns < e.duration_ns) {
      return true;
    }
  }
  return false;
}

uint64_t Writer::NextTickTime() const {
  // Tick k fires at k/HZ s plus a per-tick jitter drawn from (seed, k), so
  // skipping ticks never changes the others.
  const uint64_t jitter =
      MixHash(scenario_.run.seed, 0x71c4, next_tick_index_) %
      (scenario_.timing.tick_jitter_ns + 1);
  return next_tick_index_ * tick_ns_ + jitter;
}

void Writer::AdvanceTo(uint64_t t_ns) {
  // Called before every reader load: most calls have nothing to do.
  if (t_ns < next_operation_ns_) return;
  for (;;) {
    uint64_t tick_at = NextTickTime();
    while (InNoTickWindow(tick_at)) {
      ++next_tick_index_;
      tick_at = NextTickTime();
    }
    const bool event_next =
        next_event_ < events_.size() && events_[next_event_].at_ns <= tick_at;
    const uint64_t at = event_next ? events_[next_event_].at_ns : tick_at;
    if (at > t_ns) {
      next_operation_ns_ = at;
      return;
    }
    if (event_next) {
      const EventSpec& e = events_[next_event_++];
      if (e.kind == EventKind::kIdle || e.kind == EventKind::kPause) continue;
      RunOperation(EventKindName(e.kind), e.at_ns, &e);
    } else {
      ++next_tick_index_;
      RunOperation("tick", tick_at, nullptr);
    }
  }
}

void Writer::RunOperation(const std::string& cause, uint64_t t_ns,
                          const EventSpec* event) {
  // The writer is serialised (tk_core.lock): an operation due while the
  // previous update is still being stored starts when that one is done.
  const uint64_t start = std::max(t_ns, busy_until_ns_);
  const uint64_t counter =
      machine_->Counter(scenario_.kernel.timekeeping_cpu, start);
  const uint64_t cycle_last_before = tk_->timekeeper().tkr_mono.cycle_last;
  // clocksource_delta() cannot tell how many times a narrow counter wrapped
  // since cycle_last: past max_raw_delta the kernel loses that time.
  const int tk_cpu = scenario_.kernel.timekeeping_cpu;
  if (machine_->IdealCounter(tk_cpu, start) - cycle_last_ideal_ >
      static_cast<__int128>(tk_->clocksource().max_raw_delta)) {
    ++wrap_losses_;
  }
  if (event != nullptr) ++ntp_generation_;
  if (event == nullptr) {
    tk_->Advance(timekeeper::AdvanceMode::kTick, counter);
  } else if (event->kind == EventKind::kAdjtimexFrequency ||
             event->kind == EventKind::kAdjtimexTick) {
    timekeeper::Timex txc;
    if (event->kind == EventKind::kAdjtimexFrequency) {
      txc.modes = timekeeper::kAdjFrequency;
      txc.freq = event->freq_scaled_ppm;
    } else {
      txc.modes = timekeeper::kAdjTick;
      txc.tick = event->tick_usec;
    }
    (void)tk_->Adjtimex(txc, counter);  // Validated with the scenario.
  } else if (event->kind == EventKind::kSetTime) {
    (void)tk_->SetTimeOfDay(event->realtime, counter);
  }
  // Accumulation (or a settime, which forwards cycle_last) refreshes
  // coarse_nsec together with xtime_sec.
  if (tk_->timekeeper().tkr_mono.cycle_last != cycle_last_before) {
    coarse_sec_ = tk_->timekeeper().xtime_sec;
    // cycle_last trails `counter` by the cycles not yet accumulated.
    const uint64_t behind =
        (counter - tk_->timekeeper().tkr_mono.cycle_last) & machine_->mask();
    cycle_last_ideal_ = machine_->IdealCounter(tk_cpu, start) - behind;
  }
  std::deque<vdso::VvarUpdate>& built = publisher_->pending();
  for (vdso::VvarUpdate& update : built) {
    UpdateRecord record = MakeRecord(cause, start, counter);
    uint64_t t = start + scenario_.timing.writer_start_ns;
    for (size_t i = 0; i < update.stores.size(); ++i) {
      const uint64_t draw = MixHash(scenario_.run.seed, 0x5707e, record.id, i);
      if (draw % 1000000 < scenario_.timing.writer_stall_ppm) {
        t += (draw >> 20) % (scenario_.timing.writer_stall_max_ns + 1);
      }
      t += scenario_.timing.store_ns;
      pending_.push_back(TimedStore{t, record.id, update.stores[i]});
    }
    record.end_ns = t;
    busy_until_ns_ = t;
    updates_.push_back(std::move(record));
  }
  built.clear();
}

void Writer::PopPending(size_t n) {
  pending_head_ += n;
  if (pending_head_ == pending_.size()) {
    pending_.clear();
    pending_head_ = 0;
  } else if (pending_head_ >= 1024 && pending_head_ * 2 >= pending_.size()) {
    pending_.erase(
        pending_.begin(),
        pending_.begin() + static_cast<std::ptrdiff_t>(pending_head_));
    pending_head_ = 0;
  }
}

const UpdateRecord* Writer::Update(uint32_t id) const {
  if (updates_.empty() || id < updates_.front().id || id > updates_.back().id) {
    return nullptr;
  }
  return &updates_[id - updates_.front().id];
}

const UpdateRecord& Writer::LatestStartedAt(uint64_t t_ns) const {
  for (auto it = updates_.rbegin(); it != updates_.rend(); ++it) {
    if (it->start_ns <= t_ns) return *it;
  }
  return updates_.front();
}

void Writer::Retire(uint64_t t_ns) {
  while (updates_.size() > 2 && updates_[1].end_ns < t_ns) {
    updates_.pop_front();
  }
}

}  // namespace vdsolab::sim
