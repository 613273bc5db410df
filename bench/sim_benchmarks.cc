#include "bench/sim_benchmarks.h"

#include <benchmark/benchmark.h>

#include "sim/engine.h"
#include "sim/exhaustive.h"
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

void RunScenario(benchmark::State& st, const sim::Scenario& s) {
  uint64_t calls = 0;
  for (auto _ : st) {
    absl::StatusOr<sim::RunResult> r =
        sim::RunRandom(s, variants::UpstreamVariant());
    if (!r.ok()) {
      st.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    calls += r->coverage.calls;
  }
  st.counters["reads_per_s"] = benchmark::Counter(static_cast<double>(calls),
                                                  benchmark::Counter::kIsRate);
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

}  // namespace

void RegisterSimBenchmarks(bool quick) {
  const sim::Scenario plain = Plain(quick);
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
}

}  // namespace vdsolab::bench
