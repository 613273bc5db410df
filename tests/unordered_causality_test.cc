// A counter read that is not ordered after the loads before it (a bare
// rdtsc) may run before its call began: past the load that saw another
// reader's call end. Two readers on two CPUs then see time go back
// (property `causal`): a defect of a reader that reads with a bare rdtsc
// (perf-mmap, the perf documentation's rdtsc()), but the scenario's own
// doing when only its faults.unordered_counter_read breaks the fence of
// the upstream reader's rdtsc_ordered() (a violated precondition). One
// reader's counter reads stay in program order: none runs before the
// reader's previous call ended, so a single reader still passes.

#include <gtest/gtest.h>

#include <string>

#include "sim/engine.h"
#include "sim/scenario.h"
#include "variants/registry.h"
#include "variants/upstream.h"

namespace vdsolab::sim {
namespace {

Scenario TwoReadersTwoCpus() {
  Scenario s;
  s.run.duration_ns = 50000000;  // 0.05 s.
  s.run.seed = 3;
  s.machine.cpus = {CpuCounterSpec{}, CpuCounterSpec{}};
  s.readers = {ReaderSpec{}, ReaderSpec{}};
  s.readers[1].cpu = 1;
  for (ReaderSpec& r : s.readers) {
    r.clocks = {kClockMonotonic};
    r.period_ns = 1000;
  }
  return s;
}

const PropertyStats& Causal(const RunResult& r) {
  return r.stats[static_cast<size_t>(Property::kCausal) - 1];
}

TEST(UnorderedCausality, ABareRdtscReaderFailsCausalityAcrossReaders) {
  absl::StatusOr<const variants::Variant*> perf =
      variants::FindVariant("perf-mmap");
  ASSERT_TRUE(perf.ok()) << perf.status();
  ASSERT_EQ((*perf)->counter_read, vdso::CounterRead::kPlain);
  Scenario s = TwoReadersTwoCpus();
  absl::StatusOr<RunResult> r = RunRandom(s, **perf);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->failed);
  EXPECT_GT(Causal(*r).defects, 0u);
  bool named = false;
  for (const Violation& v : r->violations) {
    if (v.property != Property::kCausal) continue;
    named |= v.why.find("not ordered after the loads before it") !=
                 std::string::npos &&
             v.detail.find("before the call began") != std::string::npos;
  }
  EXPECT_TRUE(named) << "the causal violation does not say why";
}

TEST(UnorderedCausality, ABrokenFenceIsTheScenariosNotTheUpstreamReaders) {
  Scenario s = TwoReadersTwoCpus();
  s.faults.unordered_counter_read = true;
  absl::StatusOr<RunResult> r = RunRandom(s, variants::UpstreamVariant());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->failed);
  EXPECT_EQ(Causal(*r).defects, 0u);
  EXPECT_GT(Causal(*r).preconditions, 0u)
      << "no early read crossed another reader's call end";
}

TEST(UnorderedCausality, TheFencedUpstreamReaderHoldsCausality) {
  absl::StatusOr<RunResult> r =
      RunRandom(TwoReadersTwoCpus(), variants::UpstreamVariant());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->failed);
  EXPECT_GT(Causal(*r).checked, 0u);
  EXPECT_EQ(Causal(*r).preconditions, 0u);
}

// One reader: its early reads never precede its own previous call, so
// they cannot make it go back (the negative-motion clamp covers the rest).
TEST(UnorderedCausality, OneReadersBareRdtscStaysMonotonic) {
  absl::StatusOr<const variants::Variant*> perf =
      variants::FindVariant("perf-mmap");
  ASSERT_TRUE(perf.ok()) << perf.status();
  Scenario s = TwoReadersTwoCpus();
  s.readers.resize(1);
  s.readers[0].period_ns = 100;
  absl::StatusOr<RunResult> r = RunRandom(s, **perf);
  ASSERT_TRUE(r.ok()) << r.status();
  const PropertyStats& mono =
      r->stats[static_cast<size_t>(Property::kMonotonic) - 1];
  EXPECT_GT(mono.checked, 0u);
  EXPECT_EQ(mono.defects, 0u);
}

}  // namespace
}  // namespace vdsolab::sim
