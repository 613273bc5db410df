// Property suite for the simulation engine: generated scenarios (machines,
// counters, schedules, events, faults) run the upstream vDSO reader, and no
// check may find a defect. Violated preconditions (skewed CPUs, narrow
// counters) and the known 6.15+ coarse-clock behaviour are allowed and
// classified. A failure shrinks to a small scenario and prints it as a
// scenario file (also written to $TEST_UNDECLARED_OUTPUTS_DIR), ready for
// `vdsolab run`.
//
// Four properties, one per regime, so that Bazel's sharding spreads them.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_format.h"
#include "sim/engine.h"
#include "sim/scenario_toml.h"
#include "tests/scenario_generators.h"
#include "variants/upstream.h"

namespace vdsolab::sim {
namespace {

std::atomic<uint64_t> g_reads{0};

class ReadCounter : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("simulated reads in this test binary (shard): %llu\n",
                static_cast<unsigned long long>(g_reads.load()));
  }
};
const auto* const kReadCounter =
    ::testing::AddGlobalTestEnvironment(new ReadCounter);

void CheckScenario(const Scenario& s) {
  RC_PRE(ValidateScenario(s).ok());
  absl::StatusOr<RunResult> r = RunRandom(s, variants::UpstreamVariant());
  RC_ASSERT(r.ok());
  g_reads += r->coverage.calls;
  const Coverage& c = r->coverage;
  RC_CLASSIFY(c.raced > 0, "raced a writer");
  RC_CLASSIFY(c.retries > 0, "retried");
  RC_CLASSIFY(c.negative_motion > 0, "negative motion");
  RC_CLASSIFY(c.beyond_max_cycles > 0, "beyond max_cycles");
  RC_CLASSIFY(c.counter_wrapped > 0, "counter wrapped");
  RC_CLASSIFY(c.midcall_migrations + c.migrations > 0, "migrated");
  RC_CLASSIFY(c.fallbacks > 0, "syscall fallback");
  uint64_t preconditions = 0, known = 0, defects = 0;
  for (const PropertyStats& st : r->stats) {
    preconditions += st.preconditions;
    known += st.known_kernel;
    defects += st.defects;
  }
  RC_CLASSIFY(preconditions > 0, "precondition violated");
  RC_CLASSIFY(known > 0, "known kernel behaviour");
  if (defects != 0) {
    const std::string toml = ScenarioToToml(s);
    if (const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
      std::ofstream(std::string(dir) + "/counterexample.toml") << toml;
    }
    std::string first;
    for (const Violation& v : r->violations) {
      if (v.verdict == Verdict::kDefect) {
        first = absl::StrFormat("%s: %s: %s", PropertyName(v.property), v.why,
                                v.detail);
        break;
      }
    }
    RC_FAIL(absl::StrFormat("%s\n--- counterexample scenario ---\n%s", first,
                            toml));
  }
}

RC_GTEST_PROP(SimProperty, OneCpuWithRacesHasNoDefects, ()) {
  CheckScenario(*testing::GenScenario({.multi_cpu = false,
                                       .events = false,
                                       .races = true,
                                       .odd_counters = false}));
}

RC_GTEST_PROP(SimProperty, SkewedMigratingCpusHaveNoDefects, ()) {
  CheckScenario(*testing::GenScenario({.multi_cpu = true,
                                       .events = false,
                                       .races = true,
                                       .odd_counters = false}));
}

RC_GTEST_PROP(SimProperty, NtpSettimeIdleAndPausesHaveNoDefects, ()) {
  CheckScenario(*testing::GenScenario({.multi_cpu = false,
                                       .events = true,
                                       .races = true,
                                       .odd_counters = false}));
}

RC_GTEST_PROP(SimProperty, OddCountersHaveNoDefects, ()) {
  CheckScenario(*testing::GenScenario({.multi_cpu = true,
                                       .events = true,
                                       .races = true,
                                       .odd_counters = true}));
}

}  // namespace
}  // namespace vdsolab::sim
