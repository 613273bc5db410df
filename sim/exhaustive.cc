#include "sim/exhaustive.h"

#include <algorithm>
#include <memory>
#include <set>

#include "absl/strings/str_format.h"
#include "common/math64.h"
#include "sim/load_observer.h"
#include "sim/machine.h"
#include "sim/page_view.h"
#include "sim/writer.h"
#include "timekeeper/posix_clocks.h"

namespace vdsolab::sim {
namespace {

bool Overlaps(const vdso::VvarStore& s, uint32_t offset, uint32_t size) {
  return s.offset < offset + size && offset < s.offset + s.size;
}

// The world one exploration runs in: the page just before the raced
// updates, and those updates' stores.
struct Setup {
  std::unique_ptr<Machine> machine;
  std::unique_ptr<vdso::VvarPage> page;
  std::unique_ptr<Writer> writer;
  std::unique_ptr<PageView> view;
  uint64_t start_ns = 0;
  size_t stores = 0;  // How many pending stores the explored updates have.
  uint32_t updates = 0;
};

absl::StatusOr<Setup> MakeSetup(const Scenario& s,
                                const variants::Variant& variant) {
  if (absl::Status v = ValidateScenario(s); !v.ok()) return v;
  Setup w;
  w.machine = std::make_unique<Machine>(s.machine, s.run.seed);
  absl::StatusOr<std::unique_ptr<vdso::VvarPage>> page =
      vdso::VvarPage::Create();
  if (!page.ok()) return page.status();
  w.page = std::move(*page);
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

// Hooks that follow a script of choices.
class ScriptedHooks : public vdso::AccessHooks {
 public:
  ScriptedHooks(const Scenario& s, const variants::Variant& variant, Setup* w,
                CallRecord* rec, const std::vector<int>* script, bool tracing)
      : s_(s),
        variant_(variant),
        w_(w),
        rec_(rec),
        script_(script),
        tracing_(tracing),
        loads_(variant.layout) {}

  void BeforeLoad(uint32_t offset, uint32_t size) override {
    std::vector<size_t> options = {Applied()};
    for (size_t i = Applied(); i < w_->stores; ++i) {
      if (Overlaps(Store(i), offset, size)) options.push_back(i + 1);
    }
    // Fairness: a reader spinning on an odd seq with nothing new visible
    // must see the writer progress.
    const bool spinning =
        loads_.IsSeq(offset) && offset == loads_.last_seq_offset() &&
        Applied() == applied_at_seq_ && (loads_.last_seq() & 1) != 0;
    if (spinning && options.size() > 1) options.erase(options.begin());
    Decide(options);
    const uint64_t value =
        loads_.OnLoad(w_->page->data(), offset, size, Now(), rec_);
    if (loads_.IsSeq(offset)) applied_at_seq_ = Applied();
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
    for (size_t i = Applied(); i < w_->stores; ++i) {
      if (variant_.layout->IsCycleLast(Store(i).offset)) {
        options.push_back(i + 1);
      }
    }
    Decide(options);
    const uint64_t at =
        internal::MayReadEarly(kind, s_.faults.unordered_counter_read)
            ? loads_.last_seq_ns()
            : Now();
    const int cpu = s_.readers[0].cpu;
    const uint64_t c = w_->machine->Counter(cpu, at);
    rec_->read_counter = true;
    rec_->counter = c;
    rec_->counter_cpu = cpu;
    rec_->counter_ns = at;
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
    ctx.cycles = w_->writer->SyscallCounter(u, s_.readers[0].cpu, Now());
    ctx.has_rtc = s_.kernel.has_rtc;
    ctx.aux_timekeepers = w_->writer->AuxStatesAt(Now());
    rec_->read_counter = true;
    rec_->counter = ctx.cycles;
    rec_->counter_cpu = s_.readers[0].cpu;
    rec_->counter_ns = Now();
    rec_->fallback_update = u.id;
    const ClockResult r = variants::VariantSyscall(
        variant_, w_->writer->publish_context(), u.tk, clock, ctx);
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
    if (p == 0) return w_->start_ns;
    return std::max(w_->start_ns, Pending(p - 1).visible_ns);
  }
  const std::vector<int>& choices() const { return choices_; }
  const std::vector<int>& option_counts() const { return counts_; }
  uint32_t splits() const { return splits_; }
  // Where the script did not fit the call ("" if it did).
  const std::string& script_problem() const { return script_problem_; }
  std::string page_at_counter() const { return page_at_counter_; }

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
    if (tracing_) {
      for (size_t i = from; i < target; ++i) {
        TraceStep& t =
            Trace(absl::StrFormat("  writer (update %d): %s", Pending(i).update,
                                  variant_.layout->DescribeStore(Store(i))),
                  TraceStep::Kind::kStore);
        t.field = variant_.layout->DescribeOffset(Store(i).offset);
        t.value = Store(i).value;
        t.update = Pending(i).update;
        t.seq = variant_.layout->IsSeq(Store(i).offset);
      }
    }
  }
  void Decide(const std::vector<size_t>& options) {
    const size_t k = choices_.size();
    int choice = k < script_->size() ? (*script_)[k] : 0;
    if (choice < 0 || static_cast<size_t>(choice) >= options.size()) {
      if (script_problem_.empty()) {
        script_problem_ = absl::StrFormat(
            "decision %d is %d, but that point of the call offers %d "
            "choice(s) (0..%d)",
            k, choice, options.size(), options.size() - 1);
      }
      choice = 0;
    }
    choices_.push_back(choice);
    counts_.push_back(static_cast<int>(options.size()));
    if (options[static_cast<size_t>(choice)] > Applied()) ++splits_;
    ApplyTo(options[static_cast<size_t>(choice)]);
  }
  TraceStep& Trace(std::string what, TraceStep::Kind kind) {
    TraceStep step;
    step.t_ns = Now();
    step.cpu = s_.readers[0].cpu;
    step.what = std::move(what);
    step.kind = kind;
    rec_->trace.push_back(std::move(step));
    return rec_->trace.back();
  }

  const Scenario& s_;
  const variants::Variant& variant_;
  Setup* w_;
  CallRecord* rec_;
  const std::vector<int>* script_;
  bool tracing_;
  std::vector<int> choices_;
  std::vector<int> counts_;
  std::string script_problem_;
  uint32_t splits_ = 0;
  internal::LoadObserver loads_;
  size_t applied_at_seq_ = ~size_t{0};
  std::string page_at_counter_;
};

struct Execution {
  CallRecord call;
  std::vector<int> choices;
  std::vector<int> counts;
  uint32_t splits = 0;
  std::vector<Violation> violations;
  std::array<PropertyStats, kNumProperties> stats{};
  bool failed = false;
  std::string page;
  std::string script_problem;
};

Execution RunOne(const Scenario& s, const variants::Variant& variant, Setup* w,
                 const std::vector<int>& script, bool tracing,
                 bool accept_known) {
  Execution e;
  e.call.clock = ClocksFor(s.readers[0], variant)[0];
  e.call.reader = ReaderId(s, 0);
  e.call.start_ns = w->start_ns;
  e.call.cpu_start = e.call.cpu_end = s.readers[0].cpu;
  ScriptedHooks hooks(s, variant, w, &e.call, &script, tracing);
  vdso::HookedAccess access(w->page->data(), &hooks);
  // A fresh reader per execution: every interleaving starts from the same
  // state.
  e.call.result =
      variant.make_sim_reader()->Call(access, w->page->data(), e.call.clock);
  e.call.end_ns = hooks.Now();
  e.choices = hooks.choices();
  e.counts = hooks.option_counts();
  e.splits = hooks.splits();
  e.page = hooks.page_at_counter();
  e.script_problem = hooks.script_problem();
  if (e.script_problem.empty() && script.size() > e.choices.size()) {
    e.script_problem = absl::StrFormat(
        "%d decisions, but the call offered only %d choice points",
        script.size(), e.choices.size());
  }
  w->view->Rollback();
  Checker checker(s, w->machine.get(), w->writer.get(), &variant);
  checker.AcceptKnown(accept_known);
  checker.OnCall(e.call);
  e.violations = checker.violations();
  e.stats = checker.stats();
  e.failed = checker.HasFailure();
  return e;
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
  std::vector<int> script;
  uint64_t spins = 0;
  for (;;) {
    Execution e =
        RunOne(s, variant, &*setup, script, false, options.accept_known);
    ++result.interleavings;
    for (size_t i = 0; i < e.stats.size(); ++i) {
      result.stats[i].checked += e.stats[i].checked;
      result.stats[i].defects += e.stats[i].defects;
      result.stats[i].preconditions += e.stats[i].preconditions;
      result.stats[i].known_kernel += e.stats[i].known_kernel;
    }
    if (e.call.fault && e.call.fault->kind == vdso::CallFault::Kind::kSpin &&
        ++spins >= options.max_spins) {
      // Each such interleaving costs the wall-time bound.
      result.stop_reason = absl::StrFormat(
          "%d interleavings spun past the wall-time bound", spins);
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
    if (options.progress && (result.interleavings & 0x3ff) == 0) {
      options.progress(result.interleavings, result.failing);
    }
    if ((options.stop != nullptr && options.stop->load()) ||
        result.interleavings >= options.max_interleavings ||
        !result.stop_reason.empty()) {
      break;
    }
  }
  if (result.minimal) {
    Execution e = RunOne(s, variant, &*setup, *result.minimal, true,
                         options.accept_known);
    result.minimal_call = e.call;
    result.minimal_page = e.page;
  }
  return result;
}

absl::StatusOr<Interleaving> RunInterleaving(
    const Scenario& s, const variants::Variant& variant,
    const std::vector<int>& decisions) {
  absl::StatusOr<Setup> setup = MakeSetup(s, variant);
  if (!setup.ok()) return setup.status();
  Execution e = RunOne(s, variant, &*setup, decisions, true, false);
  Interleaving out;
  out.call = std::move(e.call);
  out.violations = std::move(e.violations);
  out.failed = e.failed;
  out.updates = setup->updates;
  out.page = std::move(e.page);
  out.script_problem = std::move(e.script_problem);
  return out;
}

}  // namespace vdsolab::sim
