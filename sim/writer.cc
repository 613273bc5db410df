#include "sim/writer.h"

#include <algorithm>
#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/math64.h"
#include "common/rng.h"
#include "sim/seq_protocol.h"
#include "sim/timekeeper_consistency.h"
#include "timekeeper/clocksource.h"

namespace vdsolab::sim {
namespace {

// faults.reorder_ppm: the stores between two smp_wmb() in a drawn order,
// the one a compiler or a weakly ordered CPU may give them; stores to
// overlapping bytes keep theirs (a later one would otherwise be undone).
// Each group's first store keeps the wmb_before mark.
void ReorderWithinBarriers(uint64_t seed,
                           std::vector<vdso::VvarStore>* stores) {
  std::vector<vdso::VvarStore>& v = *stores;
  Rng rng = Rng::Deferred(seed, 0x5e0f);
  std::vector<vdso::VvarStore> group;
  std::vector<size_t> ready;
  for (size_t begin = 0; begin < v.size();) {
    size_t end = begin + 1;
    while (end < v.size() && !v[end].wmb_before) ++end;
    group.assign(v.begin() + static_cast<std::ptrdiff_t>(begin),
                 v.begin() + static_cast<std::ptrdiff_t>(end));
    std::vector<bool> done(group.size(), false);
    for (size_t out = begin; out < end; ++out) {
      // The stores no earlier pending store overlaps.
      ready.clear();
      for (size_t j = 0; j < group.size(); ++j) {
        if (done[j]) continue;
        bool blocked = false;
        for (size_t k = 0; k < j && !blocked; ++k) {
          blocked = !done[k] &&
                    group[k].offset < group[j].offset + group[j].size &&
                    group[j].offset < group[k].offset + group[k].size;
        }
        if (!blocked) ready.push_back(j);
      }
      const size_t pick = ready[rng.Below(ready.size())];
      done[pick] = true;
      v[out] = group[pick];
      v[out].wmb_before = out == begin && group.front().wmb_before;
    }
    begin = end;
  }
}

// Tasks freeze before timekeeping_suspend() and thaw after resume: no
// reader runs this long around a suspend.
constexpr uint64_t kFreezeMarginNs = 1000000;

bool IsWindow(EventKind k) {
  return k == EventKind::kIdle || k == EventKind::kPause ||
         k == EventKind::kSuspend;
}

}  // namespace

Writer::Writer(const Scenario& scenario, const Machine* machine)
    : scenario_(scenario),
      machine_(machine),
      sources_(machine),
      tick_ns_(kNsecPerSec / static_cast<uint64_t>(scenario.kernel.hz)) {
  if (scenario.machine.clocksource == "kvm-clock") {
    hv_ = std::make_unique<Hypervisor>(scenario.machine, machine,
                                       scenario.run.seed);
    sources_.SetHypervisor(hv_.get());
    source_ = CounterSource::kKvmClock;
  }
  // Each suspend brings its resume; events keep their file order among
  // equal times.
  std::vector<std::pair<EventSpec, size_t>> all;
  for (size_t i = 0; i < scenario.events.size(); ++i) {
    all.emplace_back(scenario.events[i], i);
    if (scenario.events[i].kind == EventKind::kSuspend) {
      EventSpec resume = scenario.events[i];
      resume.kind = EventKind::kResume;
      resume.at_ns += resume.duration_ns;
      all.emplace_back(resume, i);
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.first.at_ns < b.first.at_ns;
  });
  for (auto& [e, i] : all) {
    events_.push_back(e);
    event_index_.push_back(i);
  }
}

void VariantPublisher::UpdateVsyscall(const timekeeper::Timekeeper& tk) {
  pending_.push_back(
      BuiltUpdate{-1, variant_->build_update(tk, seq_, ctx_), {}});
  seq_ += 2;
}

void VariantPublisher::UpdateAux(const timekeeper::Timekeeper& tk) {
  if (variant_->build_aux_update == nullptr) return;
  // Only the sim's own aux timekeepers come here; the guard mirrors
  // timekeeper::VvarPublisher::UpdateAux so no id can index past aux_seq_.
  const int64_t aux64 = int64_t{tk.id} - timekeeper::kTimekeeperAuxFirst;
  if (aux64 < 0 || aux64 >= kMaxAuxClocks) return;
  const int aux = static_cast<int>(aux64);
  uint32_t& seq = aux_seq_[aux];
  pending_.push_back(BuiltUpdate{aux, variant_->build_aux_update(tk, seq), tk});
  seq += 2;
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
  absl::StatusOr<timekeeper::TimekeeperProfile> profile =
      KernelProfile(scenario.kernel);
  ctx.boottime_shift_overflow =
      profile.ok() && profile->defects.vsyscall_boottime_shift_overflow;
  return ctx;
}

absl::StatusOr<std::unique_ptr<Writer>> Writer::Create(
    const Scenario& scenario, const Machine* machine, vdso::VvarPage* page,
    const variants::Variant* variant) {
  absl::StatusOr<timekeeper::TimekeeperProfile> profile =
      KernelProfile(scenario.kernel);
  if (!profile.ok()) return profile.status();
  std::unique_ptr<Writer> w(new Writer(scenario, machine));
  for (CounterSource s : {CounterSource::kMachine, CounterSource::kHpet,
                          CounterSource::kAcpiPm, CounterSource::kKvmClock}) {
    absl::StatusOr<timekeeper::Clocksource> cs =
        RegisterSource(scenario.machine, s, scenario.kernel.tsc_nonstop);
    if (!cs.ok()) return cs.status();
    w->clocksources_[static_cast<size_t>(s)] = *cs;
  }
  const int tk_cpu = scenario.kernel.timekeeping_cpu;
  const uint64_t c0 = w->sources_.Read(w->source_, tk_cpu, 0);
  // The machine's counter at boot: what user-space clocks calibrate from
  // (c0 itself but on kvm-clock).
  w->publisher_ = std::make_unique<VariantPublisher>(
      variant, MakePublishContext(scenario, machine->Counter(tk_cpu, 0)));
  w->tk_ = std::make_unique<timekeeper::Timekeeping>(
      w->clocksources_[static_cast<size_t>(w->source_)], scenario.kernel.hz,
      w->publisher_.get(), *profile);
  // timekeeping_init() at true time 0; its update is on the page from the
  // start, before any reader runs.
  w->tk_->Init(c0, scenario.kernel.boot_realtime, scenario.kernel.boot_offset);
  w->layout_ = variant->layout;  // Names the page fields BootTree() compares.
  if (variant->timekeeping != nullptr) {
    if (absl::Status s = w->BootTree(*variant->timekeeping, c0); !s.ok()) {
      return s;
    }
  }
  for (const BuiltUpdate& update : w->publisher_->pending()) {
    w->CheckSeqProtocol("timekeeping_init()", 0, update.update);
    page->Apply(update.update);
  }
  w->publisher_->pending().clear();
  // The hypervisor's first pvti is there before the guest boots.
  if (w->hv_ != nullptr) page->Apply(w->hv_->InitialStores());
  w->coarse_sec_ = w->tk_->timekeeper().xtime_sec;
  w->cycle_last_ideal_ = w->sources_.Ideal(w->source_, tk_cpu, 0);
  w->raw_epoch_counter_ = c0;
  w->raw_epoch_ideal_ = w->cycle_last_ideal_;
  w->last_tick_length_ = w->tk_->ntp().TickLength();
  w->updates_.push_back(w->MakeRecord("timekeeping_init", 0, c0));
  w->newest_ = &w->updates_.back();
  w->NoteClockMode(*w->newest_);
  for (int i = 0; i < kMaxAuxClocks; ++i) {
    w->aux_records_[static_cast<size_t>(i)].push_back(
        AuxRecord{i, 0, 0, 0, w->tk_->aux_timekeeper(i)});
  }
  return w;
}

absl::Status Writer::BootTree(const variants::ForeignTimekeepingSource& source,
                              uint64_t c0) {
  const KernelSpec& k = scenario_.kernel;
  if (k.era != source.era || k.backports != source.backports) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "kernel.era = \"%s\", kernel.backports = [%s]: %s publishes the page "
        "and the model judges it in the tree's own era, \"%s\" with [%s]",
        k.era, absl::StrJoin(k.backports, ", "), source.name, source.era,
        absl::StrJoin(source.backports, ", ")));
  }
  for (const EventSpec& e : events_) {
    const bool aux =
        e.kind == EventKind::kAuxEnable || e.kind == EventKind::kAuxDisable ||
        e.kind == EventKind::kAuxSettime ||
        (e.kind == EventKind::kAdjtimex && e.clock != kClockRealtime);
    if (aux || e.kind == EventKind::kClocksource || k.aux_clocks) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s does not run %s: a kernel tree's timekeeper runs one "
          "clocksource and no aux clocks (docs/ktime.md)",
          source.name,
          e.kind == EventKind::kClocksource ? "clocksource changes"
                                            : "aux clocks"));
    }
  }
  absl::StatusOr<variants::ClocksourceRegistration> reg =
      SourceRegistration(scenario_.machine, source_, k.tsc_nonstop);
  if (!reg.ok()) return reg.status();
  absl::StatusOr<std::unique_ptr<variants::ForeignTimekeeping>> tree =
      source.make(k.hz);
  if (!tree.ok()) return tree.status();
  tree_ = std::move(*tree);
  operation_ = "timekeeping_init at 0 s";
  NoteTreeDifference(
      tree_->Boot(*reg, c0, k.boot_realtime, k.boot_offset, *tk_));
  ++tree_operations_;
  TakeTreeUpdates();
  return absl::OkStatus();
}

void Writer::NoteTreeDifference(const std::string& difference) {
  if (difference.empty() || !tree_difference_.empty()) return;
  tree_difference_ = operation_ + ": " + difference;
}

namespace {

// `u`'s stores (little-endian) applied to `shadow`, grown as needed.
void ApplyToShadow(const vdso::VvarUpdate& u, std::vector<uint8_t>* shadow) {
  for (const vdso::VvarStore& st : u.stores) {
    const size_t end = size_t{st.offset} + st.size;
    if (shadow->size() < end) shadow->resize(end, 0);
    for (unsigned b = 0; b < st.size; ++b) {
      (*shadow)[st.offset + b] = static_cast<uint8_t>(st.value >> (8 * b));
    }
  }
}

}  // namespace

void Writer::TakeTreeUpdates() {
  if (tree_ == nullptr) return;
  std::vector<vdso::VvarUpdate> tree = tree_->TakeUpdates();
  std::deque<BuiltUpdate>& built = publisher_->pending();
  size_t k = 0;
  for (BuiltUpdate& b : built) {
    if (b.aux >= 0) continue;
    // The model's stores, before the tree's replace them: the page each
    // would leave is kept and compared below.
    ApplyToShadow(b.update, &model_page_);
    b.update = k < tree.size() ? std::move(tree[k]) : vdso::VvarUpdate{};
    ApplyToShadow(b.update, &tree_page_);
    ++k;
  }
  if (k != tree.size()) {
    NoteTreeDifference(absl::StrFormat(
        "update_vsyscall() calls: model %d, tree %d", k, tree.size()));
    // What the tree published beyond the model is on the page all the same.
    for (; k < tree.size(); ++k) {
      ApplyToShadow(tree[k], &tree_page_);
      built.push_back(BuiltUpdate{-1, std::move(tree[k]), {}});
    }
  }
  // The page itself, as conform-model compares it: a field the tree
  // publishes otherwise, or never (vdso_data[CS_RAW].clock_mode), differs
  // here though no timekeeper state the lockstep compares does.
  const size_t n = std::max(model_page_.size(), tree_page_.size());
  for (size_t i = 0; i < n; ++i) {
    const uint8_t m = i < model_page_.size() ? model_page_[i] : 0;
    const uint8_t t = i < tree_page_.size() ? tree_page_[i] : 0;
    if (m == t) continue;
    const auto byte = [](const std::vector<uint8_t>& page) {
      return [&page](uint32_t at) -> uint8_t {
        return at < page.size() ? page[at] : 0;
      };
    };
    NoteTreeDifference(
        layout_ != nullptr
            ? layout_->DescribeDifference(static_cast<uint32_t>(i),
                                          byte(model_page_), byte(tree_page_),
                                          "model", "tree")
            : absl::StrFormat("page byte vvar+%d: model 0x%02x, tree 0x%02x", i,
                              m, t));
    break;
  }
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
  // The tick length in force (the base plus this second's phase and
  // adjtime() slews: equal to the base when neither runs).
  record.mono_rate_num = (ntp.tick_length >> tk.ntp_error_shift) -
                         static_cast<uint64_t>(tk.xtime_remainder);
  record.mono_rate_den =
      ntpinterval - static_cast<uint64_t>(tk.xtime_remainder);
  record.ntp_generation = ntp_generation_;
  // Only 6.15+ keeps coarse_nsec apart from xtime_nsec.
  record.coarse_off_by_second =
      tk_->profile().coarse_nsec && record.tk.xtime_sec != coarse_sec_;
  record.wrap_losses = wrap_losses_;
  record.cycle_last_ideal = cycle_last_ideal_;
  record.start_ideal =
      sources_.Ideal(source_, scenario_.kernel.timekeeping_cpu, start);
  record.source = source_;
  record.raw_epoch_counter = raw_epoch_counter_;
  record.raw_epoch_sec = raw_epoch_sec_;
  record.raw_epoch_nsec = raw_epoch_nsec_;
  record.raw_epoch_ideal = raw_epoch_ideal_;
  record.raw_epoch_wrap_losses = raw_epoch_wrap_losses_;
  return record;
}

bool Writer::InPause(uint64_t t_ns) const {
  for (const EventSpec& e : events_) {
    if (e.kind == EventKind::kPause && t_ns >= e.at_ns &&
        t_ns - e.at_ns < e.duration_ns) {
      return true;
    }
    if (e.kind == EventKind::kSuspend) {
      const uint64_t from =
          e.at_ns > kFreezeMarginNs ? e.at_ns - kFreezeMarginNs : 0;
      if (t_ns >= from && t_ns < e.at_ns + e.duration_ns + kFreezeMarginNs) {
        return true;
      }
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
    if (e.kind == EventKind::kSuspend) {
      const uint64_t from =
          e.at_ns > kFreezeMarginNs ? e.at_ns - kFreezeMarginNs : 0;
      const uint64_t to = e.at_ns + e.duration_ns + kFreezeMarginNs;
      if (t_ns >= from && t_ns < to) return to;
    }
  }
  return t_ns;
}

bool Writer::InNoTickWindow(uint64_t t_ns) const {
  for (const EventSpec& e : events_) {
    if (IsWindow(e.kind) && t_ns >= e.at_ns && t_ns - e.at_ns < e.duration_ns) {
      return true;
    }
  }
  return false;
}

bool Writer::NoTickWindowBetween(uint64_t from_ns, uint64_t to_ns) const {
  for (const EventSpec& e : events_) {
    if (IsWindow(e.kind) && e.at_ns <= to_ns &&
        e.at_ns + e.duration_ns >= from_ns) {
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

Timespec64 Writer::PersistentClock(uint64_t t_ns) const {
  if (!scenario_.kernel.persistent_clock) return Timespec64{};
  const Timespec64& boot = scenario_.kernel.boot_realtime;
  const uint64_t ns = static_cast<uint64_t>(boot.tv_nsec) + t_ns;
  return Timespec64{boot.tv_sec + static_cast<int64_t>(ns / kNsecPerSec), 0};
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
    uint64_t at = event_next ? events_[next_event_].at_ns : tick_at;
    // The hypervisor's periodic rewrites: none while the VM is paused or
    // suspended (its vCPUs do not enter the guest).
    const uint64_t rewrite_at =
        hv_ != nullptr ? hv_->NextPeriodicAt() : ~uint64_t{0};
    const bool rewrite_next = rewrite_at < at;
    if (rewrite_next) at = rewrite_at;
    if (at > t_ns) {
      next_operation_ns_ = at;
      return;
    }
    if (rewrite_next) {
      if (InPause(rewrite_at)) {
        // Not while the VM is paused or suspended: the schedule goes on
        // after it, in one step however long the pause.
        hv_->SkipPeriodicTo(PauseEnd(rewrite_at));
      } else {
        hv_->AdvancePeriodic();
        RunPvclockRewrite(rewrite_at, nullptr);
      }
    } else if (event_next) {
      current_event_ = next_event_;
      const EventSpec& e = events_[next_event_++];
      if (e.kind == EventKind::kIdle || e.kind == EventKind::kPause) continue;
      if (e.kind == EventKind::kPvclockUpdate) {
        RunPvclockRewrite(e.at_ns, &e);
        continue;
      }
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
  const int tk_cpu = scenario_.kernel.timekeeping_cpu;
  const uint64_t counter = sources_.Read(source_, tk_cpu, start);
  const uint64_t cycle_last_before = tk_->timekeeper().tkr_mono.cycle_last;
  const CounterSource source_before = source_;
  // For the tick's check below (a copy: the operation changes it).
  const timekeeper::Timekeeper tk_before = tk_->timekeeper();
  // clocksource_delta() cannot tell how many times a narrow counter wrapped
  // since cycle_last: past max_raw_delta the kernel loses that time. A
  // resume re-bases instead.
  const bool rebases = event != nullptr && event->kind == EventKind::kResume;
  // (The counter's own range: a clocksource registered with a wrong
  // max_raw_delta does not make the hardware wrap sooner.)
  const uint64_t range =
      clocksources_[static_cast<size_t>(source_)].max_raw_delta;
  if (!rebases && sources_.Ideal(source_, tk_cpu, start) - cycle_last_ideal_ >
                      static_cast<__int128>(range)) {
    ++wrap_losses_;
  }
  if (event != nullptr) ++ntp_generation_;
  if (tree_ != nullptr) {
    operation_ = absl::StrFormat("%s at %d.%09d s", cause, start / kNsecPerSec,
                                 start % kNsecPerSec);
  }
  if (event == nullptr) {
    Tick(counter);
  } else {
    RunEvent(*event, start, counter);
  }
  if (tree_ != nullptr) {
    ++tree_operations_;
    NoteTreeDifference(tree_->Compare(*tk_));
  }
  // A new NTP tick length starts a new rate (the PLL's and adjtime()'s
  // slews change it at second boundaries, between events).
  if (tk_->ntp().TickLength() != last_tick_length_) {
    if (event == nullptr) ++ntp_generation_;
    last_tick_length_ = tk_->ntp().TickLength();
  }
  // Accumulation (or a settime, which forwards cycle_last) refreshes
  // coarse_nsec together with xtime_sec.
  const uint64_t counter_now = sources_.Read(source_, tk_cpu, start);
  if (tk_->timekeeper().tkr_mono.cycle_last != cycle_last_before ||
      source_ != source_before) {
    coarse_sec_ = tk_->timekeeper().xtime_sec;
    // cycle_last trails `counter` by the cycles not yet accumulated.
    const uint64_t behind =
        (counter_now - tk_->timekeeper().tkr_mono.cycle_last) &
        sources_.Mask(source_);
    cycle_last_ideal_ = sources_.Ideal(source_, tk_cpu, start) - behind;
  }
  if (raw_epoch_moved_) {
    // The new epoch's counter is tkr_raw.cycle_last after the event.
    raw_epoch_moved_ = false;
    raw_epoch_ideal_ =
        cycle_last_ideal_ -
        static_cast<__int128>(
            (tk_->timekeeper().tkr_raw.cycle_last - raw_epoch_counter_) &
            sources_.Mask(source_));
    raw_epoch_wrap_losses_ = wrap_losses_;
  }
  CheckTimekeeper(cause, start, counter_now,
                  event == nullptr ? &tk_before : nullptr);
  Publish(cause, start, counter_now);
}

void Writer::RunPvclockRewrite(uint64_t t_ns, const EventSpec* event) {
  const uint64_t start = std::max(t_ns, busy_until_ns_);
  const uint32_t id = kPvclockUpdateIdBit | (hv_->rewrites() + 1);
  // The stores' times first (drawn as the timekeeper's are): the new
  // state continues kvm-clock from the moment its last store lands.
  std::array<uint64_t, Hypervisor::kStores> times;
  uint64_t t = start + scenario_.timing.writer_start_ns;
  for (size_t i = 0; i < times.size(); ++i) {
    const uint64_t draw = MixHash(scenario_.run.seed, 0x5707e, id, i);
    if (draw % 1000000 < scenario_.timing.writer_stall_ppm) {
      t += (draw >> 20) % (scenario_.timing.writer_stall_max_ns + 1);
    }
    t += scenario_.timing.store_ns;
    times[i] = t;
  }
  vdso::VvarUpdate update = hv_->Rewrite(start, t, event);
  if (scenario_.faults.reorder_ppm != 0 &&
      MixHash(scenario_.run.seed, 0x5e0d, id) % 1000000 <
          scenario_.faults.reorder_ppm) {
    ReorderWithinBarriers(MixHash(scenario_.run.seed, 0x5e0e, id),
                          &update.stores);
  }
  for (size_t i = 0; i < update.stores.size(); ++i) {
    pending_.push_back(TimedStore{times[i], id, update.stores[i]});
  }
  busy_until_ns_ = t;
  retire_from_ns_ = 0;  // The state it replaces may be retirable in time.
}

void Writer::CheckTimekeeper(const std::string& cause, uint64_t start,
                             uint64_t counter,
                             const timekeeper::Timekeeper* before_tick) {
  std::string finding =
      DerivedStateMismatch(tk_->timekeeper(), tk_->ntp().data());
  if (finding.empty() && before_tick != nullptr) {
    finding = TickGridMismatch(*before_tick, tk_->timekeeper());
  }
  // The loop guard and a suspended timekeeper have their own findings
  // and rules (CheckTimekeeperLoops; no accumulation while suspended).
  if (finding.empty() && before_tick != nullptr && !tk_->suspended() &&
      tk_->stalled_loop() == nullptr) {
    finding = UnaccumulatedMismatch(tk_->timekeeper(), counter,
                                    "the core timekeeper");
    for (int i = 0;
         finding.empty() && tk_->profile().aux_clocks && i < kMaxAuxClocks;
         ++i) {
      if (!tk_->AuxEnabled(i) || !tk_->aux_timekeeper(i).clock_valid) continue;
      finding = UnaccumulatedMismatch(tk_->aux_timekeeper(i), counter,
                                      absl::StrFormat("aux clock %d", i));
    }
  }
  if (finding.empty()) {
    finding = HrtimerViewMismatch(tk_->timekeeper(), counter, &hrtimer_);
  }
  if (finding.empty()) return;
  NoteFinding(cause, start, finding);
}

void Writer::NoteFinding(const std::string& cause, uint64_t start,
                         const std::string& finding) {
  // The first few are the story; the rest usually repeat the first.
  if (timekeeper_findings_.size() < kMaxTimekeeperFindings) {
    timekeeper_findings_.push_back(
        absl::StrFormat("%s at %d.%09d s: %s", cause, start / kNsecPerSec,
                        start % kNsecPerSec, finding));
  }
}

void Writer::CheckSeqProtocol(const std::string& cause, uint64_t start,
                              const vdso::VvarUpdate& update) {
  if (layout_ == nullptr) return;
  const std::string finding =
      SeqProtocolMismatch(update, *layout_, &seq_words_);
  if (!finding.empty()) NoteFinding(cause, start, finding);
}

void Writer::Publish(const std::string& cause, uint64_t start,
                     uint64_t counter) {
  TakeTreeUpdates();
  std::deque<BuiltUpdate>& built = publisher_->pending();
  uint64_t t = start + scenario_.timing.writer_start_ns;
  for (BuiltUpdate& b : built) {
    const bool core = b.aux < 0;
    UpdateRecord record;
    uint32_t id = 0;
    if (core) {
      record = MakeRecord(cause, start, counter);
      id = record.id;
    } else {
      // Aux stores carry their own ids, apart from the core's.
      id = 0x80000000u | (++aux_published_[static_cast<size_t>(b.aux)] << 3) |
           static_cast<uint32_t>(b.aux);
    }
    // As built, before any reordering draws store order.
    CheckSeqProtocol(cause, start, b.update);
    if (scenario_.faults.reorder_ppm != 0 &&
        MixHash(scenario_.run.seed, 0x5e0d, id) % 1000000 <
            scenario_.faults.reorder_ppm) {
      ReorderWithinBarriers(MixHash(scenario_.run.seed, 0x5e0e, id),
                            &b.update.stores);
    }
    for (size_t i = 0; i < b.update.stores.size(); ++i) {
      const uint64_t draw = MixHash(scenario_.run.seed, 0x5707e, id, i);
      if (draw % 1000000 < scenario_.timing.writer_stall_ppm) {
        t += (draw >> 20) % (scenario_.timing.writer_stall_max_ns + 1);
      }
      t += scenario_.timing.store_ns;
      pending_.push_back(TimedStore{t, id, b.update.stores[i]});
    }
    busy_until_ns_ = t;  // The next update's stores follow this one's.
    if (core) {
      record.end_ns = t;
      updates_.push_back(std::move(record));
      newest_ = &updates_.back();
      NoteClockMode(*newest_);
      retire_from_ns_ = 0;  // A new record may be retirable at once.
    } else {
      aux_records_[static_cast<size_t>(b.aux)].push_back(AuxRecord{
          b.aux, aux_published_[static_cast<size_t>(b.aux)], start, t, b.tk});
      retire_from_ns_ = 0;
    }
  }
  built.clear();
}

std::string UpdateLabel(uint32_t id) {
  if (IsPvclockUpdateId(id)) {
    return absl::StrFormat("pvclock rewrite %d", id & ~kPvclockUpdateIdBit);
  }
  return absl::StrFormat("update %d", id);
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

const UpdateRecord& Writer::LatestStartedAtBefore(uint64_t t_ns) const {
  for (auto it = updates_.rbegin(); it != updates_.rend(); ++it) {
    if (it->start_ns <= t_ns) return *it;
  }
  return updates_.front();
}

const timekeeper::Timekeeper* Writer::AuxStatesAt(uint64_t t_ns) const {
  if (!scenario_.kernel.aux_clocks) return nullptr;
  for (int i = 0; i < kMaxAuxClocks; ++i) {
    const std::deque<AuxRecord>& recs = aux_records_[static_cast<size_t>(i)];
    const AuxRecord* latest = &recs.front();
    for (auto it = recs.rbegin(); it != recs.rend(); ++it) {
      if (it->start_ns <= t_ns) {
        latest = &*it;
        break;
      }
    }
    aux_scratch_[static_cast<size_t>(i)] = latest->tk;
  }
  return aux_scratch_.data();
}

const AuxRecord* Writer::AuxUpdate(int aux, uint32_t number) const {
  if (aux < 0 || aux >= kMaxAuxClocks) return nullptr;
  const std::deque<AuxRecord>& recs = aux_records_[static_cast<size_t>(aux)];
  if (recs.empty() || number < recs.front().number ||
      number > recs.back().number) {
    return nullptr;
  }
  return &recs[number - recs.front().number];
}

size_t Writer::retained_aux_records() const {
  size_t n = 0;
  for (const std::deque<AuxRecord>& recs : aux_records_) n += recs.size();
  return n;
}

void Writer::NoteClockMode(const UpdateRecord& r) {
  const int32_t mode = r.tk.tkr_mono.clock != nullptr
                           ? r.tk.tkr_mono.clock->vdso_clock_mode
                           : timekeeper::kVdsoClockmodeNone;
  if (mode_changes_.empty() || mode_changes_.back().second != mode) {
    mode_changes_.emplace_back(r.id, mode);
  }
}

int32_t Writer::ClockModeOf(uint32_t id) const {
  // The last change at or before `id` (ids grow with the vector).
  auto it =
      std::upper_bound(mode_changes_.begin(), mode_changes_.end(), id,
                       [](uint32_t v, const std::pair<uint32_t, int32_t>& c) {
                         return v < c.first;
                       });
  return it == mode_changes_.begin() ? mode_changes_.front().second
                                     : std::prev(it)->second;
}

void Writer::Retire(uint64_t t_ns) {
  // Called before every reader call: most find nothing to retire, so the
  // earliest time anything could be is kept (reset by every new record).
  if (t_ns <= retire_from_ns_) return;
  uint64_t next = ~0ull;
  while (updates_.size() > 2 && updates_[1].end_ns < t_ns) {
    updates_.pop_front();
    ++retired_;
  }
  if (updates_.size() > 2) next = updates_[1].end_ns;
  if (hv_ != nullptr) {
    hv_->Retire(t_ns);
    next = std::min(next, hv_->NextRetireAt());
  }
  for (std::deque<AuxRecord>& recs : aux_records_) {
    while (recs.size() > 2 && recs[1].end_ns < t_ns) recs.pop_front();
    if (recs.size() > 2) next = std::min(next, recs[1].end_ns);
  }
  retire_from_ns_ = next;
}

}  // namespace vdsolab::sim
