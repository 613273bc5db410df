#include "sim/minimize.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "sim/engine.h"

namespace vdsolab::sim {
namespace {

// The same property at the same call, with the same verdict: a cut that
// shows the era's documented behaviour there instead of the defect (or the
// reverse) is not the failure minimised.
bool SameFailure(const Violation& a, const Violation& b) {
  return a.property == b.property && a.reader == b.reader &&
         a.reader_call == b.reader_call && a.verdict == b.verdict;
}

// Roughly how many calls a run of `s` makes (pauses stop the readers).
uint64_t EstimatedCalls(const Scenario& s) {
  uint64_t paused = 0;
  for (const EventSpec& e : s.events) {
    if (e.kind == EventKind::kPause && e.at_ns < s.run.duration_ns) {
      paused += std::min(e.duration_ns, s.run.duration_ns - e.at_ns);
    }
  }
  const uint64_t active =
      s.run.duration_ns - std::min(paused, s.run.duration_ns);
  uint64_t calls = 0;
  for (const ReaderSpec& r : s.readers) calls += active / r.period_ns + 1;
  return calls;
}

bool Shows(const Scenario& s, const variants::Variant& variant,
           const Violation& failure) {
  RandomOptions options;
  options.stop_at_first_failure = false;
  options.stop_after_call = std::pair{failure.reader, failure.reader_call};
  absl::StatusOr<RunResult> r = RunRandom(s, variant, options);
  if (!r.ok()) return false;
  for (const Violation& v : r->violations) {
    if (v.verdict != Verdict::kPrecondition && SameFailure(v, failure)) {
      return true;
    }
  }
  return false;
}

// `s` as a replay of `failure`: reader ids fixed (a reader dropped before
// them must not renumber them), and the [replay] section.
Scenario WithReplay(Scenario s, const Violation& failure) {
  for (size_t j = 0; j < s.readers.size(); ++j) {
    s.readers[j].id = ReaderId(s, j);
  }
  s.replay.present = true;
  s.replay.reader = failure.reader;
  s.replay.call = failure.reader_call;
  s.replay.property = PropertyName(failure.property);
  return s;
}

// `s` ended right after the call of `failure` starts, without the events
// after it.
Scenario CutAfter(Scenario s, const Violation& failure) {
  s.run.duration_ns = failure.t_ns + 1;
  s.events.erase(std::remove_if(s.events.begin(), s.events.end(),
                                [&](const EventSpec& e) {
                                  return e.at_ns >= s.run.duration_ns;
                                }),
                 s.events.end());
  return s;
}

// The failing reader calling the failing call's clock alone, and failing
// at its first call that shows the property (nullopt: not so). A replay
// whose reader makes fewest calls before the failure gives another
// variant (a fix) the fewest chances to diverge from its schedule.
std::optional<std::pair<Scenario, Violation>> OneClock(
    const Scenario& best, const variants::Variant& variant,
    const Violation& failure) {
  // A variant that calls its own clocks ignores the reader's list.
  if (variant.own_clocks_only || !variant.own_clocks.empty()) {
    return std::nullopt;
  }
  size_t ri = best.readers.size();
  for (size_t j = 0; j < best.readers.size(); ++j) {
    if (ReaderId(best, j) == failure.reader) ri = j;
  }
  if (ri == best.readers.size() || best.readers[ri].clocks.size() < 2) {
    return std::nullopt;
  }
  Scenario one = best;
  for (size_t j = 0; j < one.readers.size(); ++j) {
    one.readers[j].id = ReaderId(best, j);
  }
  const std::vector<ClockId>& clocks = best.readers[ri].clocks;
  one.readers[ri].clocks = {clocks[failure.reader_call % clocks.size()]};
  RandomOptions options;
  options.stop_at_first_failure = true;
  absl::StatusOr<RunResult> r = RunRandom(one, variant, options);
  if (!r.ok()) return std::nullopt;
  for (const Violation& v : r->violations) {
    if (v.verdict == Verdict::kPrecondition) continue;
    if (v.property != failure.property || v.reader != failure.reader ||
        v.verdict != failure.verdict) {
      break;
    }
    Scenario cut = CutAfter(one, v);
    if (!Shows(cut, variant, v)) break;
    return std::pair{std::move(cut), v};
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Scenario> MinimizeFailure(const Scenario& scenario,
                                         const variants::Variant& variant,
                                         const Violation& original) {
  Violation failure = original;
  Scenario best = scenario;
  best.replay = ReplaySpec{};
  // End the run right after the failing call starts.
  Scenario cut = best;
  cut.run.duration_ns = failure.t_ns + 1;
  cut.events.erase(std::remove_if(cut.events.begin(), cut.events.end(),
                                  [&](const EventSpec& e) {
                                    return e.at_ns >= cut.run.duration_ns;
                                  }),
                   cut.events.end());
  if (Shows(cut, variant, failure)) best = cut;
  // A call the watchdog stopped costs its bound in every rerun (30 s for
  // a call blocked in a sleep at the default --call-timeout): one rerun to
  // cut the run, not one per reader and event. The replay keeps them.
  if (failure.watchdog_stopped) return WithReplay(best, failure);
  // Drop readers the failure does not need (ids keep their randomness).
  for (size_t i = best.readers.size(); i-- > 0;) {
    if (best.readers.size() == 1 || ReaderId(best, i) == failure.reader)
      continue;
    Scenario fewer = best;
    for (size_t j = 0; j < fewer.readers.size(); ++j) {
      fewer.readers[j].id = ReaderId(best, j);
    }
    fewer.readers.erase(fewer.readers.begin() + static_cast<std::ptrdiff_t>(i));
    if (Shows(fewer, variant, failure)) best = fewer;
  }
  // The failing clock alone, failing as early as it does.
  if (auto one = OneClock(best, variant, failure)) {
    best = std::move(one->first);
    failure = one->second;
  }
  // Drop events it does not need, unless that makes the run much longer
  // (without a pause, the readers would run through it).
  for (size_t i = best.events.size(); i-- > 0;) {
    Scenario fewer = best;
    fewer.events.erase(fewer.events.begin() + static_cast<std::ptrdiff_t>(i));
    if (EstimatedCalls(fewer) > 2 * EstimatedCalls(best) + 1000) continue;
    if (Shows(fewer, variant, failure)) best = fewer;
  }
  return WithReplay(best, failure);
}

}  // namespace vdsolab::sim
