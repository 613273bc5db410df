#include "sim/run.h"

#include <set>
#include <utility>

#include "sim/minimize.h"
#include "sim/run_report.h"

namespace vdsolab::sim {
namespace {

absl::StatusOr<Outcome> RunExhaustive(const Scenario& s,
                                      const variants::Variant& variant,
                                      const RunOptions& options) {
  ExploreOptions explore;
  explore.stop = options.stop;
  explore.max_interleavings = options.max_interleavings;
  explore.accept_known = options.accept_known;
  if (options.progress) {
    explore.progress = [&options](uint64_t done, uint64_t failing) {
      Progress p;
      p.strategy = Strategy::kExhaustive;
      p.interleavings = done;
      p.failing = failing;
      options.progress(p);
    };
  }
  absl::StatusOr<ExploreResult> e = Explore(s, variant, explore);
  if (!e.ok()) return e.status();
  Outcome out;
  out.strategy = Strategy::kExhaustive;
  out.stats = e->stats;
  out.failed = e->minimal.has_value() || !e->entry_point_violations.empty();
  out.complete = e->complete;
  out.interrupted = e->interrupted;
  if (e->minimal && options.replays != ReplayPolicy::kNone) {
    // The minimal interleaving is its own replay: the same setup and the
    // same choices.
    FailureReplay r;
    if (!e->minimal_violations.empty()) r.failure = e->minimal_violations[0];
    Scenario replay = s;
    replay.replay.present = true;
    replay.replay.reader = ReaderId(s, 0);
    replay.replay.property =
        e->minimal_violations.empty() ? "" : PropertyName(r.failure.property);
    replay.replay.decisions = *e->minimal;
    replay.replay.accept_known = options.accept_known;
    // The replay names the variant that failed (the CLI's UseVariant()
    // has set it already; a caller of Run() may not have).
    replay.run.reader = std::string(variant.name);
    r.scenario = std::move(replay);
    out.replays.push_back(std::move(r));
  }
  if (!e->minimal && !e->entry_point_violations.empty() &&
      options.replays != ReplayPolicy::kNone) {
    // No interleaving to replay: the answers come from the setup's page,
    // which the scenario and seed alone decide.
    FailureReplay r;
    r.failure = e->entry_point_violations[0];
    r.error =
        "the failure is no interleaving but the other entry points' answers "
        "on the page before the raced updates: running the same scenario "
        "and seed again reproduces it";
    out.replays.push_back(std::move(r));
  }
  out.exhaustive = *std::move(e);
  return out;
}

}  // namespace

absl::StatusOr<Outcome> Run(const Scenario& s, const variants::Variant& variant,
                            const RunOptions& options) {
  if (s.run.strategy == Strategy::kExhaustive) {
    return RunExhaustive(s, variant, options);
  }
  RandomOptions random;
  random.stop = options.stop;
  random.accept_known = options.accept_known;
  if (options.progress) {
    random.progress = [&options](uint64_t done_ns, uint64_t total_ns,
                                 uint64_t calls, uint64_t failing) {
      Progress p;
      p.simulated_ns = done_ns;
      p.total_ns = total_ns;
      p.calls = calls;
      p.failing = failing;
      options.progress(p);
    };
  }
  absl::StatusOr<RunResult> r = RunRandom(s, variant, random);
  if (!r.ok()) return r.status();
  Outcome out;
  out.stats = r->stats;
  out.failed = r->failed;
  out.complete = !r->stopped_early;
  out.interrupted = r->interrupted;
  std::set<Property> replayed;
  // Defects first: a documented behaviour found earlier must not take the
  // replay of a defect of the same property (or the run's one replay).
  std::vector<const Violation*> order;
  for (const Violation& v : r->violations) {
    if (v.verdict == Verdict::kDefect) order.push_back(&v);
  }
  for (const Violation& v : r->violations) {
    if (v.verdict != Verdict::kDefect) order.push_back(&v);
  }
  for (const Violation* failure : order) {
    const Violation& v = *failure;
    if (options.replays == ReplayPolicy::kNone) break;
    if (v.verdict == Verdict::kPrecondition) continue;
    if (v.verdict == Verdict::kKnownKernel && options.accept_known) continue;
    if (options.replays == ReplayPolicy::kFirstFailure && !replayed.empty()) {
      break;
    }
    if (!replayed.insert(v.property).second) continue;
    absl::StatusOr<Scenario> minimal = MinimizeFailure(s, variant, v);
    FailureReplay replay{v, std::nullopt, ""};
    if (minimal.ok()) {
      replay.scenario = *std::move(minimal);
      replay.scenario->run.reader = std::string(variant.name);
      replay.scenario->replay.accept_known = options.accept_known;
    } else {
      replay.error = std::string(minimal.status().message());
    }
    out.replays.push_back(std::move(replay));
  }
  out.random = *std::move(r);
  return out;
}

std::string FormatOutcome(const Scenario& scenario, const Outcome& outcome) {
  return outcome.exhaustive ? FormatExploreReport(scenario, *outcome.exhaustive)
                            : FormatRunReport(scenario, *outcome.random);
}

}  // namespace vdsolab::sim
