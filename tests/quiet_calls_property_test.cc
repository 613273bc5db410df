// The simulation's quiet calls (sim/engine.cc, vdso::QuietAccess): a call
// in which nothing but time can happen is first tried without the access
// hooks, and run again through them when the reader steps out (the
// syscall, a retry or spin, a counter read that may run early, a store
// due). That must only save time: a run with quiet calls and one without
// give the same report, on every built-in variant and on a broken reader,
// with and without faults, races and events.

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine.h"
#include "sim/run_report.h"
#include "tests/broken_readers.h"
#include "tests/scenario_generators.h"
#include "variants/registry.h"

namespace vdsolab::sim {
namespace {

struct Seen {
  uint64_t quiet = 0;   // Calls answered through QuietAccess,
  uint64_t hooked = 0;  // and through the hooks, in the quiet runs.
  uint64_t cases = 0;
};

// One case: a generated scenario and a variant, run both ways.
void QuietCallsChangeNothing(Seen* seen) {
  std::vector<const variants::Variant*> candidates = variants::AllVariants();
  candidates.push_back(&testing::NoSeqRetryVariant());
  const variants::Variant& variant = **rc::gen::elementOf(candidates);
  Scenario s = *testing::GenFastPathScenario();
  // A reader in the time namespace never takes quiet calls; a variant
  // without namespaces cannot run one.
  for (ReaderSpec& r : s.readers) {
    if (!variant.timens) r.timens = false;
  }
  // Half the cases dense: long loads, calls every few hundred ns and an
  // update every ms, so that many calls straddle the first store of an
  // update (during one, the odd seq sends every call to the hooks), where
  // a quiet attempt must give way at exactly the step the store lands
  // before.
  const bool dense = *rc::gen::arbitrary<bool>();
  if (dense) {
    s.kernel.hz = 1000;
    s.timing.tick_jitter_ns = *rc::gen::inRange<uint64_t>(0, 250000);
    s.timing.load_ns = *rc::gen::inRange<uint64_t>(1, 40);
    s.timing.counter_read_ns = *rc::gen::inRange<uint64_t>(0, 60);
    for (ReaderSpec& r : s.readers) {
      r.period_ns = *rc::gen::inRange<uint64_t>(20, 400);
      r.period_jitter_ns = *rc::gen::inRange<uint64_t>(0, 100);
    }
    s.run.duration_ns = std::min<uint64_t>(s.run.duration_ns, 6000000);
  }
  RC_PRE(ValidateScenario(s).ok());
  RandomOptions hooked;
  hooked.quiet_calls = false;
  absl::StatusOr<RunResult> a = RunRandom(s, variant);
  // A scenario this variant cannot run (a clock or layout it lacks) is
  // refused alike both ways.
  absl::StatusOr<RunResult> b = RunRandom(s, variant, hooked);
  RC_ASSERT(a.ok() == b.ok());
  RC_PRE(a.ok());
  RC_TAG(std::string(variant.name));
  RC_CLASSIFY(a->quiet_calls > 0, "quiet calls");
  RC_CLASSIFY(a->quiet_calls < a->coverage.calls, "calls through the hooks");
  RC_CLASSIFY(a->coverage.raced > 0, "raced a writer");
  RC_CLASSIFY(a->coverage.retries > 0, "retried");
  RC_CLASSIFY(a->coverage.fallbacks > 0, "syscall fallback");
  RC_CLASSIFY(s.faults.unordered_counter_read, "unordered counter reads");
  RC_CLASSIFY(dense, "dense");
  RC_CLASSIFY(a->coverage.pvclock_reads > 0,
              "kvm-clock through the pvclock page");
  RC_ASSERT(b->quiet_calls == 0u);
  RC_ASSERT(FormatRunReport(s, *a) == FormatRunReport(s, *b));
  RC_ASSERT(a->coverage.calls == b->coverage.calls);
  RC_ASSERT(a->violations.size() == b->violations.size());
  RC_ASSERT(a->failed == b->failed);
  seen->quiet += a->quiet_calls;
  seen->hooked += a->coverage.calls - a->quiet_calls;
  ++seen->cases;
}

TEST(QuietCalls, ChangeNothing) {
  Seen seen;
  EXPECT_TRUE(rc::check("quiet calls change nothing",
                        [&seen] { QuietCallsChangeNothing(&seen); }));
  // Not vacuous: over the cases, both paths answered calls.
  EXPECT_GT(seen.cases, 0u);
  EXPECT_GT(seen.quiet, 0u);
  EXPECT_GT(seen.hooked, 0u);
  std::printf(
      "quiet calls: %llu answered quietly, %llu through the hooks, "
      "%llu cases\n",
      static_cast<unsigned long long>(seen.quiet),
      static_cast<unsigned long long>(seen.hooked),
      static_cast<unsigned long long>(seen.cases));
}

// Every built-in reader that can be run again (stateless) has a quiet
// build: without one every call of it would pay the hooks.
TEST(QuietCalls, StatelessBuiltinReadersHaveQuietBuilds) {
  for (const variants::Variant* v : variants::AllVariants()) {
    const std::unique_ptr<variants::SimReader> reader = v->make_sim_reader();
    if (reader->stateless()) {
      EXPECT_TRUE(reader->has_quiet_build()) << v->name;
    }
  }
}

}  // namespace
}  // namespace vdsolab::sim
