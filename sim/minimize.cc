#include "sim/minimize.h"

#include <algorithm>

#include "sim/engine.h"

namespace vdsolab::sim {
namespace {

bool SameFailure(const Violation& a, const Violation& b) {
  return a.property == b.property && a.reader == b.reader &&
         a.reader_call == b.reader_call;
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

}  // namespace

absl::StatusOr<Scenario> MinimizeFailure(const Scenario& scenario,
                                         const variants::Variant& variant,
                                         const Violation& failure) {
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
