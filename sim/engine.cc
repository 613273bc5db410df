#include "sim/engine.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <queue>

#include "absl/strings/str_format.h"
#include "common/math64.h"
#include "common/rng.h"
#include "sim/entry_points.h"
#include "sim/kvm_counter.h"
#include "sim/load_observer.h"
#include "sim/machine.h"
#include "sim/page_view.h"
#include "sim/settled_page.h"
#include "sim/writer.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timens.h"
#include "timekeeper/vsyscall.h"
#include "vdso/datapage.h"

namespace vdsolab::sim {
namespace {

// Everything one call needs from the run.
struct World {
  const Scenario* scenario;
  const variants::Variant* variant;
  const Machine* machine;
  Writer* writer;
  PageView* view;
  const uint8_t* page;
  // The namespace's offsets (kernel.timens_*), for readers in it.
  const timekeeper::TimensOffsets* timens;
  // faults.reorder_ppm for the reader's loads: 0 where the reader does
  // not report its barriers (SimReader::reports_barriers()).
  uint32_t load_reorder_ppm;
};

// The random strategy's hooks for one call.
class RandomHooks : public vdso::AccessHooks {
 public:
  // The generator is seeded from (seed, reader id, reader call) and built in
  // place: a copy of one just built stalls on store forwarding.
  // `rng_prefix`: MixHashPrefix(seed, 0xca11, reader id), the reader's.
  RandomHooks(const World& w, const ReaderSpec* spec, CallRecord* rec,
              uint64_t rng_prefix, uint64_t reader_call, bool tracing, int cpu)
      : w_(w),
        spec_(spec),
        t_(w.scenario->timing),
        rec_(rec),
        rng_(Rng::DeferredFromPrefix(rng_prefix, reader_call)),
        tracing_(tracing),
        preempt_(w.scenario->timing.preempt_ppm != 0),
        migrate_midcall_(spec->migrate_midcall_ppm != 0),
        reorder_ppm_(w.load_reorder_ppm),
        preempt_ppm_(w.scenario->timing.preempt_ppm),
        migrate_midcall_ppm_(spec->migrate_midcall_ppm),
        cpus_(w.machine->cpus()),
        load_ns_(w.scenario->timing.load_ns),
        cpu_(cpu),
        due_at_(w.view->DueAt()),
        loads_(w.variant->layout) {
    lane().now = rec->start_ns;
    lane().load_ns = load_ns_;
    UpdateLimit();
  }

  // The earliest time an unordered counter read may run at: when the
  // reader's previous call ended (0 for its first call).
  void set_counter_floor(uint64_t ns) { counter_floor_ns_ = ns; }

  void BeforeLoad(uint32_t offset, uint32_t size) override {
    if (reorder_ppm_ != 0) Reorderable();
    Step(load_ns_);
    if (reorder_ppm_ != 0) MaybeReorder(offset, size);
    const uint64_t value =
        loads_.OnLoad(w_.page, offset, size, lane().now, rec_);
    if (tracing_) TraceLoad(offset, value);
  }

  uint64_t ReadCounter(vdso::CounterRead kind) override {
    if (reorder_ppm_ != 0) Reorderable();
    Step(t_.counter_read_ns);
    // Not a barrier, whatever its kind: rdtsc_ordered()'s asm has no
    // "memory" clobber, so a compiler may move plain loads across it.
    // An unordered counter read: the CPU ran it early, up to speculation_ns
    // before the read's seq load, instead of after the loads that precede
    // it; before the call began too (past the loads its caller made, such
    // as one that saw another reader's call end: causality), but not
    // before the reader's previous call ended, so one reader's counter
    // reads stay in program order.
    uint64_t at = lane().now;
    if (internal::MayReadEarly(kind,
                               w_.scenario->faults.unordered_counter_read)) {
      const uint64_t early =
          rng_.InRange(0, w_.scenario->faults.speculation_ns);
      const uint64_t seq_ns = loads_.last_seq_ns();
      at = seq_ns > early ? seq_ns - early : 0;
      at = std::max(at, counter_floor_ns_);
      rec_->counter_fence_broken = kind != vdso::CounterRead::kPlain;
    }
    const uint64_t c = w_.machine->Counter(cpu_, at);
    rec_->read_counter = true;
    rec_->counter = c;
    rec_->read_bit63 = static_cast<int64_t>(c) < 0;
    rec_->counter_cpu = cpu_;
    rec_->counter_ns = at;
    rec_->counter_step_ns = lane().now;
    if (tracing_) {
      page_at_counter_ = w_.variant->layout->DescribePage(w_.page, true);
      Trace(
          absl::StrFormat("counter read on CPU %d at %d ns = %#x", cpu_, at, c),
          TraceStep::Kind::kCounter)
          .value = c;
    }
    return c;
  }

  bool MayRetry() override {
    if (reorder_ppm_ != 0) Reorderable();
    if (++rec_->iterations > w_.scenario->checks.livelock_budget) return false;
    // A reader spinning on an odd seq waits for the writer, and one
    // retrying its pvclock read while the hypervisor's rewrite is in
    // progress (an odd version on the page) for the hypervisor: jump to
    // the next store rather than burning the budget one load at a time.
    // (A seq retry during a rewrite jumps too: the interleavings it skips
    // are the exhaustive strategy's.)
    if ((loads_.last_seq() & 1) != 0 || PvclockRewriteInProgress()) {
      if (const TimedStore* next = w_.view->NextPending()) {
        if (next->visible_ns > lane().now) lane().now = next->visible_ns;
        Step(0);
      }
    }
    return true;
  }

  ClockResult Fallback(ClockId clock) override {
    if (reorder_ppm_ != 0) Reorderable();
    rec_->fell_back = true;
    // Past the loop budget the call is a livelock finding (the checker):
    // its further system calls take no simulated time, so that a reader
    // calling the fallback in a loop cannot spend the run's duration in
    // one call and leave everything else unchecked.
    const bool over_budget =
        ++rec_->fallbacks > w_.scenario->checks.livelock_budget;
    Step(over_budget ? 0 : t_.syscall_ns);
    if (reorder_ppm_ != 0) Barrier();  // A system call orders everything.
    // The syscall waits out an update in progress, then reads that state.
    const UpdateRecord& u = w_.writer->LatestStartedAt(lane().now);
    if (u.end_ns > lane().now) {
      lane().now = u.end_ns;
      Step(0);
    }
    timekeeper::SyscallContext ctx;
    ctx.cycles = w_.writer->SyscallCounter(u, cpu_, lane().now);
    ctx.has_rtc = w_.scenario->kernel.has_rtc;
    ctx.aux_timekeepers = w_.writer->AuxStatesAt(lane().now);
    // A task in the namespace: clock_gettime() adds its offsets.
    ctx.timens = spec_->timens ? w_.timens : nullptr;
    ctx.thread_cputime_ns = static_cast<int64_t>(lane().now / 4);
    ctx.process_cputime_ns = static_cast<int64_t>(lane().now / 2);
    rec_->read_counter = true;
    rec_->counter = ctx.cycles;
    rec_->counter_cpu = cpu_;
    rec_->counter_ns = lane().now;
    rec_->counter_step_ns = lane().now;
    rec_->fallback_update = u.id;
    const ClockResult r = variants::VariantSyscall(
        *w_.variant, w_.writer->publish_context(), u.tk, clock, ctx);
    rec_->fallback_result = r;
    rec_->fallback_clock = clock;
    if (tracing_) {
      Trace(absl::StrFormat("syscall fallback on update %d at counter %#x: %s",
                            u.id, ctx.cycles, FormatClockResult(r)),
            TraceStep::Kind::kFallback);
    }
    return r;
  }

  void OnFault(const vdso::CallFault& fault) override {
    if (reorder_ppm_ != 0) Reorderable();
    rec_->fault = fault;
    if (tracing_) {
      NoteDropped();
      Trace(vdso::DescribeFault(fault), TraceStep::Kind::kFault);
    }
  }

  // The call has returned: the page as the writer left it, for the
  // checker and the rollback.
  void Finish() {
    if (reorder_ppm_ != 0) Reorderable();
    if (tracing_) NoteDropped();
  }

  uint64_t now() { return lane().now; }
  // Shared with HookedAccess, which notes loads inline (vdso::LoadLane).
  vdso::LoadLane& lane() { return loads_.lane(); }
  int cpu() const { return cpu_; }
  std::string page_at_counter() const { return page_at_counter_; }

 private:
  bool PvclockRewriteInProgress() const {
    if (w_.writer->hypervisor() == nullptr) return false;
    uint32_t version;
    std::memcpy(&version,
                w_.page + vdso::kPvclockPageOffset + vdso::kPvtiVersion,
                sizeof version);
    return (version & 1) != 0;
  }

  // Before every load and counter read: the common case (no injection,
  // nothing due) is a few inline compares; the rest is out of line.
  // The draws stay inline (a call per step was a third of an injected
  // read); what they decide is out of line.
  void Step(uint64_t cost) {
    if (preempt_ && rng_.Below(1000000) < preempt_ppm_) Preempt();
    lane().now += cost;
    if (migrate_midcall_ && cpus_ > 1 &&
        rng_.Below(1000000) < migrate_midcall_ppm_) {
      Migrate();
    }
    if (lane().now < due_at_) return;  // PageView::NothingDueBy(now).
    ApplyDue();
  }

  // Loads may stay inline (vdso::LoadLane) while they land before the
  // next store is due, and only when nothing is injected or traced: those
  // need this class's BeforeLoad at every load.
  void UpdateLimit() {
    lane().limit = preempt_ || migrate_midcall_ || tracing_ || reorder_ppm_ != 0
                       ? 0
                       : due_at_;
  }

  // Relaxed ordering (faults.reorder_ppm). First thing in every hook: the
  // page back as the writer left it after a reordered load, and a barrier
  // executed since the last hook noted (no store lands between a barrier
  // and the next hook, so the page's state then is the state at it).
  void Reorderable() {
    if (stale_) {
      w_.view->EndStale();
      stale_ = false;
    }
    if (barriers() != barriers_seen_) {
      barriers_seen_ = barriers();
      Barrier();
    }
  }
  // Loads after this point see at least every store landed by now.
  void Barrier() {
    floor_ = w_.view->applied();
    seen_.clear();
  }
  // Draws whether this load sees an earlier page state: one after any of
  // the stores landed since the last barrier, but no earlier than what a
  // load of the same bytes since then saw.
  [[gnu::noinline]] void MaybeReorder(uint32_t offset, uint32_t size) {
    size_t lo = floor_;
    for (const SeenLoad& l : seen_) {
      if (l.offset < offset + size && offset < l.offset + l.size) {
        lo = std::max(lo, l.version);
      }
    }
    size_t version = w_.view->applied();
    if (lo < version && size <= PageView::kMaxStaleBytes &&
        rng_.Below(1000000) < reorder_ppm_) {
      version = lo + rng_.Below(version - lo);
      w_.view->ShowStale(version, offset, size);
      stale_ = true;
      ++rec_->reordered_loads;
      if (tracing_) {
        Trace(absl::StrFormat("  (reordered: the next load sees the page as "
                              "it was before the last %d stores of this call)",
                              w_.view->applied() - version),
              TraceStep::Kind::kReorder);
      }
    }
    seen_.push_back(SeenLoad{offset, size, version});
  }

  [[gnu::noinline]] void TraceLoad(uint32_t offset, uint64_t value) {
    TraceStep& t =
        Trace(loads_.Describe(offset, value), TraceStep::Kind::kLoad);
    t.field = w_.variant->layout->DescribeOffset(offset);
    t.value = value;
    t.seq = loads_.IsSeq(offset);
  }

  // A preemption at this step (drawn in Step()).
  [[gnu::noinline]] void Preempt() {
    lane().now += rng_.InRange(0, t_.preempt_max_ns);
    if (w_.writer->InPause(lane().now))
      lane().now = w_.writer->PauseEnd(lane().now);
    rec_->preempted = true;
    if (tracing_) Trace("preempted", TraceStep::Kind::kPreempt);
  }

  // A migration at this step (drawn in Step()).
  [[gnu::noinline]] void Migrate() {
    const int to = static_cast<int>(
        rng_.Below(static_cast<uint64_t>(w_.machine->cpus() - 1)));
    const int from = cpu_;
    cpu_ = to >= cpu_ ? to + 1 : to;
    rec_->migrated_midcall = true;
    if (tracing_) {
      Trace(absl::StrFormat("migrated CPU %d -> %d", from, cpu_),
            TraceStep::Kind::kMigrate);
    }
  }

  [[gnu::noinline]] void ApplyDue() {
    const size_t before = w_.view->applied();
    const uint32_t n = w_.view->ApplyThrough(lane().now);
    due_at_ = w_.view->DueAt();
    UpdateLimit();
    rec_->stores_during += n;
    if (w_.writer->hypervisor() != nullptr) {
      for (size_t i = before; i < before + n; ++i) {
        if (IsPvclockUpdateId(w_.writer->pending()[i].update)) {
          ++rec_->pvclock_stores_during;
        }
      }
    }
    if (tracing_ && n != 0) {
      for (size_t i = before; i < before + n; ++i) {
        const TimedStore& s = w_.writer->pending()[i];
        TraceStep& t =
            Trace(absl::StrFormat("  writer (%s) at %d ns: %s",
                                  UpdateLabel(s.update), s.visible_ns,
                                  w_.variant->layout->DescribeStore(s.store)),
                  TraceStep::Kind::kStore);
        t.field = w_.variant->layout->DescribeOffset(s.store.offset);
        t.value = s.store.value;
        t.update = s.update;
        t.seq = w_.variant->layout->IsSeq(s.store.offset);
      }
    }
  }

  // A traced call keeps its first kMaxTraceSteps steps: foreign code that
  // spins through the load callbacks until the watchdog stops it makes
  // millions, whose strings would cost the run its memory and, freed, the
  // allocator a pause that the next contained call would pay for. A
  // built-in reader that spends the whole livelock budget (10,000
  // iterations of a dozen steps at most) stays within it.
  static constexpr size_t kMaxTraceSteps = 200000;
  TraceStep& Trace(std::string what, TraceStep::Kind kind) {
    if (rec_->trace.size() >= kMaxTraceSteps &&
        kind != TraceStep::Kind::kFault) {
      ++dropped_steps_;
      discarded_ = TraceStep{};
      return discarded_;
    }
    TraceStep step;
    step.t_ns = lane().now;
    step.cpu = cpu_;
    step.what = std::move(what);
    step.kind = kind;
    rec_->trace.push_back(std::move(step));
    return rec_->trace.back();
  }

  // Says how many steps the cap left out, once, at the call's end.
  void NoteDropped() {
    if (dropped_steps_ == 0) return;
    TraceStep step;
    step.t_ns = lane().now;
    step.cpu = cpu_;
    step.what = absl::StrFormat("(%d more steps not recorded)", dropped_steps_);
    step.kind = TraceStep::Kind::kLoad;
    rec_->trace.push_back(std::move(step));
    dropped_steps_ = 0;
  }

  const World& w_;
  const ReaderSpec* spec_;
  const TimingSpec& t_;
  uint64_t dropped_steps_ = 0;
  TraceStep discarded_;
  CallRecord* rec_;
  Rng rng_;
  bool tracing_;
  // Copied from the scenario: read before every load.
  bool preempt_;
  bool migrate_midcall_;
  uint32_t reorder_ppm_;
  uint32_t preempt_ppm_;
  uint32_t migrate_midcall_ppm_;
  // Relaxed ordering's state: a load is showing an earlier state; the
  // barriers noted; the page state loads may go back to; the loads since.
  struct SeenLoad {
    uint32_t offset;
    uint32_t size;
    size_t version;
  };
  bool stale_ = false;
  uint64_t barriers_seen_ = 0;
  size_t floor_ = 0;
  std::vector<SeenLoad> seen_;
  int cpus_;
  uint64_t load_ns_;
  int cpu_;
  uint64_t due_at_;  // PageView::DueAt(), kept between ApplyDue()s.
  uint64_t counter_floor_ns_ = 0;
  // Its lane holds the call's true time and the seq records.
  internal::LoadObserver loads_;
  std::string page_at_counter_;
};

// A CPU's counter for vdso::QuietAccess: Machine::Counter() is inline, so
// a quiet call's counter read is one indirect call.
struct CpuCounter {
  const Machine* machine;
  int cpu;
};
uint64_t ReadCpuCounter(const void* ctx, uint64_t t_ns) {
  const auto* c = static_cast<const CpuCounter*>(ctx);
  return c->machine->Counter(c->cpu, t_ns);
}

// Which calls first try vdso::QuietAccess (nothing but time can happen in
// them), and how the tries went, per clock: a clock whose calls keep
// stepping out (the syscall, a bare rdtsc) stops being tried, which changes
// nothing but speed (every aborted try is run again through the hooks).
class QuietCalls {
 public:
  QuietCalls(const Scenario& s, const variants::SimReader& reader,
             const variants::Layout& layout, const uint8_t* page, bool on)
      : on_(on && reader.has_quiet_build() && s.timing.preempt_ppm == 0) {
    setup_.page = page;
    setup_.seq_start = layout.seq_starts().data();
    setup_.seq_start_size = layout.seq_starts().size();
    setup_.load_ns = s.timing.load_ns;
    setup_.counter_read_ns = s.timing.counter_read_ns;
    setup_.counter = ReadCpuCounter;
    for (vdso::CounterRead kind :
         {vdso::CounterRead::kOrdered, vdso::CounterRead::kRdtscp,
          vdso::CounterRead::kPlain}) {
      if (internal::MayReadEarly(kind, s.faults.unordered_counter_read)) {
        setup_.early_kinds |=
            static_cast<uint8_t>(1u << static_cast<int>(kind));
      }
    }
  }
  bool Try(const ReaderSpec& spec, ClockId clock, bool tracing) const {
    return on_ && spec.migrate_midcall_ppm == 0 && !spec.timens && !tracing &&
           Stats(clock).on;
  }
  void Count(ClockId clock, bool completed) {
    ClockStats& c = Stats(clock);
    ++c.tries;
    // Off once half of 64 or more tries aborted. A completed try only
    // lowers the share, so the test can newly hold at the 64th try or
    // after an abort (a clock that is off is not tried, nor counted).
    if (completed && c.tries != 64) return;
    if (!completed) ++c.aborts;
    if (c.tries >= 64 && c.aborts * 2 > c.tries) c.on = false;
  }
  const vdso::QuietAccess::Setup& setup() const { return setup_; }

 private:
  struct ClockStats {
    bool on = true;
    uint64_t tries = 0;
    uint64_t aborts = 0;
  };
  // Clock ids past the table (CPU clocks, bad ids) share its last entry.
  ClockStats& Stats(ClockId clock) {
    return stats_[clock >= 0 && clock < kClocks ? static_cast<size_t>(clock)
                                                : kClocks];
  }
  const ClockStats& Stats(ClockId clock) const {
    return stats_[clock >= 0 && clock < kClocks ? static_cast<size_t>(clock)
                                                : kClocks];
  }
  static constexpr ClockId kClocks = 64;

  bool on_;
  vdso::QuietAccess::Setup setup_;
  std::array<ClockStats, kClocks + 1> stats_{};
};

Retained Sample(const Writer& writer, const Checker& checker) {
  Retained r;
  r.updates = writer.retained_updates();
  r.aux_records = writer.retained_aux_records();
  r.stores = writer.retained_stores();
  r.checker_states = checker.retained_states();
  r.divergence_points = checker.retained_divergence_points();
  r.violations = checker.violations().size();
  r.outcomes = writer.outcomes().size();
  r.pvclock_states =
      writer.hypervisor() != nullptr ? writer.hypervisor()->retained() : 0;
  return r;
}

struct ReaderState {
  int index = 0;
  int id = 0;
  int cpu = 0;
  uint64_t next_start = 0;
  uint64_t last_end = 0;  // When its previous call ended.
  uint64_t calls = 0;
  size_t turn = 0;  // calls % (clocks it calls in turn).
  // MixHashPrefix(seed, tag, id) of its per-call generators' seeds: the
  // hooks' (0xca11) and the draws between calls (0xbe7).
  uint64_t hooks_rng_prefix = 0;
  uint64_t between_rng_prefix = 0;
};

struct Later {
  bool operator()(const ReaderState* a, const ReaderState* b) const {
    return a->next_start != b->next_start ? a->next_start > b->next_start
                                          : a->index > b->index;
  }
};

// Word by word (ClockResult::CopyByWords()): the callee stored the result
// in parts, and a whole copy's wider loads would stall on store forwarding.
void SetResult(const std::optional<ClockResult>& answer, CallRecord* rec) {
  if (answer) rec->result.emplace(ClockResult::CopyByWords(*answer));
}

// Tries `rec`'s call through vdso::QuietAccess: true if it completed (and
// `rec` then holds what the hooks would have recorded: no store, no
// preemption, no migration, no retry, the counter read at its true time),
// false if it must run through the hooks. Nothing outside the attempt
// changes either way: no store is due before the limit, so the page and the
// writer are as the call found them.
// Inlined into its one caller: out of line (as RunRandom() grew) its
// call and spills cost ~40 instructions of a ~1400-instruction read.
[[gnu::always_inline]] inline bool QuietCall(
    variants::SimReader& reader, const Machine& machine, const PageView& view,
    QuietCalls& quiet, const uint8_t* page, int cpu, CallRecord* rec) {
  const CpuCounter counter{&machine, cpu};
  vdso::QuietAccess access(quiet.setup(), rec->start_ns, view.DueAt(),
                           &counter);
  const std::optional<ClockResult> answer =
      reader.QuietCall(access, page, rec->clock);
  quiet.Count(rec->clock, access.completed());
  if (!access.completed()) return false;
  SetResult(answer, rec);
  rec->end_ns = access.now();
  rec->begin_seq = access.begin_seq();
  rec->cpu_end = cpu;
  if (access.read_counter()) {
    rec->read_counter = true;
    rec->counter = access.counter();
    rec->counter_cpu = cpu;
    rec->counter_ns = access.counter_ns();
    rec->counter_step_ns = access.counter_ns();  // Quiet reads are ordered.
  }
  return true;
}

}  // namespace

void Retained::Max(const Retained& o) {
  updates = std::max(updates, o.updates);
  aux_records = std::max(aux_records, o.aux_records);
  stores = std::max(stores, o.stores);
  checker_states = std::max(checker_states, o.checker_states);
  divergence_points = std::max(divergence_points, o.divergence_points);
  violations = std::max(violations, o.violations);
  outcomes = std::max(outcomes, o.outcomes);
  pvclock_states = std::max(pvclock_states, o.pvclock_states);
}

bool UsesTimens(const Scenario& scenario) {
  for (const ReaderSpec& r : scenario.readers) {
    if (r.timens) return true;
  }
  return false;
}

absl::Status CheckTimensSupport(const Scenario& scenario,
                                const variants::Variant& variant) {
  if (variant.timens && variant.build_timens_page != nullptr) {
    return absl::OkStatus();
  }
  for (size_t i = 0; i < scenario.readers.size(); ++i) {
    if (!scenario.readers[i].timens) continue;
    return absl::FailedPreconditionError(absl::StrFormat(
        "reader[%d].timens: variant %s does not model time namespaces "
        "(VDSO_CLOCKMODE_TIMENS): it cannot run a reader with timens = true",
        i, variant.name));
  }
  return absl::OkStatus();
}

std::vector<ClockId> ClocksFor(const ReaderSpec& reader,
                               const variants::Variant& variant) {
  std::vector<ClockId> clocks;
  if (!variant.own_clocks_only) {
    clocks = reader.clocks;
  } else if (!reader.own_clocks) {
    for (ClockId c : reader.clocks) {
      if (variants::FindOwnClock(variant, c) != nullptr) clocks.push_back(c);
    }
  }
  if (reader.own_clocks || clocks.empty()) {
    for (const variants::ClockDef& c : variant.own_clocks) {
      // Once, where the scenario lists it too.
      if (std::find(clocks.begin(), clocks.end(), c.id) == clocks.end()) {
        clocks.push_back(c.id);
      }
    }
  }
  if (clocks.empty()) clocks = reader.clocks;
  return clocks;
}

absl::StatusOr<RunResult> RunRandom(const Scenario& scenario,
                                    const variants::Variant& variant,
                                    const RandomOptions& options) {
  if (absl::Status s = ValidateScenario(scenario); !s.ok()) return s;
  if (absl::Status t = CheckTimensSupport(scenario, variant); !t.ok()) {
    return t;
  }
  const bool timens = UsesTimens(scenario);
  const uint64_t seed = scenario.run.seed;
  Machine machine(scenario.machine, seed);
  absl::StatusOr<std::unique_ptr<vdso::VvarPage>> page_or =
      timens ? vdso::VvarPage::CreateWithTimensView()
             : vdso::VvarPage::Create();
  if (!page_or.ok()) return page_or.status();
  std::unique_ptr<vdso::VvarPage> page = std::move(*page_or);
  const timekeeper::TimensOffsets offsets{scenario.kernel.timens_monotonic,
                                          scenario.kernel.timens_boottime};
  if (timens) {
    // timens_set_vvar_page(): the namespace's page, once, before its
    // first task runs.
    page->ApplyTimens(variant.build_timens_page(offsets));
  }
  absl::StatusOr<std::unique_ptr<Writer>> writer_or =
      Writer::Create(scenario, &machine, page.get(), &variant);
  if (!writer_or.ok()) return writer_or.status();
  std::unique_ptr<Writer> writer = std::move(*writer_or);
  PageView view(page.get(), writer.get());
  Checker checker(scenario, &machine, writer.get(), &variant);
  checker.AcceptKnown(options.accept_known);
  SettledPage settled(scenario, variant, *writer);
  checker.SetSettledAnswers(&settled);
  std::unique_ptr<variants::SimReader> reader = variant.make_sim_reader();
  World world{
      &scenario, &variant,
      &machine,  writer.get(),
      &view,     page->data(),
      &offsets,  reader->reports_barriers() ? scenario.faults.reorder_ppm : 0};
  QuietCalls quiet_calls(scenario, *reader, *variant.layout, page->data(),
                         options.quiet_calls);
  EntryPointProbe probe(scenario, variant, reader.get(), &machine,
                        writer.get());
  // Tested once here: the built-in readers have no other entry points.
  const bool probing = probe.enabled();
  RunResult result;

  std::vector<ReaderState> readers(scenario.readers.size());
  std::vector<std::vector<ClockId>> clocks;
  for (const ReaderSpec& spec : scenario.readers) {
    clocks.push_back(ClocksFor(spec, variant));
  }
  std::priority_queue<ReaderState*, std::vector<ReaderState*>, Later> queue;
  for (size_t i = 0; i < readers.size(); ++i) {
    ReaderState& r = readers[i];
    r.index = static_cast<int>(i);
    r.id = ReaderId(scenario, i);
    r.cpu = scenario.readers[i].cpu;
    // Stagger the first calls across one period.
    r.next_start = MixHash(seed, 0x57a6, static_cast<uint64_t>(r.id)) %
                   scenario.readers[i].period_ns;
    r.hooks_rng_prefix =
        MixHashPrefix(seed, 0xca11, static_cast<uint64_t>(r.id));
    r.between_rng_prefix =
        MixHashPrefix(seed, 0xbe7, static_cast<uint64_t>(r.id));
    queue.push(&r);
  }

  uint64_t call_index = 0;
  uint64_t spins = 0;
  uint64_t livelocks_in_a_row = 0;
  // The same per clock id below 64: a reader stuck on one clock only (a
  // broken coarse path) interleaves its abandoned calls with good ones.
  std::array<uint32_t, 64> clock_livelocks_in_a_row{};
  CallRecord rec;  // Reused: CallRecord::Reset().
  const uint64_t duration = scenario.run.duration_ns;
  while (!queue.empty()) {
    ReaderState* r = queue.top();
    queue.pop();
    const ReaderSpec& spec = scenario.readers[static_cast<size_t>(r->index)];
    uint64_t start = r->next_start;
    if (writer->InPause(start)) start = writer->PauseEnd(start);
    if (start >= duration) continue;
    if (options.stop != nullptr && options.stop->load()) {
      result.stopped_early = true;
      result.interrupted = true;
      result.stop_reason = "interrupted";
      break;
    }
    view.CommitThrough(start);
    writer->Retire(start);
    // A kernel tree's timekeeper that crashed or spun in an operation
    // published nothing a kernel would after it (a kernel would have
    // oopsed); one that differs from the model publishes pages the model's
    // oracle no longer describes. Either way the reader calls from here on
    // would fail against the model for the tree's sake (a new user's
    // ntp_error sign flip was blamed on the reader as exact and torn), so
    // the run stops and the tree is the finding.
    if (writer->tree_stops_run()) [[unlikely]] {
      result.stopped_early = true;
      result.stop_reason =
          writer->tree_faulted()
              ? absl::StrFormat(
                    "the kernel tree's timekeeper faulted (%s): "
                    "a kernel would not go on",
                    writer->tree_difference())
              : absl::StrFormat(
                    "the kernel tree's timekeeper differs from the model "
                    "(%s): past it the readers would be judged against a "
                    "model the page no longer follows",
                    writer->tree_difference());
      break;
    }

    Rng between = Rng::DeferredFromPrefix(r->between_rng_prefix, r->calls);
    rec.Reset();
    if (spec.migrate_ppm != 0 && machine.cpus() > 1 &&
        between.Below(1000000) < spec.migrate_ppm) {
      const int to = static_cast<int>(
          between.Below(static_cast<uint64_t>(machine.cpus() - 1)));
      r->cpu = to >= r->cpu ? to + 1 : to;
      rec.migrated_before = true;
    }

    rec.index = call_index++;
    rec.reader = r->id;
    rec.reader_call = r->calls;
    const std::vector<ClockId>& turn = clocks[static_cast<size_t>(r->index)];
    rec.clock = turn[r->turn];  // turn[calls % size], without a division.
    if (++r->turn == turn.size()) r->turn = 0;
    rec.start_ns = start;
    rec.cpu_start = r->cpu;
    const bool tracing = options.trace_call &&
                         options.trace_call->first == r->id &&
                         options.trace_call->second == r->calls;
    rec.timens = spec.timens;
    if (probing && probe.Due(start)) [[unlikely]] {
      // Before the call, on its reader's CPU and view: the page holds one
      // update whole.
      const std::vector<EntryPointVerdict> verdicts =
          probe.Run(page->data(), spec.timens ? page->timens_data() : nullptr,
                    page->size(), r->cpu, start);
      // A spin there cost the watchdog's bound like a call's (the probe
      // does not try that entry point again).
      for (const EntryPointVerdict& v : verdicts) spins += v.watchdog_stopped;
      checker.OnEntryPoints(verdicts, rec);
    }
    if (quiet_calls.Try(spec, rec.clock, tracing) &&
        QuietCall(*reader, machine, view, quiet_calls, page->data(), r->cpu,
                  &rec)) {
      ++result.quiet_calls;
      internal::ResolveKvmClock(*writer, variant, &rec);
    } else {
      RandomHooks hooks(world, &spec, &rec, r->hooks_rng_prefix, r->calls,
                        tracing, r->cpu);
      hooks.set_counter_floor(r->last_end);
      vdso::HookedAccess access =
          spec.timens ? vdso::HookedAccess(page->data(), &hooks,
                                           page->timens_data(), page->size())
          : options.inline_loads
              ? vdso::HookedAccess(page->data(), &hooks, &hooks.lane())
              : vdso::HookedAccess(page->data(), &hooks);
      const std::optional<ClockResult> answer = reader->Call(
          access, spec.timens ? page->timens_data() : page->data(), rec.clock);
      hooks.Finish();
      SetResult(answer, &rec);
      rec.end_ns = hooks.now();
      // Loads noted inline left their seq in the lane only.
      rec.begin_seq = hooks.lane().begin_seq;
      rec.cpu_end = hooks.cpu();
      internal::ResolveKvmClock(*writer, variant, &rec);
      if (tracing) {
        result.traced = rec;
        result.traced_page = hooks.page_at_counter();
      }
      view.Rollback();
    }
    checker.OnCall(rec);

    r->cpu = rec.cpu_end;
    r->last_end = rec.end_ns;
    ++r->calls;
    r->next_start = rec.end_ns + spec.period_ns +
                    (spec.period_jitter_ns == 0
                         ? 0
                         : between.InRange(0, spec.period_jitter_ns));
    queue.push(r);
    result.simulated_ns = start;
    // Sampled, not kept exact: a few compares per call would be a few
    // percent of a read, and the counts change slowly.
    if ((call_index & 0xff) == 0) result.retained.Max(Sample(*writer, checker));
    if (options.progress && (call_index & 0xffff) == 0) {
      uint64_t failures = 0;
      for (const PropertyStats& st : checker.stats()) {
        failures += st.defects + st.known_kernel;
      }
      options.progress(start, duration, call_index, failures);
    }
    if (rec.fault && rec.fault->kind == vdso::CallFault::Kind::kSpin &&
        ++spins >= options.max_spins) {
      result.stopped_early = true;
      result.stop_reason = absl::StrFormat(
          "%d calls spun, blocked or ran past a quarter of the time bound",
          spins);
      break;
    }
    // Abandoned after the loop budget (Checker: "the reader kept looping").
    const bool looped = !rec.fault && !rec.result;
    livelocks_in_a_row = looped ? livelocks_in_a_row + 1 : 0;
    uint32_t clock_run = 0;
    if (rec.clock >= 0 &&
        static_cast<size_t>(rec.clock) < clock_livelocks_in_a_row.size()) {
      uint32_t& n = clock_livelocks_in_a_row[static_cast<size_t>(rec.clock)];
      n = looped ? n + 1 : 0;
      clock_run = n;
    }
    const uint64_t limit = options.max_livelocks_in_a_row;
    if (livelocks_in_a_row >= limit || clock_run >= limit) {
      result.stopped_early = true;
      result.stop_reason =
          livelocks_in_a_row >= limit
              ? absl::StrFormat(
                    "%d calls in a row spent their loop budget: the reader "
                    "makes no progress",
                    livelocks_in_a_row)
              : absl::StrFormat(
                    "%d calls of %s in a row spent their loop budget: the "
                    "reader makes no progress on that clock",
                    clock_run, ClockShortName(rec.clock));
      break;
    }
    if (options.stop_after_call &&
        options.stop_after_call->first == rec.reader &&
        options.stop_after_call->second == rec.reader_call) {
      break;
    }
    if (options.stop_at_first_failure && checker.HasFailure()) {
      result.stopped_early = true;
      break;
    }
  }
  if (!result.stopped_early) result.simulated_ns = duration;
  result.retained.Max(Sample(*writer, checker));
  result.stats = checker.stats();
  result.coverage = checker.coverage();
  result.expected_shortcut = checker.expected_shortcut();
  result.violations = checker.violations();
  result.divergence = checker.divergence();
  result.updates = writer->latest_update();
  result.outcomes = writer->outcomes();
  result.failed = checker.HasFailure();
  for (const EventOutcome& o : result.outcomes) {
    if (!o.mismatches.empty()) result.failed = true;
  }
  result.timekeeper_findings = writer->timekeeper_findings();
  if (!result.timekeeper_findings.empty()) result.failed = true;
  if (variant.timekeeping != nullptr) {
    result.timekeeping = variant.timekeeping->name;
    result.timekeeping_operations = writer->tree_operations();
    result.timekeeping_difference = writer->tree_difference();
    if (!result.timekeeping_difference.empty()) result.failed = true;
  }
  return result;
}

}  // namespace vdsolab::sim
