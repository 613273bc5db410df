// File: sim/run.h
//
// The one way to run a scenario, for the CLI, `compare`, the bench and the
// tests: Run() takes the scenario's strategy (random or exhaustive), runs
// the variant through it and, when a property fails, makes minimal replay
// scenarios of the failures; Replay() runs a replay scenario's failing call
// again, step by step. Callers only parse and format.

#ifndef VDSOLAB_SIM_RUN_H_
#define VDSOLAB_SIM_RUN_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/engine.h"
#include "sim/exhaustive.h"
#include "sim/properties.h"
#include "sim/scenario.h"
#include "variants/variant.h"

namespace vdsolab::sim {

// How far a run is, now and then.
struct Progress {
  Strategy strategy = Strategy::kRandom;
  uint64_t simulated_ns = 0;  // Random: simulated time done, of total_ns.
  uint64_t total_ns = 0;
  uint64_t calls = 0;          // Random: calls so far.
  uint64_t interleavings = 0;  // Exhaustive: interleavings so far.
  uint64_t failing = 0;        // Failures so far.
};

// Which failures get a minimal replay scenario.
enum class ReplayPolicy {
  kNone,
  kFirstFailure,      // `vdsolab run`: the run's first failure.
  kFirstPerProperty,  // `vdsolab compare`: the first of each property.
};

struct RunOptions {
  const std::atomic<bool>* stop = nullptr;  // Set: stop early (Ctrl-C).
  std::function<void(const Progress&)> progress;
  ReplayPolicy replays = ReplayPolicy::kFirstFailure;
  uint64_t max_interleavings = 50000000;
  // --accept=known: documented kernel behaviours pass (still counted and
  // reported), so a CI can gate on defects only.
  bool accept_known = false;
};

// A failure and a scenario, with a [replay] section, that shows it again
// (or why none could be made).
struct FailureReplay {
  Violation failure;
  std::optional<Scenario> scenario;
  std::string error;  // Set when `scenario` is not.
};

struct Outcome {
  Strategy strategy = Strategy::kRandom;
  // Every property check the run made (exhaustive: summed over every
  // interleaving).
  std::array<PropertyStats, kNumProperties> stats{};
  bool failed = false;   // A defect or known kernel behaviour was found.
  bool complete = true;  // Ran to its end (not stopped, not cut at a budget).
  // Stopped by RunOptions::stop (Ctrl-C): unless `failed`, no verdict.
  bool interrupted = false;
  // The strategy's own result: one of the two is set.
  std::optional<RunResult> random;
  std::optional<ExploreResult> exhaustive;
  std::vector<FailureReplay> replays;  // As the options asked.
};

absl::StatusOr<Outcome> Run(const Scenario& scenario,
                            const variants::Variant& variant,
                            const RunOptions& options = {});

// The run's report (sim/run_report.h); byte-identical for the same
// scenario and seed.
std::string FormatOutcome(const Scenario& scenario, const Outcome& outcome);

struct ReplayOutcome {
  std::string text;  // The failing call step by step, and the verdict.
  bool reproduced = false;
  // The call itself, with its trace (nullopt: the run never reached it),
  // the violations found at it, the page at its counter read (non-zero
  // fields) and the clock's name.
  std::optional<CallRecord> call;
  std::vector<Violation> violations;
  std::string page;
  std::string clock_name;
  // Replayed against another variant than the file's: not reproduced
  // means FIXED.
  bool other_variant = false;
  // The run stopped before the call (RunResult::stop_reason); another
  // variant's run ended before it (its schedule diverged).
  std::string stopped_before;
  bool diverged = false;
  // The run failed anywhere, and its first failure other than the one
  // replayed ("reader 1, call 9: exact: ..."): a replay that does not show
  // the failure at the call is then no fix.
  bool failed = false;
  std::string elsewhere;
  // A diverged random replay whose file names the scenario it was cut
  // from (run.origin): that scenario was run whole with the same seed and
  // the variant (FIXED when it held, NOT FIXED when it failed).
  bool origin_ran = false;
  bool origin_failed = false;
  // Not reproduced because the replayed property failed at the call only
  // as documented kernel behaviour, which the replay accepts
  // (ReplaySpec::accept_known).
  bool accepted_at_call = false;
};

// Runs a replay scenario (one with a [replay] section) again: its failing
// call with a trace, and whether the named violation recurred. With a
// `variant` other than the file's, the same schedule checks that variant:
// REPRODUCED or FIXED; where that variant's schedule diverges before the
// call, the scenario the replay was cut from (run.origin), if the file
// names one that can be read, run whole with the same seed decides. A [replay]
// section that cannot be replayed (no such reader or property, decisions that
// do not fit the call) is InvalidArgument. `code_changed`: the variant has the
// file's name but not its code (a plugin rebuilt in place, a tree or patch
// edited): it is judged as another variant, so a fix there says FIXED, not NOT
// REPRODUCED.
// `origin_file`: where run.origin is (the caller resolved a relative one;
// "": as spelt).
absl::StatusOr<ReplayOutcome> Replay(const Scenario& scenario,
                                     const variants::Variant& variant,
                                     bool code_changed = false,
                                     const std::string& origin_file = "");

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_RUN_H_
