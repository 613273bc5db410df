#include "bench/sim_benchmarks.h"

#include <benchmark/benchmark.h>
#include <time.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "bench/counters.h"
#include "bench/median.h"
#include "ktree/load.h"
#include "sim/engine.h"
#include "sim/exhaustive.h"
#include "variants/registry.h"
#include "variants/upstream.h"

namespace vdsolab::bench {
namespace {

sim::Scenario Plain(bool quick) {
  sim::Scenario s;
  s.run.duration_ns = quick ? 5000000 : 50000000;
  s.readers = {sim::ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonic, kClockRealtime, kClockMonotonicRaw,
                         kClockBoottime, kClockTai};
  s.readers[0].period_ns = 1000;
  return s;
}

sim::Scenario Injected(bool quick) {
  sim::Scenario s = Plain(quick);
  s.machine.cpus.assign(4, sim::CpuCounterSpec{});
  s.timing.preempt_ppm = 20000;
  s.timing.preempt_max_ns = 50000;
  s.timing.writer_stall_ppm = 50000;
  s.timing.writer_stall_max_ns = 20000;
  s.timing.store_ns = 20;
  s.readers[0].migrate_ppm = 10000;
  s.readers[0].migrate_midcall_ppm = 5000;
  s.faults.unordered_counter_read = true;
  return s;
}

// Every property check off: what the engine costs without the checker.
sim::Scenario Unchecked(bool quick) {
  sim::Scenario s = Plain(quick);
  s.checks = sim::CheckSpec{};
  s.checks.exact = s.checks.monotonic = s.checks.causal = s.checks.sane =
      s.checks.raw_rate = s.checks.cross_clock = s.checks.torn = false;
  return s;
}

// Hooks that do nothing: the reader runs through the simulation's access
// policy (a virtual call per load and counter read) on a live page with
// the real counter, and no simulation around it.
class NullHooks final : public vdso::AccessHooks {
 public:
  void BeforeLoad(uint32_t, uint32_t) override {}
  uint64_t ReadCounter(vdso::CounterRead) override { return LfenceRdtsc(); }
  bool MayRetry() override { return true; }
  ClockResult Fallback(ClockId) override { return ClockResult::Error(-22); }
};

void HookedRead(benchmark::State& st, const uint8_t* page, ClockId clock) {
  const std::unique_ptr<variants::SimReader> reader =
      variants::UpstreamVariant().make_sim_reader();
  NullHooks hooks;
  vdso::HookedAccess access(page, &hooks);
  for (auto _ : st) {
    benchmark::DoNotOptimize(reader->Call(access, page, clock));
  }
}

void RunScenario(
    benchmark::State& st, const sim::Scenario& s,
    const variants::Variant& variant = variants::UpstreamVariant()) {
  uint64_t calls = 0;
  for (auto _ : st) {
    absl::StatusOr<sim::RunResult> r = sim::RunRandom(s, variant);
    if (!r.ok()) {
      st.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    calls += r->coverage.calls;
  }
  st.counters["reads_per_s"] = benchmark::Counter(static_cast<double>(calls),
                                                  benchmark::Counter::kIsRate);
}

// The wall time of `run`, which returns false (and has skipped the
// benchmark with an error) if it failed.
template <class Run>
std::optional<double> TimedNs(Run&& run) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!run()) return std::nullopt;
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count();
}

// Two things compared, run in alternation (their order swapped every
// iteration), each timed alone: as the counter "ratio", the median over the
// iterations of `a`'s time ÷ `b`'s. On these VMs the machine's speed drifts
// by tens of percent from one second to the next (docs/benchmarks.md): two
// benchmarks seconds apart measure different machines, two runs
// milliseconds apart the same one.
template <class A, class B>
void RunPaired(benchmark::State& st, A&& a, B&& b) {
  std::vector<double> ratios;
  bool a_first = true;
  for (auto _ : st) {
    std::optional<double> a_ns;
    std::optional<double> b_ns;
    if (a_first) {
      if ((a_ns = TimedNs(a))) b_ns = TimedNs(b);
    } else {
      if ((b_ns = TimedNs(b))) a_ns = TimedNs(a);
    }
    if (!a_ns || !b_ns) return;
    if (*b_ns > 0) ratios.push_back(*a_ns / *b_ns);
    a_first = !a_first;
  }
  if (!ratios.empty()) st.counters["ratio"] = Median(ratios);
}

// One run of `s` by `v`, for RunPaired(); its read count in `*reads` if
// asked.
bool RunOnce(benchmark::State& st, const sim::Scenario& s,
             const variants::Variant& v, uint64_t* reads = nullptr) {
  absl::StatusOr<sim::RunResult> r = sim::RunRandom(s, v);
  if (!r.ok()) {
    st.SkipWithError(std::string(r.status().message()).c_str());
    return false;
  }
  if (reads != nullptr) *reads = r->coverage.calls;
  return true;
}

// The tree's reader ÷ its era's, in the same scenario.
void RunPair(benchmark::State& st, const sim::Scenario& s,
             const variants::Variant& tree, const variants::Variant& era) {
  RunPaired(
      st, [&] { return RunOnce(st, s, tree); },
      [&] { return RunOnce(st, s, era); });
}

// A run of `s` ÷ as many calls of the host vDSO's MONOTONIC as it makes
// reads (every run of `s` makes the same reads: one untimed run counts
// them).
void RunPairWithHost(benchmark::State& st, const sim::Scenario& s,
                     HostClockGettime host) {
  uint64_t reads = 0;
  if (!RunOnce(st, s, variants::UpstreamVariant(), &reads)) return;
  RunPaired(
      st, [&] { return RunOnce(st, s, variants::UpstreamVariant()); },
      [&] {
        struct timespec ts;
        for (uint64_t i = 0; i < reads; ++i) {
          host(CLOCK_MONOTONIC, &ts);
          benchmark::DoNotOptimize(ts);
        }
        return true;
      });
}

void Explore(benchmark::State& st, int updates) {
  sim::Scenario s;
  s.run.strategy = sim::Strategy::kExhaustive;
  s.run.exhaustive_updates = updates;
  s.readers[0].clocks = {kClockMonotonic};
  uint64_t interleavings = 0;
  for (auto _ : st) {
    absl::StatusOr<sim::ExploreResult> r =
        sim::Explore(s, variants::UpstreamVariant());
    if (!r.ok()) {
      st.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    interleavings += r->interleavings;
    st.counters["interleavings"] = static_cast<double>(r->interleavings);
  }
  st.counters["interleavings_per_s"] = benchmark::Counter(
      static_cast<double>(interleavings), benchmark::Counter::kIsRate);
}

// The executions a plain-enumeration row may run before it is cut: 4
// updates would take hours (docs/benchmarks.md reports "> N (capped)").
uint64_t ExploreCap(bool quick) { return quick ? 20000 : 200000; }

// One exploration of a shape with or without reduction: the executions it
// ran, those it checked, and plain enumeration's count (a lower bound when
// capped).
void ExploreShape(benchmark::State& st, sim::ExhaustiveShape shape,
                  sim::Reduction reduction, int updates, uint64_t cap) {
  sim::Scenario s;
  s.run.strategy = sim::Strategy::kExhaustive;
  s.run.exhaustive_updates = updates;
  s.run.exhaustive_shape = shape;
  s.run.exhaustive_reduction = reduction;
  s.machine.cpus.assign(2, sim::CpuCounterSpec{});
  s.readers = {sim::ReaderSpec{}, sim::ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonic};
  s.readers[1].clocks = {kClockMonotonic};
  s.readers[1].cpu = 1;
  sim::ExploreOptions options;
  options.max_interleavings = cap;
  for (auto _ : st) {
    absl::StatusOr<sim::ExploreResult> r =
        sim::Explore(s, variants::UpstreamVariant(), options);
    if (!r.ok()) {
      st.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    st.counters["executions"] = static_cast<double>(r->interleavings + r->cut);
    st.counters["checked"] = static_cast<double>(r->interleavings);
    st.counters["plain"] = static_cast<double>(r->plain_interleavings);
    st.counters["capped"] = r->complete ? 0 : 1;
  }
}

}  // namespace

std::string TreeBench(const std::string& version, const std::string& era) {
  return absl::StrFormat("sim/tree/%s@%s", version, era);
}

std::string TreeBuiltinBench(const std::string& era) {
  return absl::StrFormat("sim/tree-builtin/%s", era);
}

std::string TreePairBench(const std::string& version, const std::string& era) {
  return absl::StrFormat("sim/tree-pair/%s@%s", version, era);
}

std::vector<std::string> RegisterTreeBenchmarks(
    bool quick, const std::vector<std::string>& trees) {
  std::vector<std::string> errors;
  const sim::Scenario plain = Plain(quick);
  for (const std::string& tree : trees) {
    ktree::BuildOptions options;
    options.tree = tree;
    ktree::BuiltVariant built;
    absl::StatusOr<const variants::Variant*> v =
        ktree::BuildAndLoadTreeVariant(options, &built);
    absl::StatusOr<const variants::Variant*> builtin =
        v.ok() ? variants::FindVariant(built.layout) : v.status();
    if (!builtin.ok()) {
      errors.push_back(
          absl::StrFormat("%s: %s", tree, builtin.status().message()));
      continue;
    }
    // The same scenario, seed and page for both: only the reader differs.
    const variants::Variant* tree_variant = *v;
    const variants::Variant* era = *builtin;
    benchmark::RegisterBenchmark(TreeBench(built.version, built.layout).c_str(),
                                 [plain, tree_variant](benchmark::State& st) {
                                   RunScenario(st, plain, *tree_variant);
                                 })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(
        TreeBuiltinBench(built.layout).c_str(),
        [plain, era](benchmark::State& st) { RunScenario(st, plain, *era); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(
        TreePairBench(built.version, built.layout).c_str(),
        [plain, tree_variant, era](benchmark::State& st) {
          RunPair(st, plain, *tree_variant, *era);
        })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  return errors;
}

std::string ExhaustiveShapeBench(sim::ExhaustiveShape shape,
                                 sim::Reduction reduction, int updates) {
  return absl::StrFormat("sim/exhaustive/%s/%d/%s",
                         sim::ExhaustiveShapeName(shape), updates,
                         sim::ReductionName(reduction));
}

void RegisterSimBenchmarks(bool quick, const uint8_t* upstream_page,
                           HostClockGettime host_vdso) {
  const sim::Scenario plain = Plain(quick);
  const sim::Scenario unchecked = Unchecked(quick);
  if (host_vdso != nullptr) {
    benchmark::RegisterBenchmark(kPairedNoInjection,
                                 [plain, host_vdso](benchmark::State& st) {
                                   RunPairWithHost(st, plain, host_vdso);
                                 })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    const sim::Scenario injected = Injected(quick);
    benchmark::RegisterBenchmark(kPairedInjection,
                                 [injected, host_vdso](benchmark::State& st) {
                                   RunPairWithHost(st, injected, host_vdso);
                                 })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark(
      kPairedChecks,
      [plain, unchecked](benchmark::State& st) {
        RunPaired(
            st, [&] { return RunOnce(st, plain, variants::UpstreamVariant()); },
            [&] {
              return RunOnce(st, unchecked, variants::UpstreamVariant());
            });
      })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  if (upstream_page != nullptr) {
    benchmark::RegisterBenchmark(
        "sim/hooked_read", [upstream_page](benchmark::State& st) {
          HookedRead(st, upstream_page, kClockMonotonic);
        });
  }
  benchmark::RegisterBenchmark(
      "sim/random_no_checks",
      [unchecked](benchmark::State& st) { RunScenario(st, unchecked); })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  const sim::Scenario injected = Injected(quick);
  benchmark::RegisterBenchmark(
      "sim/random_no_injection",
      [plain](benchmark::State& st) { RunScenario(st, plain); })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(
      "sim/random_injection",
      [injected](benchmark::State& st) { RunScenario(st, injected); })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sim/exhaustive_1_update",
                               [](benchmark::State& st) { Explore(st, 1); })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("sim/exhaustive_2_updates",
                               [](benchmark::State& st) { Explore(st, 2); })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  // Time against updates with and without partial-order reduction, for
  // each shape: one run each (a capped plain row takes seconds).
  const uint64_t cap = ExploreCap(quick);
  for (sim::ExhaustiveShape shape :
       {sim::ExhaustiveShape::kOneCall, sim::ExhaustiveShape::kTwoCalls,
        sim::ExhaustiveShape::kTwoReaders}) {
    for (int updates = 1; updates <= (quick ? 2 : 4); ++updates) {
      for (sim::Reduction reduction :
           {sim::Reduction::kNone, sim::Reduction::kPor}) {
        benchmark::RegisterBenchmark(
            ExhaustiveShapeBench(shape, reduction, updates).c_str(),
            [=](benchmark::State& st) {
              ExploreShape(st, shape, reduction, updates, cap);
            })
            ->Iterations(1)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace vdsolab::bench
