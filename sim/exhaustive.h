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
// "none" or "up to a store of cycle_last" (the counter is the time right
// after the last visible store). A reader spinning on an odd seq must let
// the writer progress (fairness). Depth-first search over the scripts
// enumerates each distinct interleaving once.

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
  // Documented kernel behaviours do not make an interleaving fail.
  bool accept_known = false;
};

struct ExploreResult {
  ClockId clock = 0;
  std::string clock_name;
  uint32_t updates = 0;        // Updates raced.
  uint32_t stores = 0;         // Their stores.
  uint64_t interleavings = 0;  // Executions explored.
  uint64_t failing = 0;        // Executions with a defect.
  // Every execution's property checks, summed.
  std::array<PropertyStats, kNumProperties> stats{};
  bool complete = false;    // Every interleaving explored.
  std::string stop_reason;  // Why it stopped early, if not by request.
  // The failing interleaving with the fewest mid-call store landings.
  std::optional<std::vector<int>> minimal;
  uint32_t minimal_splits = 0;
  std::vector<Violation> minimal_violations;
  CallRecord minimal_call;
  std::string minimal_page;
};

absl::StatusOr<ExploreResult> Explore(const Scenario& scenario,
                                      const variants::Variant& variant,
                                      const ExploreOptions& options = {});

// One interleaving, run again with a trace (for replays).
struct Interleaving {
  CallRecord call;  // With its trace.
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
absl::StatusOr<Interleaving> RunInterleaving(const Scenario& scenario,
                                             const variants::Variant& variant,
                                             const std::vector<int>& decisions);

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_EXHAUSTIVE_H_
