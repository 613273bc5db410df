// Property suite for the simulation engine: generated scenarios (machines,
// counters, schedules, events, faults) run the upstream vDSO reader, and no
// check may find a defect. Violated preconditions (skewed CPUs, narrow
// counters) and the known 6.15+ coarse-clock behaviour are allowed and
// classified. A failure shrinks to a small scenario and prints it as a
// scenario file (also written to $TEST_UNDECLARED_OUTPUTS_DIR), ready for
// `vdsolab run`.
//
// Four properties, one per regime, so that Bazel's sharding spreads them.
//
// The variant under test is upstream; VDSOLAB_VARIANT names another (see
// `vdsolab variants`), VDSOLAB_VARIANT_SO loads a plugin first
// (docs/plugins.md), and VDSOLAB_KERNEL_TREE (with VDSOLAB_PATCHES, a
// colon-separated list) builds a kernel tree's own vDSO code
// (docs/kernel-trees.md), e.g. with these Bazel flags:
//   --test_env=VDSOLAB_VARIANT_SO=/abs/libmine.so
//   --test_env=VDSOLAB_VARIANT=mine
//   --test_env=VDSOLAB_KERNEL_TREE=/usr/src/linux-source-6.12.tar.xz
//   --test_env=VDSOLAB_PATCHES=/abs/fix.diff

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/clock_result.h"
#include "ktree/ktree.h"
#include "ktree/load.h"
#include "sim/engine.h"
#include "sim/run_report.h"
#include "sim/scenario_toml.h"
#include "tests/scenario_generators.h"
#include "timekeeper/timex.h"
#include "variants/plugin/loader.h"
#include "variants/registry.h"

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

// The variant the environment names, loading a plugin if asked; exits
// with the reason when it cannot.
const variants::Variant& VariantUnderTest() {
  static const variants::Variant* variant = [] {
    if (const char* tree = std::getenv("VDSOLAB_KERNEL_TREE")) {
      ktree::BuildOptions options;
      options.tree = tree;
      if (const char* patches = std::getenv("VDSOLAB_PATCHES")) {
        options.patches = absl::StrSplit(patches, ':', absl::SkipEmpty());
      }
      absl::StatusOr<const variants::Variant*> v =
          ktree::BuildAndLoadTreeVariant(options);
      if (!v.ok()) {
        std::fprintf(stderr, "VDSOLAB_KERNEL_TREE: %s\n",
                     std::string(v.status().message()).c_str());
        std::exit(2);
      }
      if (std::getenv("VDSOLAB_VARIANT") == nullptr) return *v;
    }
    if (const char* so = std::getenv("VDSOLAB_VARIANT_SO")) {
      absl::StatusOr<const variants::Variant*> v =
          variants::LoadPluginVariant(so);
      if (!v.ok()) {
        std::fprintf(stderr, "VDSOLAB_VARIANT_SO: %s\n",
                     std::string(v.status().message()).c_str());
        std::exit(2);
      }
      if (std::getenv("VDSOLAB_VARIANT") == nullptr) return *v;
    }
    const char* name = std::getenv("VDSOLAB_VARIANT");
    absl::StatusOr<const variants::Variant*> v =
        variants::FindVariant(name != nullptr ? name : "upstream");
    if (!v.ok()) {
      std::fprintf(stderr, "VDSOLAB_VARIANT: %s\n",
                   std::string(v.status().message()).c_str());
      std::exit(2);
    }
    std::printf("variant under test: %s\n", std::string((*v)->name).c_str());
    return *v;
  }();
  return *variant;
}

void CheckScenario(Scenario s) {
  // Readers in a time namespace, where the variant models one: their
  // calls take the namespace page's paths (its own seq loops).
  if (VariantUnderTest().timens && *rc::gen::inRange(0, 4) == 0) {
    s.kernel.timens_monotonic = {*rc::gen::inRange<int64_t>(-50, 100000),
                                 *rc::gen::inRange<int64_t>(0, 1000000000)};
    s.kernel.timens_boottime = {*rc::gen::inRange<int64_t>(0, 100000),
                                *rc::gen::inRange<int64_t>(0, 1000000000)};
    for (ReaderSpec& r : s.readers) r.timens = *rc::gen::arbitrary<bool>();
  }
  RC_PRE(ValidateScenario(s).ok());
  absl::StatusOr<RunResult> r = RunRandom(s, VariantUnderTest());
  RC_ASSERT(r.ok());
  g_reads += r->coverage.calls;
  const Coverage& c = r->coverage;
  RC_CLASSIFY(c.raced > 0, "raced a writer");
  RC_CLASSIFY(c.reordered_loads > 0, "reordered loads");
  RC_CLASSIFY(c.timens_calls > 0, "time namespace");
  uint64_t aux_calls = 0;
  for (const auto& [clock, counts] : c.per_clock) {
    if (clock >= kClockAux && clock < kClockAux + kMaxAuxClocks) {
      aux_calls += counts[0];
    }
  }
  RC_CLASSIFY(aux_calls > 0, "aux clocks read from the page");
  RC_CLASSIFY(c.retries > 0, "retried");
  RC_CLASSIFY(c.negative_motion > 0, "negative motion");
  RC_CLASSIFY(c.beyond_max_cycles > 0, "beyond max_cycles");
  RC_CLASSIFY(c.counter_wrapped > 0, "counter wrapped");
  RC_CLASSIFY(c.midcall_migrations + c.migrations > 0, "migrated");
  RC_CLASSIFY(c.fallbacks > 0, "syscall fallback");
  RC_CLASSIFY(c.pvclock_reads > 0, "kvm-clock read through the pvclock page");
  RC_CLASSIFY(c.pvclock_raced > 0, "raced a pvclock rewrite");
  // The checker's expected answers from a page state's base (sim/checker.h,
  // ExpectedLine) never disagreed with the syscall model it samples.
  RC_CLASSIFY(r->expected_shortcut.answers > 0, "expected answer from a base");
  RC_ASSERT(!r->expected_shortcut.off);
  for (const EventSpec& e : s.events) RC_TAG(EventKindName(e.kind));
  RC_CLASSIFY(r->stats[static_cast<int>(Property::kRawRate) - 1].checked > 0,
              "timekeeper pace checked");
  uint64_t preconditions = 0, known = 0, defects = 0;
  for (const PropertyStats& st : r->stats) {
    preconditions += st.preconditions;
    known += st.known_kernel;
    defects += st.defects;
  }
  RC_CLASSIFY(preconditions > 0, "precondition violated");
  RC_CLASSIFY(known > 0, "known kernel behaviour");
  for (const EventOutcome& o : r->outcomes) {
    const EventSpec& e = s.events[o.event];
    RC_CLASSIFY(e.kind == EventKind::kSetTime && o.ret == -kEinval,
                "settime refused (below MONOTONIC)");
    RC_CLASSIFY(e.kind == EventKind::kSetOffset && o.ret == -kEinval,
                "set_offset refused");
    RC_CLASSIFY(e.kind == EventKind::kAdjtimex &&
                    e.modes == timekeeper::kAdjStatus &&
                    (e.status & timekeeper::kStaIns) == 0 &&
                    o.ret == timekeeper::kTimeIns,
                "armed leap cleared by adjtimex");
  }
  // Besides the readers' defects: a syscall event that missed the return
  // the generator expected, and timekeeper state that disagrees with its
  // independent computation (sim/timekeeper_consistency.h).
  std::string first;
  for (const Violation& v : r->violations) {
    if (v.verdict == Verdict::kDefect) {
      first = absl::StrFormat("%s: %s: %s", PropertyName(v.property), v.why,
                              v.detail);
      break;
    }
  }
  for (const EventOutcome& o : r->outcomes) {
    if (first.empty() && !o.mismatches.empty()) {
      first = absl::StrFormat("event[%d] %s: %s", o.event, o.what,
                              o.mismatches.front());
    }
  }
  if (first.empty() && !r->timekeeper_findings.empty()) {
    first = "timekeeper: " + r->timekeeper_findings.front();
  }
  if (defects != 0 || !first.empty()) {
    const std::string toml = ScenarioToToml(s);
    if (const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
      std::ofstream(std::string(dir) + "/counterexample.toml") << toml;
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

// Relaxed ordering everywhere (faults.reorder_ppm = 1000000): a reader or
// writer that leaves out a barrier its seq protocol needs is found here,
// on every path (hres, coarse, raw, aux, the time namespace's).
RC_GTEST_PROP(SimProperty, RelaxedOrderingHasNoDefects, ()) {
  CheckScenario(*testing::GenScenario({.multi_cpu = *rc::gen::arbitrary<bool>(),
                                       .events = true,
                                       .races = true,
                                       .odd_counters = false,
                                       .relaxed = true}));
}

// KVM guests: the vDSO reads kvm-clock through vCPU 0's pvclock page while
// the hypervisor rewrites it, on synchronised or skewed CPUs, with events,
// in program order or relaxed.
RC_GTEST_PROP(SimProperty, KvmClockGuestsHaveNoDefects, ()) {
  CheckScenario(*testing::GenScenario({.multi_cpu = *rc::gen::arbitrary<bool>(),
                                       .events = *rc::gen::arbitrary<bool>(),
                                       .races = true,
                                       .odd_counters = false,
                                       .relaxed = *rc::gen::arbitrary<bool>(),
                                       .kvm = true}));
}

RC_GTEST_PROP(SimProperty, OddCountersHaveNoDefects, ()) {
  CheckScenario(*testing::GenScenario({.multi_cpu = true,
                                       .events = true,
                                       .races = true,
                                       .odd_counters = true}));
}

// The inline path for loads (vdso::LoadLane) only saves calls: a run with
// it and one with every load through the hooks give the same report and
// the same answers, on any machine, schedule and variant. Races come from
// writer stalls and store costs only half the time: preemption turns the
// inline path off for the whole run.
RC_GTEST_PROP(SimProperty, InlineLoadsChangeNothing, ()) {
  Scenario s = *testing::GenFastPathScenario();
  RC_PRE(ValidateScenario(s).ok());
  RandomOptions inline_loads;
  RandomOptions hooked;
  hooked.inline_loads = false;
  absl::StatusOr<RunResult> a = RunRandom(s, VariantUnderTest(), inline_loads);
  absl::StatusOr<RunResult> b = RunRandom(s, VariantUnderTest(), hooked);
  if (!a.ok()) RC_FAIL(std::string(a.status().message()));
  RC_ASSERT(b.ok());
  g_reads += a->coverage.calls + b->coverage.calls;
  bool lane = s.timing.preempt_ppm == 0;
  for (const ReaderSpec& r : s.readers) lane &= r.migrate_midcall_ppm == 0;
  RC_CLASSIFY(lane, "inline path on");
  RC_CLASSIFY(a->coverage.raced > 0, "raced a writer");
  RC_CLASSIFY(a->coverage.retries > 0, "retried");
  RC_CLASSIFY(a->coverage.fallbacks > 0, "syscall fallback");
  RC_ASSERT(FormatRunReport(s, *a) == FormatRunReport(s, *b));
  RC_ASSERT(a->coverage.calls == b->coverage.calls);
  RC_ASSERT(a->coverage.raced == b->coverage.raced);
  RC_ASSERT(a->coverage.retries == b->coverage.retries);
  RC_ASSERT(a->violations.size() == b->violations.size());
}

}  // namespace
}  // namespace vdsolab::sim
