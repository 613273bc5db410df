// File: sim/exhaustive.h
//
// The exhaustive strategy: one reader call against the next k writer
// updates, over every distinct interleaving of the call's loads and counter
// reads with the updates' stores.
//
// Stateless model checking, inside out: the call runs from the same
// starting page again and again, each time with a script saying, at every
// hook, how many more writer stores become visible first. Only choices
// that can change what the reader sees are offered: before a load, "none",
// or "up to and including a store to that field"; before the counter read,
// "none" or "up to a store of cycle_last" or, on a kvm-clock machine, of
// the pvclock page's version (the counter is the time right after the
// last visible store, and a pvclock rewrite is in force from its last). A
// reader spinning on an odd seq must let the writer progress (fairness).
// Depth-first search over the scripts enumerates each distinct interleaving
// once.
//
// Shapes (run.exhaustive_shape): one call; two consecutive calls of the
// first reader (the second starts 1 ns after the first returned, so the
// checker's monotonicity applies across them); or the first reader's call
// and then the second reader's on its own CPU, started 1 ns after the
// first returned (the checker's causality applies). Two calls run on one
// reader instance and one script, without rolling the page back between
// them: the second call's first hook may let more stores land first, which
// covers every later start.
//
// Reduction (run.exhaustive_reduction = "por"). The choice scheme above is
// already one execution per read-from class: a store lands only just
// before a load of its field (or a counter read after a cycle_last store),
// so two scripts give two different "last visible store" for some load.
// What it repeats is the futures: two prefixes that let the reader load
// the same values (a store that rewrites a field's value, as every update
// does for mult, shift and most seconds fields), and leave the writer as
// far along, reach the same state, and everything after is the same run.
// The reduction is a visited set of states (not sleep sets): at each hook
// the state is a 128-bit hash of what the calls so far loaded and read,
// how many stores are visible, the seq bookkeeping and the retry count;
// for a second call of a reader that keeps no state between calls
// (SimReader::stateless()), the first call enters only through the
// record the checker reads, so second calls after first calls that the
// checker cannot tell apart are explored once. An execution reaching a
// state that another prefix has explored is run to its end with the first
// choices and not checked again ("cut"). Each state counts the executions
// plain enumeration has below it, so the report gives that count exactly
// without running it.

#ifndef VDSOLAB_SIM_EXHAUSTIVE_H_
#define VDSOLAB_SIM_EXHAUSTIVE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/call.h"
#include "sim/checker.h"
#include "sim/engine.h"
#include "sim/scenario.h"

namespace vdsolab::sim {

struct ExploreOptions {
  const std::atomic<bool>* stop = nullptr;
  std::function<void(uint64_t done, uint64_t failing)> progress;
  uint64_t max_interleavings = 50000000;
  // Stop after this many interleavings of foreign code spun past the
  // wall-time bound.
  uint64_t max_spins = 3;
  // Stop after this many interleavings in which a call spent its loop
  // budget (checks.livelock_budget): each is a load per iteration, and so
  // a choice point per iteration, to explore.
  uint64_t max_livelocks = 100;
  // Documented kernel behaviours do not make an interleaving fail.
  bool accept_known = false;
};

struct ExploreResult {
  ClockId clock = 0;
  std::string clock_name;
  uint32_t updates = 0;        // Updates raced.
  uint32_t stores = 0;         // Their stores.
  uint64_t start_ns = 0;       // Where the window starts (see rollover).
  uint64_t interleavings = 0;  // Executions explored.
  uint64_t failing = 0;        // Executions with a defect.
  // Every execution's property checks, summed.
  std::array<PropertyStats, kNumProperties> stats{};
  ExhaustiveShape shape = ExhaustiveShape::kOneCall;
  Reduction reduction = Reduction::kNone;
  // Two-call shapes: the second call's clock and CPU.
  std::string second_clock_name;
  int second_cpu = 0;
  // With reduction: executions stopped being checked at a state another
  // prefix had explored (they cost a run each, not a check).
  uint64_t cut = 0;
  // The executions plain enumeration (no reduction) needs for the same
  // result: `interleavings` without reduction; with it, counted through
  // the states (exact when `complete`).
  uint64_t plain_interleavings = 0;
  bool complete = false;     // Every interleaving explored.
  bool interrupted = false;  // Stopped by ExploreOptions::stop (Ctrl-C).
  std::string stop_reason;   // Why it stopped early, if it did.
  // The failing interleaving with the fewest mid-call store landings.
  std::optional<std::vector<int>> minimal;
  uint32_t minimal_splits = 0;
  std::vector<Violation> minimal_violations;
  CallRecord minimal_call;  // Two-call shapes: the second call.
  std::string minimal_page;
  std::optional<CallRecord> minimal_first_call;  // Two-call shapes.
  // A reader with other entry points (sim/entry_points.h): how many of
  // their answers were checked on the page before the raced updates (as
  // reader 0 sees it), and the wrong ones (counted in `stats` too). Any
  // fails the run.
  uint64_t entry_points_checked = 0;
  uint64_t entry_points_wrong = 0;
  std::vector<Violation> entry_point_violations;  // The first of each kind.
};

absl::StatusOr<ExploreResult> Explore(const Scenario& scenario,
                                      const variants::Variant& variant,
                                      const ExploreOptions& options = {});

// One interleaving, run again with a trace (for replays).
struct Interleaving {
  CallRecord call;  // With its trace; two-call shapes: the second call.
  std::optional<CallRecord> first_call;  // Two-call shapes, with its trace.
  std::vector<Violation> violations;
  bool failed = false;
  uint32_t updates = 0;  // Updates raced.
  std::string page;      // The page at the counter read (non-zero fields).
  // Where `decisions` did not fit this call's choice points ("" if they
  // did): a bad replay file, or another variant taking another path.
  std::string script_problem;
};

// Runs the interleaving `decisions` (an ExploreResult::minimal, or a
// replay file's) of the scenario's exhaustive setup.
// `accept_known`: a documented kernel behaviour is no failure.
absl::StatusOr<Interleaving> RunInterleaving(const Scenario& scenario,
                                             const variants::Variant& variant,
                                             const std::vector<int>& decisions,
                                             bool accept_known = false);

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_EXHAUSTIVE_H_
