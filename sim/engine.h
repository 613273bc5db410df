// File: sim/engine.h
//
// The simulation engine: runs a scenario's readers against its writer on
// the simulated machine, "inside out": each clock_gettime() call runs
// synchronously, and at every page load and counter read the access hooks
// move the reader's true time forward (load costs, seeded preemption),
// migrate it, and make visible exactly the writer stores that landed by
// then. Calls run in order of their true start time; a call's view of the
// future is rolled back afterwards (sim/page_view.h).

#ifndef VDSOLAB_SIM_ENGINE_H_
#define VDSOLAB_SIM_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock_result.h"
#include "sim/call.h"
#include "sim/checker.h"
#include "sim/scenario.h"
#include "sim/writer.h"
#include "variants/variant.h"
#include "vdso/access.h"

namespace vdsolab::sim {

// Some reader of `scenario` is in the time namespace (ReaderSpec::timens).
bool UsesTimens(const Scenario& scenario);

// FailedPrecondition naming the first reader in the time namespace
// ("reader[1].timens: ...") when `variant` does not model namespaces.
absl::Status CheckTimensSupport(const Scenario& scenario,
                                const variants::Variant& variant);

// The clocks a reader calls in turn with this variant: its scenario
// clocks plus the variant's own clocks, or only the variant's own clocks
// for a user-space variant.
std::vector<ClockId> ClocksFor(const ReaderSpec& reader,
                               const variants::Variant& variant);

struct RandomOptions {
  // Record the step-by-step trace of this call (reader id, reader call).
  std::optional<std::pair<int, uint64_t>> trace_call;
  // Stop early when set (Ctrl-C); the report says so.
  const std::atomic<bool>* stop = nullptr;
  // Called now and then with (simulated ns done, total, calls so far,
  // failing violations so far).
  std::function<void(uint64_t, uint64_t, uint64_t, uint64_t)> progress;
  // Stop at the first defect or known-kernel violation.
  bool stop_at_first_failure = false;
  // Stop once this call (reader id, reader call) has been checked.
  std::optional<std::pair<int, uint64_t>> stop_after_call;
  // Stop after this many calls of foreign code spun or blocked past the time
  // bound (each costs that much wall time; the first already fails).
  uint64_t max_spins = 3;
  // Stop after this many calls in a row were abandoned with their loop
  // budget (checks.livelock_budget) spent, or this many calls of one clock
  // in a row: a reader that never gets past its retry (a re-check that
  // always fails) makes no progress, and each such call costs the whole
  // budget. The first already fails the run.
  uint64_t max_livelocks_in_a_row = 100;
  // Documented kernel behaviours do not fail the run.
  bool accept_known = false;
  // HookedAccess notes loads without the hooks where nothing else can
  // happen at them (vdso::LoadLane); false sends every load through the
  // hooks: the same run, slower (tests compare the two).
  bool inline_loads = true;
  // Calls in which nothing but time can happen first run through
  // vdso::QuietAccess, without the hooks; false runs every call through
  // them: the same run, slower (tests compare the two).
  bool quiet_calls = true;
};

// What a run holds besides its setup, in records: the most of each seen
// at any sample (every 256 calls, and at the end). Memory that stays flat
// in simulated duration shows here as counts that do not grow with it
// (bench/scaling, docs/benchmarks.md); no report prints them.
struct Retained {
  uint64_t updates = 0;            // Writer updates not yet retired.
  uint64_t aux_records = 0;        // Aux clock publications not yet retired.
  uint64_t stores = 0;             // Pending writer stores.
  uint64_t checker_states = 0;     // Checker::retained_states().
  uint64_t divergence_points = 0;  // Divergence::series, every clock.
  uint64_t violations = 0;         // Kept for the report (capped).
  uint64_t outcomes = 0;           // One per syscall event of the scenario.
  uint64_t pvclock_states = 0;     // kvm-clock: the hypervisor's pvti states.

  // Takes the larger of each count.
  void Max(const Retained& other);
};

struct RunResult {
  std::array<PropertyStats, kNumProperties> stats{};
  Coverage coverage;
  std::vector<Violation> violations;
  std::map<ClockId, Divergence> divergence;  // Clocks without an oracle.
  uint64_t updates = 0;                      // Writer updates published.
  uint64_t simulated_ns = 0;                 // How far the run got.
  bool stopped_early = false;
  // Stopped by RandomOptions::stop (Ctrl-C): what ran is no verdict.
  bool interrupted = false;
  // Why it stopped early ("interrupted", "3 calls spun ...").
  std::string stop_reason;
  // The syscall events the writer ran (adjtimex() and the like), with
  // what they returned; one that missed its expectation fails the run.
  std::vector<EventOutcome> outcomes;
  // A variant whose own timekeeper published (Variant::timekeeping): its
  // name, the operations it and the model both ran, and the first
  // difference between them ("" if none; one fails the run).
  std::string timekeeping;
  uint64_t timekeeping_operations = 0;
  // Checker::expected_shortcut(): for tests; no report prints it.
  Checker::ShortcutStats expected_shortcut;
  std::string timekeeping_difference;
  // The timekeeper model's state against independent computations after
  // each writer operation (sim/timekeeper_consistency.h); any fails the run.
  std::vector<std::string> timekeeper_findings;
  bool failed = false;  // A defect, known-kernel violation, missed
                        // expectation or timekeeper finding.
  Retained retained;    // The most the run held.
  // Calls answered through vdso::QuietAccess (RandomOptions::quiet_calls);
  // no report prints it: the run is the same without them.
  uint64_t quiet_calls = 0;
  std::optional<CallRecord> traced;  // The call named in trace_call.
  std::string traced_page;           // Its page state at the counter read.
};

// Runs a scenario with the random strategy and the given variant (the
// writer publishes in its layout; its reader answers the calls).
absl::StatusOr<RunResult> RunRandom(const Scenario& scenario,
                                    const variants::Variant& variant,
                                    const RandomOptions& options = {});

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_ENGINE_H_
