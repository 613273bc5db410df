#include "sim/exhaustive.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "common/math64.h"
#include "sim/entry_points.h"
#include "sim/kvm_counter.h"
#include "sim/load_observer.h"
#include "sim/machine.h"
#include "sim/page_view.h"
#include "sim/settled_page.h"
#include "sim/writer.h"
#include "timekeeper/posix_clocks.h"
#include "vdso/datapage.h"

namespace vdsolab::sim {
namespace {

bool Overlaps(const vdso::VvarStore& s, uint32_t offset, uint32_t size) {
  return s.offset < offset + size && offset < s.offset + s.size;
}

// A clock's whole seconds at the start of update `id`'s state: its base,
// the value at cycle_last (what the page's basetime sec holds for a
// fine clock, and the coarse clocks' whole value).
std::optional<int64_t> SecondsOf(const UpdateRecord& u, ClockId clock) {
  timekeeper::SyscallContext ctx;
  ctx.cycles = u.tk.tkr_mono.cycle_last;
  const ClockResult r = timekeeper::SysClockGettime(u.tk, clock, ctx);
  if (r.ret != 0) return std::nullopt;
  return r.ts.tv_sec;
}

// Whether one of the first `want` pending updates moves a clock of
// `clocks` into another second than the state before it.
bool WindowCrossesSecond(const Writer& writer, uint32_t want,
                         const std::vector<ClockId>& clocks) {
  std::set<uint32_t> ids;
  for (const TimedStore& ts : writer.pending()) {
    if (ids.size() == want && ids.count(ts.update) == 0) break;
    if (!ids.insert(ts.update).second) continue;
    const UpdateRecord* before = writer.Update(ts.update - 1);
    const UpdateRecord* after = writer.Update(ts.update);
    if (before == nullptr || after == nullptr) continue;
    for (ClockId c : clocks) {
      const std::optional<int64_t> a = SecondsOf(*before, c);
      const std::optional<int64_t> b = SecondsOf(*after, c);
      if (a && b && *a != *b) return true;
    }
  }
  return false;
}

// The world one exploration runs in: the page just before the raced
// updates, and those updates' stores.
struct Setup {
  std::unique_ptr<Machine> machine;
  std::unique_ptr<vdso::VvarPage> page;
  std::unique_ptr<Writer> writer;
  std::unique_ptr<PageView> view;
  // The namespace of readers with timens = true (kernel.timens_*).
  timekeeper::TimensOffsets timens;
  uint64_t start_ns = 0;
  size_t stores = 0;  // How many pending stores the explored updates have.
  uint32_t updates = 0;
  // Asked before a call is reported torn (sim/settled_answers.h): a page
  // of its own, made at the first question.
  std::unique_ptr<SettledPage> settled;
};

absl::StatusOr<Setup> MakeSetup(const Scenario& s,
                                const variants::Variant& variant) {
  if (absl::Status v = ValidateScenario(s); !v.ok()) return v;
  Setup w;
  w.machine = std::make_unique<Machine>(s.machine, s.run.seed);
  if (absl::Status t = CheckTimensSupport(s, variant); !t.ok()) return t;
  const bool timens = UsesTimens(s);
  absl::StatusOr<std::unique_ptr<vdso::VvarPage>> page =
      timens ? vdso::VvarPage::CreateWithTimensView()
             : vdso::VvarPage::Create();
  if (!page.ok()) return page.status();
  w.page = std::move(*page);
  w.timens = {s.kernel.timens_monotonic, s.kernel.timens_boottime};
  // timens_set_vvar_page(): once, before the namespace's first task.
  if (timens) w.page->ApplyTimens(variant.build_timens_page(w.timens));
  absl::StatusOr<std::unique_ptr<Writer>> writer =
      Writer::Create(s, w.machine.get(), w.page.get(), &variant);
  if (!writer.ok()) return writer.status();
  w.writer = std::move(*writer);
  w.view = std::make_unique<PageView>(w.page.get(), w.writer.get());
  w.start_ns = s.run.exhaustive_at_ns;
  w.view->CommitThrough(w.start_ns);
  // Let the writer run until k whole updates are pending.
  const uint64_t tick = kNsecPerSec / static_cast<uint64_t>(s.kernel.hz);
  const uint32_t want = static_cast<uint32_t>(s.run.exhaustive_updates);
  uint64_t t = w.start_ns;
  const auto fill = [&] {
    for (int guard = 0; guard < 1000000; ++guard) {
      std::set<uint32_t> ids;
      for (const TimedStore& ts : w.writer->pending()) ids.insert(ts.update);
      if (ids.size() > want ||
          (ids.size() == want &&
           t > w.writer->pending().back().visible_ns + tick)) {
        break;
      }
      t += tick;
      w.writer->AdvanceTo(t);
    }
  };
  fill();
  if (s.run.exhaustive_rollover) {
    // A variant's own clocks (user-space TSC clocks) have no basetime the
    // syscall model knows: they do not slide the window. One standing for
    // a kernel clock (ClockDef::same_as) slides it as that clock does.
    std::vector<ClockId> clocks;
    // The first pending update of the timekeeper's (not a hypervisor's
    // pvclock rewrite, which moves no basetime).
    const UpdateRecord* now = nullptr;
    for (const TimedStore& ts : w.writer->pending()) {
      if (IsPvclockUpdateId(ts.update)) continue;
      now = w.writer->Update(ts.update);
      break;
    }
    // The page's seconds, also for a reader in a time namespace: its
    // do_hres_timens() loads the page's basetime and adds the namespace's
    // offset after the seq loop, so a sec loaded outside the loop is a
    // second off where the page's sec moves. The namespace's own second
    // boundary (a fractional offset puts it elsewhere) moves no page field.
    for (const ReaderSpec& r : s.readers) {
      for (ClockId c : ClocksFor(r, variant)) {
        const ClockId judged = variants::JudgedAs(variant, c);
        if (now != nullptr && SecondsOf(*now, judged)) clocks.push_back(judged);
      }
    }
    while (!clocks.empty() && !WindowCrossesSecond(*w.writer, want, clocks)) {
      const absl::Span<const TimedStore> pending = w.writer->pending();
      if (pending.empty() || pending.front().visible_ns >= s.run.duration_ns) {
        return absl::InvalidArgumentError(
            "run.exhaustive_rollover: no update within run.duration carries "
            "a reader's clock into a new second");
      }
      // Commit the window's first update whole; the call starts after it.
      uint64_t end = 0;
      for (const TimedStore& ts : pending) {
        if (ts.update != pending.front().update) break;
        end = ts.visible_ns;
      }
      w.view->CommitThrough(end);
      w.start_ns = end;
      fill();
    }
  }
  std::set<uint32_t> ids;
  for (const TimedStore& ts : w.writer->pending()) {
    if (ids.size() == want && ids.count(ts.update) == 0) break;
    ids.insert(ts.update);
    ++w.stores;
  }
  w.updates = static_cast<uint32_t>(ids.size());
  if (w.updates < want) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "only %d writer update(s) follow run.exhaustive_at within the run",
        w.updates));
  }
  return w;
}

// A state's identity for the reduction: 128 bits folded from 64-bit words
// (two splitmix64 lanes), the same in every process, so reports do not
// depend on a hash seed.
struct StateKey {
  uint64_t a = 0;
  uint64_t b = 0;
  friend bool operator==(const StateKey&, const StateKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const StateKey& k) {
    return H::combine(std::move(h), k.a, k.b);
  }
};

uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Fold {
 public:
  Fold& Add(uint64_t v) {
    key_.a = Mix(key_.a ^ v) + 0x9e3779b97f4a7c15ULL;
    key_.b = Mix(key_.b + v * 0xff51afd7ed558ccdULL) ^ 0xc2b2ae3d27d4eb4fULL;
    return *this;
  }
  Fold& Add(StateKey k) { return Add(k.a).Add(k.b); }
  StateKey key() const { return key_; }

 private:
  StateKey key_{0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL};
};

// Everything of a call the checker reads (all of CallRecord but the trace;
// on a TSC machine counter_step_ns only decides what an unordered read
// is, which counter_ns already says).
StateKey RecordKey(const CallRecord& c, bool kvm) {
  Fold f;
  f.Add(c.index).Add(static_cast<uint64_t>(c.reader)).Add(c.reader_call);
  f.Add(static_cast<uint64_t>(c.clock)).Add(c.start_ns).Add(c.end_ns);
  f.Add(static_cast<uint64_t>(c.cpu_start))
      .Add(static_cast<uint64_t>(c.cpu_end));
  f.Add(c.result.has_value());
  if (c.result) {
    f.Add(static_cast<uint64_t>(c.result->ret))
        .Add(static_cast<uint64_t>(c.result->ts.tv_sec))
        .Add(static_cast<uint64_t>(c.result->ts.tv_nsec));
  }
  f.Add(c.fault.has_value());
  if (c.fault) {
    f.Add(static_cast<uint64_t>(c.fault->kind))
        .Add(static_cast<uint64_t>(c.fault->signal))
        .Add(c.fault->address);
  }
  f.Add(c.fell_back).Add(c.read_counter).Add(c.counter);
  // Only for a fallback after such a read (what property fast_path reads;
  // elsewhere `counter` holds it), so that every other record's key stays.
  if (c.fell_back && c.read_bit63) f.Add(1);
  f.Add(static_cast<uint64_t>(c.counter_cpu)).Add(c.counter_ns);
  if (kvm) f.Add(c.counter_step_ns);
  f.Add(c.begin_seq).Add(c.fallback_update).Add(c.iterations);
  f.Add(static_cast<uint64_t>(c.fallback_result.ret))
      .Add(static_cast<uint64_t>(c.fallback_result.ts.tv_sec))
      .Add(static_cast<uint64_t>(c.fallback_result.ts.tv_nsec));
  f.Add(c.stores_during).Add(c.migrated_before).Add(c.migrated_midcall);
  f.Add(c.preempted).Add(c.timens);
  f.Add(c.pvclock_read).Add(c.pvclock_stores_during);
  return f.key();
}

// The reduction's visited states: who reached each first (the hash of
// the choices before it) and how many plain executions lie below it.
struct StateInfo {
  StateKey prefix;
  uint64_t leaves = 0;
};
using StateCache = absl::flat_hash_map<StateKey, StateInfo>;

// One execution's script, shared by its calls' hooks.
struct ScriptRun {
  const std::vector<int>* script = nullptr;
  std::vector<int> choices;
  std::vector<int> counts;
  uint32_t splits = 0;
  std::string problem;
  // Reduction only (cache set).
  StateCache* cache = nullptr;
  Fold prefix;                  // Of `choices`.
  std::vector<StateKey> path;   // The states this execution owns.
  std::optional<StateKey> cut;  // Reached a state explored before.
};

// Hooks that follow a script of choices, for one call (`reader` is the
// reader's index in the scenario; the call starts at `start_ns`).
class ScriptedHooks : public vdso::AccessHooks {
 public:
  ScriptedHooks(const Scenario& s, const variants::Variant& variant, Setup* w,
                CallRecord* rec, ScriptRun* run, bool tracing, size_t reader,
                uint64_t start_ns, StateKey entry)
      : s_(s),
        variant_(variant),
        w_(w),
        rec_(rec),
        run_(run),
        tracing_(tracing),
        cpu_(s.readers[reader].cpu),
        timens_(s.readers[reader].timens),
        start_ns_(start_ns),
        loads_(variant.layout) {
    history_.Add(entry);
  }

  void BeforeLoad(uint32_t offset, uint32_t size) override {
    std::vector<size_t> options = {Applied()};
    for (size_t i = Applied(); i < w_->stores; ++i) {
      if (Overlaps(Store(i), offset, size)) options.push_back(i + 1);
    }
    // Fairness: a reader spinning on an odd seq with nothing new visible
    // must see the writer progress.
    // So must one re-reading an odd pvclock version (a rewrite in
    // progress), which vread_pvclock() retries rather than waits on.
    const bool pvti_version = offset == kPvtiVersionOffset;
    const bool seq = loads_.IsSeq(offset);
    const bool again = seq && offset == loads_.last_seq_offset() &&
                       Applied() == applied_at_seq_;
    // And so must a loop that has read the same seq and the same loads
    // between twice with no store landing (a reader waiting on the wrong
    // bit: `seq & 2`): this load would repeat them. Without this the writer
    // could stall at every turn of the loop, and each turn was a choice:
    // interleavings without end (a hang). A correct reader never repeats
    // a seq load with nothing new visible: it returns after a retry check
    // that matched.
    const bool repeats =
        again && seq_repeated_ && iteration_.key() == last_iteration_;
    const bool spinning = (again && (loads_.last_seq() & 1) != 0) || repeats ||
                          (pvti_version && Applied() == applied_at_odd_pvti_);
    if (spinning && options.size() > 1) options.erase(options.begin());
    Decide(options);
    const uint32_t seq_before = loads_.last_seq();
    const uint64_t value =
        loads_.OnLoad(w_->page->data(), offset, size, Now(), rec_);
    if (run_->cache != nullptr) history_.Add(offset).Add(size).Add(value);
    if (seq) {
      seq_repeated_ = again && seq_before == static_cast<uint32_t>(value);
      last_iteration_ = iteration_.key();
      iteration_ = Fold{};
      applied_at_seq_ = Applied();
    } else {
      iteration_.Add(offset).Add(size).Add(value);
    }
    if (pvti_version) {
      applied_at_odd_pvti_ = (value & 1) != 0 ? Applied() : ~size_t{0};
    }
    if (tracing_) {
      TraceStep& t =
          Trace(loads_.Describe(offset, value), TraceStep::Kind::kLoad);
      t.field = variant_.layout->DescribeOffset(offset);
      t.value = value;
      t.seq = loads_.IsSeq(offset);
    }
  }

  uint64_t ReadCounter(vdso::CounterRead kind) override {
    std::vector<size_t> options = {Applied()};
    // The stores whose landing before the read changes what it is
    // judged against: cycle_last, and on kvm-clock the pvclock page's
    // version (a rewrite is in force from its last store).
    for (size_t i = Applied(); i < w_->stores; ++i) {
      if (variant_.layout->IsCycleLast(Store(i).offset) ||
          (w_->writer->hypervisor() != nullptr &&
           Store(i).offset == kPvtiVersionOffset)) {
        options.push_back(i + 1);
      }
    }
    Decide(options);
    const uint64_t at =
        internal::MayReadEarly(kind, s_.faults.unordered_counter_read)
            ? loads_.last_seq_ns()
            : Now();
    const int cpu = cpu_;
    const uint64_t c = w_->machine->Counter(cpu, at);
    rec_->read_bit63 = static_cast<int64_t>(c) < 0;
    if (run_->cache != nullptr) {
      history_.Add(~uint64_t{0}).Add(c).Add(at);
      // On kvm-clock the pvti in force when the read ran decides the
      // counter too (an unordered read's value is older than that).
      if (w_->writer->hypervisor() != nullptr) history_.Add(Now());
    }
    rec_->read_counter = true;
    rec_->counter = c;
    rec_->counter_cpu = cpu;
    rec_->counter_ns = at;
    rec_->counter_step_ns = Now();
    if (tracing_) {
      page_at_counter_ = variant_.layout->DescribePage(w_->page->data(), true);
      Trace(absl::StrFormat("counter read at %d ns = %#x", at, c),
            TraceStep::Kind::kCounter)
          .value = c;
    }
    return c;
  }

  bool MayRetry() override {
    return ++rec_->iterations <= s_.checks.livelock_budget;
  }

  ClockResult Fallback(ClockId clock) override {
    rec_->fell_back = true;
    ++rec_->fallbacks;
    // The syscall waits out an update in progress, then reads it.
    const size_t p = Applied();
    if (p > 0 && p < w_->stores && Pending(p - 1).update == Pending(p).update) {
      size_t end = p;
      while (end < w_->stores && Pending(end).update == Pending(p).update)
        ++end;
      ApplyTo(end);
    }
    const UpdateRecord& u = w_->writer->LatestStartedAt(Now());
    timekeeper::SyscallContext ctx;
    ctx.cycles = w_->writer->SyscallCounter(u, cpu_, Now());
    ctx.has_rtc = s_.kernel.has_rtc;
    ctx.aux_timekeepers = w_->writer->AuxStatesAt(Now());
    ctx.timens = timens_ ? &w_->timens : nullptr;
    rec_->read_counter = true;
    rec_->counter = ctx.cycles;
    rec_->counter_cpu = cpu_;
    rec_->counter_ns = Now();
    rec_->counter_step_ns = Now();
    rec_->fallback_update = u.id;
    const ClockResult r = variants::VariantSyscall(
        variant_, w_->writer->publish_context(), u.tk, clock, ctx);
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
    rec_->fault = fault;
    if (tracing_) Trace(vdso::DescribeFault(fault), TraceStep::Kind::kFault);
  }

  // The true time right after the last visible store.
  uint64_t Now() const {
    const size_t p = Applied();
    if (p == 0) return start_ns_;
    return std::max(start_ns_, Pending(p - 1).visible_ns);
  }
  std::string page_at_counter() const { return page_at_counter_; }
  // What the call loaded and read (reduction only).
  StateKey history() const { return history_.key(); }

 private:
  size_t Applied() const { return w_->view->applied(); }
  const vdso::VvarStore& Store(size_t i) const {
    return w_->writer->pending()[i].store;
  }
  const TimedStore& Pending(size_t i) const { return w_->writer->pending()[i]; }
  void ApplyTo(size_t target) {
    const size_t from = Applied();
    if (target <= from) return;
    w_->view->ApplyCount(target - from);
    rec_->stores_during += static_cast<uint32_t>(target - from);
    for (size_t i = from; i < target; ++i) {
      if (IsPvclockUpdateId(Pending(i).update)) ++rec_->pvclock_stores_during;
    }
    if (tracing_) {
      for (size_t i = from; i < target; ++i) {
        TraceStep& t = Trace(
            absl::StrFormat("  writer (%s): %s", UpdateLabel(Pending(i).update),
                            variant_.layout->DescribeStore(Store(i))),
            TraceStep::Kind::kStore);
        t.field = variant_.layout->DescribeOffset(Store(i).offset);
        t.value = Store(i).value;
        t.update = Pending(i).update;
        t.seq = variant_.layout->IsSeq(Store(i).offset);
      }
    }
  }
  // The state at this hook: everything the rest of the execution depends
  // on (the reader's own state follows from what it loaded and read).
  StateKey State() const {
    Fold f;
    f.Add(history_.key()).Add(Applied()).Add(applied_at_seq_);
    f.Add(applied_at_odd_pvti_);
    f.Add(loads_.last_seq()).Add(loads_.last_seq_ns());
    f.Add(loads_.last_seq_offset()).Add(rec_->iterations);
    // The one input of BeforeLoad()'s `repeats` the history does not
    // determine (the loads between seq loads follow from it): added only
    // when set, so every state without it keeps the key it had.
    if (seq_repeated_) f.Add(uint64_t{1});
    return f.key();
  }
  void Decide(const std::vector<size_t>& options) {
    const size_t k = run_->choices.size();
    bool forced = false;
    if (run_->cache != nullptr && !run_->cut) {
      const StateKey state = State();
      auto [it, fresh] =
          run_->cache->try_emplace(state, StateInfo{run_->prefix.key(), 0});
      if (fresh || it->second.prefix == run_->prefix.key()) {
        run_->path.push_back(state);
      } else {
        // Another prefix reached this state and explored what follows.
        run_->cut = state;
      }
    }
    forced = run_->cut.has_value();
    int choice = k < run_->script->size() ? (*run_->script)[k] : 0;
    if (forced) choice = 0;
    if (choice < 0 || static_cast<size_t>(choice) >= options.size()) {
      if (run_->problem.empty()) {
        run_->problem = absl::StrFormat(
            "decision %d is %d, but that point of the call offers %d "
            "choice(s) (0..%d)",
            k, choice, options.size(), options.size() - 1);
      }
      choice = 0;
    }
    run_->choices.push_back(choice);
    // Past a cut, no alternative is explored: the other prefix did.
    run_->counts.push_back(forced ? 1 : static_cast<int>(options.size()));
    if (run_->cache != nullptr) run_->prefix.Add(static_cast<uint64_t>(choice));
    if (options[static_cast<size_t>(choice)] > Applied()) ++run_->splits;
    ApplyTo(options[static_cast<size_t>(choice)]);
  }
  TraceStep& Trace(std::string what, TraceStep::Kind kind) {
    TraceStep step;
    step.t_ns = Now();
    step.cpu = cpu_;
    step.what = std::move(what);
    step.kind = kind;
    rec_->trace.push_back(std::move(step));
    return rec_->trace.back();
  }

  const Scenario& s_;
  const variants::Variant& variant_;
  Setup* w_;
  CallRecord* rec_;
  ScriptRun* run_;
  bool tracing_;
  int cpu_;
  bool timens_;  // The reader is in the namespace.
  uint64_t start_ns_;
  internal::LoadObserver loads_;
  Fold history_;
  size_t applied_at_seq_ = ~size_t{0};
  // The loads since the last seq load, and those between it and the one
  // before; whether those two seq loads saw the same value with no store
  // landing between them (BeforeLoad()'s `repeats`).
  Fold iteration_;
  StateKey last_iteration_;
  bool seq_repeated_ = false;
  // Stores visible at the last load of an odd pvclock version, else ~0.
  size_t applied_at_odd_pvti_ = ~size_t{0};
  static constexpr uint32_t kPvtiVersionOffset =
      vdso::kPvclockPageOffset + vdso::kPvtiVersion;
  std::string page_at_counter_;
};

struct Execution {
  CallRecord call;                  // The last call.
  std::optional<CallRecord> first;  // Two-call shapes: the first.
  std::vector<int> choices;
  std::vector<int> counts;
  uint32_t splits = 0;
  std::vector<Violation> violations;
  std::array<PropertyStats, kNumProperties> stats{};
  bool failed = false;
  std::string page;
  std::string script_problem;
  // Reduction: the states it owns, and the one it was cut at.
  std::vector<StateKey> path;
  std::optional<StateKey> cut;
};

bool TwoCalls(const Scenario& s) {
  return s.run.exhaustive_shape != ExhaustiveShape::kOneCall;
}

// The scenario index of the reader making call `n` (0 or 1).
size_t ReaderOf(const Scenario& s, int n) {
  return n == 1 && s.run.exhaustive_shape == ExhaustiveShape::kTwoReaders ? 1
                                                                          : 0;
}

// Runs one call of the execution; returns its page at the counter read.
std::string RunCall(const Scenario& s, const variants::Variant& variant,
                    Setup* w, variants::SimReader* reader, ScriptRun* run,
                    bool tracing, int n, uint64_t start_ns, StateKey entry,
                    CallRecord* rec, StateKey* history) {
  const size_t r = ReaderOf(s, n);
  rec->clock = ClocksFor(s.readers[r], variant)[0];
  rec->reader = ReaderId(s, r);
  rec->index = static_cast<uint64_t>(n);
  rec->reader_call = r == 0 ? static_cast<uint64_t>(n) : 0;
  rec->start_ns = start_ns;
  rec->cpu_start = rec->cpu_end = s.readers[r].cpu;
  ScriptedHooks hooks(s, variant, w, rec, run, tracing, r, start_ns, entry);
  // A reader in the namespace enters through its view (sim/engine.cc).
  rec->timens = s.readers[r].timens;
  const uint8_t* page = rec->timens ? w->page->timens_data() : w->page->data();
  vdso::HookedAccess access =
      rec->timens
          ? vdso::HookedAccess(w->page->data(), &hooks, page, w->page->size())
          : vdso::HookedAccess(w->page->data(), &hooks);
  rec->result = reader->Call(access, page, rec->clock);
  rec->end_ns = hooks.Now();
  internal::ResolveKvmClock(*w->writer, variant, rec);
  *history = hooks.history();
  return hooks.page_at_counter();
}

Execution RunOne(const Scenario& s, const variants::Variant& variant, Setup* w,
                 const std::vector<int>& script, bool tracing,
                 bool accept_known, StateCache* cache = nullptr) {
  Execution e;
  ScriptRun run;
  run.script = &script;
  run.cache = cache;
  // A fresh reader per execution: every interleaving starts from the same
  // state. Its two calls share it, as a process's calls do.
  std::unique_ptr<variants::SimReader> reader = variant.make_sim_reader();
  StateKey history;
  e.page = RunCall(s, variant, w, reader.get(), &run, tracing, 0, w->start_ns,
                   Fold().Add(1).key(), &e.call, &history);
  if (TwoCalls(s)) {
    // What the second call's future depends on: the first call's record
    // (the checker's input) and, for a reader that may keep state between
    // calls, everything the first call saw.
    Fold entry;
    entry.Add(2).Add(RecordKey(e.call, w->writer->hypervisor() != nullptr));
    if (!reader->stateless()) entry.Add(history);
    e.first = std::move(e.call);
    e.call = CallRecord{};
    e.page = RunCall(s, variant, w, reader.get(), &run, tracing, 1,
                     e.first->end_ns + 1, entry.key(), &e.call, &history);
  }
  e.choices = std::move(run.choices);
  e.counts = std::move(run.counts);
  e.splits = run.splits;
  e.script_problem = std::move(run.problem);
  e.path = std::move(run.path);
  e.cut = run.cut;
  if (e.script_problem.empty() && script.size() > e.choices.size()) {
    e.script_problem = absl::StrFormat(
        "%d decisions, but the call offered only %d choice points",
        script.size(), e.choices.size());
  }
  w->view->Rollback();
  if (e.cut) return e;  // Checked where the state was first explored.
  Checker checker(s, w->machine.get(), w->writer.get(), &variant);
  checker.AcceptKnown(accept_known);
  if (w->settled == nullptr) {
    w->settled = std::make_unique<SettledPage>(s, variant, *w->writer);
  }
  checker.SetSettledAnswers(w->settled.get());
  if (e.first) checker.OnCall(*e.first);
  checker.OnCall(e.call);
  e.violations = checker.violations();
  e.stats = checker.stats();
  e.failed = checker.HasFailure();
  return e;
}

// The reader's other entry points on the page before the raced updates,
// once: they take no part in the interleavings.
void ProbeEntryPoints(const Scenario& s, const variants::Variant& variant,
                      Setup* w, ExploreResult* result) {
  std::unique_ptr<variants::SimReader> reader = variant.make_sim_reader();
  EntryPointProbe probe(s, variant, reader.get(), w->machine.get(),
                        w->writer.get());
  if (!probe.enabled() || !probe.Due(w->start_ns)) return;
  const ReaderSpec& spec = s.readers[0];
  const std::vector<EntryPointVerdict> verdicts =
      probe.Run(w->page->data(), spec.timens ? w->page->timens_data() : nullptr,
                w->page->size(), spec.cpu, w->start_ns);
  for (const EntryPointVerdict& v : verdicts) {
    PropertyStats& st = result->stats[static_cast<size_t>(v.property) - 1];
    ++st.checked;
    ++result->entry_points_checked;
    if (v.ok) continue;
    ++st.defects;
    ++result->entry_points_wrong;
    if (!v.keep) continue;
    Violation violation;
    violation.property = v.property;
    violation.why = v.why;
    violation.detail = v.detail;
    violation.reader = ReaderId(s, 0);
    violation.t_ns = w->start_ns;
    violation.watchdog_stopped = v.watchdog_stopped;
    result->entry_point_violations.push_back(std::move(violation));
  }
}

}  // namespace

absl::StatusOr<ExploreResult> Explore(const Scenario& s,
                                      const variants::Variant& variant,
                                      const ExploreOptions& options) {
  absl::StatusOr<Setup> setup = MakeSetup(s, variant);
  if (!setup.ok()) return setup.status();
  ExploreResult result;
  result.clock = ClocksFor(s.readers[0], variant)[0];
  result.clock_name = variants::VariantClockName(variant, result.clock);
  result.updates = setup->updates;
  result.stores = static_cast<uint32_t>(setup->stores);
  result.start_ns = setup->start_ns;
  result.shape = s.run.exhaustive_shape;
  result.reduction = s.run.exhaustive_reduction;
  if (TwoCalls(s)) {
    const ReaderSpec& second = s.readers[ReaderOf(s, 1)];
    result.second_clock_name =
        variants::VariantClockName(variant, ClocksFor(second, variant)[0]);
    result.second_cpu = second.cpu;
  }
  ProbeEntryPoints(s, variant, &*setup, &result);
  StateCache cache;
  StateCache* states =
      s.run.exhaustive_reduction == Reduction::kPor ? &cache : nullptr;
  std::vector<int> script;
  uint64_t spins = 0;
  uint64_t livelocks = 0;
  for (;;) {
    Execution e = RunOne(s, variant, &*setup, script, false,
                         options.accept_known, states);
    if (states != nullptr) {
      // The plain executions below each state this one owns: one, or all
      // of those below the state it was cut at (explored already: the
      // search is depth-first).
      const uint64_t leaves = e.cut ? cache.at(*e.cut).leaves : 1;
      for (const StateKey& k : e.path) cache.at(k).leaves += leaves;
      result.plain_interleavings += leaves;
    }
    if (e.cut) {
      ++result.cut;
    } else {
      ++result.interleavings;
      if (states == nullptr) ++result.plain_interleavings;
    }
    for (size_t i = 0; i < e.stats.size(); ++i) {
      result.stats[i].checked += e.stats[i].checked;
      result.stats[i].defects += e.stats[i].defects;
      result.stats[i].preconditions += e.stats[i].preconditions;
      result.stats[i].known_kernel += e.stats[i].known_kernel;
    }
    const bool spun =
        (e.call.fault && e.call.fault->kind == vdso::CallFault::Kind::kSpin) ||
        (e.first && e.first->fault &&
         e.first->fault->kind == vdso::CallFault::Kind::kSpin);
    if (spun && ++spins >= options.max_spins) {
      // Each such interleaving costs the wall-time bound.
      result.stop_reason = absl::StrFormat(
          "%d interleavings spun, blocked or ran past a quarter of the time "
          "bound",
          spins);
    }
    // Abandoned with the loop budget spent (no answer, no fault).
    // (An execution cut at an explored state has no answer either.)
    const bool looped =
        !e.cut && ((!e.call.fault && !e.call.result) ||
                   (e.first && !e.first->fault && !e.first->result));
    if (looped && ++livelocks >= options.max_livelocks) {
      result.stop_reason =
          absl::StrFormat("%d interleavings spent the loop budget", livelocks);
    }
    if (e.failed) {
      ++result.failing;
      if (!result.minimal || e.splits < result.minimal_splits) {
        result.minimal = e.choices;
        result.minimal_splits = e.splits;
        result.minimal_violations = e.violations;
      }
    }
    // Backtrack: bump the deepest choice that has another option.
    size_t k = e.choices.size();
    while (k > 0 && e.choices[k - 1] + 1 >= e.counts[k - 1]) --k;
    if (k == 0) {
      result.complete = true;
      break;
    }
    script.assign(e.choices.begin(),
                  e.choices.begin() + static_cast<std::ptrdiff_t>(k));
    ++script[k - 1];
    const uint64_t done = result.interleavings + result.cut;
    if (options.progress && (done & 0x3ff) == 0) {
      options.progress(done, result.failing);
    }
    if (options.stop != nullptr && options.stop->load()) {
      result.interrupted = true;
      if (result.stop_reason.empty()) result.stop_reason = "interrupted";
      break;
    }
    if (done >= options.max_interleavings || !result.stop_reason.empty()) {
      break;
    }
  }
  if (result.minimal) {
    Execution e = RunOne(s, variant, &*setup, *result.minimal, true,
                         options.accept_known);
    result.minimal_call = e.call;
    result.minimal_page = e.page;
    result.minimal_first_call = e.first;
  }
  return result;
}

absl::StatusOr<Interleaving> RunInterleaving(const Scenario& s,
                                             const variants::Variant& variant,
                                             const std::vector<int>& decisions,
                                             bool accept_known) {
  absl::StatusOr<Setup> setup = MakeSetup(s, variant);
  if (!setup.ok()) return setup.status();
  Execution e = RunOne(s, variant, &*setup, decisions, true, accept_known);
  Interleaving out;
  out.call = std::move(e.call);
  out.first_call = std::move(e.first);
  out.violations = std::move(e.violations);
  out.failed = e.failed;
  out.updates = setup->updates;
  out.page = std::move(e.page);
  out.script_problem = std::move(e.script_problem);
  return out;
}

}  // namespace vdsolab::sim
