// The checker's expected answer (sim/checker.h, ExpectedLine): the era
// oracle's, with a per-state base for the kernel hres clocks, whose
// answer is a base plus the model's TimekeepingCyclesToNs().

#include "sim/checker.h"
#include "timekeeper/readers.h"

namespace vdsolab::sim {
namespace {

constexpr uint64_t kNsecPerSec = 1000000000;
// Bases and answers kept below 2^62 ns (146 years): no ktime or timespec
// arithmetic of the model wraps or goes negative there.
constexpr unsigned __int128 kLimitNs = static_cast<unsigned __int128>(1) << 62;

bool Shortcuttable(ClockId clock) {
  return clock == kClockRealtime || clock == kClockMonotonic ||
         clock == kClockMonotonicRaw || clock == kClockBoottime ||
         clock == kClockTai;
}

}  // namespace

ClockResult Checker::ExpectedFromBase(const ExpectedLine& line,
                                      const timekeeper::TkReadBase& tkr,
                                      uint64_t counter) {
  const uint64_t ns =
      line.base_ns + timekeeper::TimekeepingCyclesToNs(tkr, counter);
  return ClockResult::Ok(Timespec64{static_cast<int64_t>(ns / kNsecPerSec),
                                    static_cast<int64_t>(ns % kNsecPerSec)});
}

ClockResult Checker::ExpectedSlow(const CallRecord& call,
                                  const ClockFacts& facts,
                                  const UpdateRecord& state) {
  const timekeeper::Timekeeper& tk = state.tk;
  const ClockId clock = call.clock;
  const ClockResult want = oracle_.Expected(tk, clock, call.counter);
  if (!expected_shortcut_ || facts.own != nullptr ||
      facts.kind != variants::ClockKind::kKernel || !Shortcuttable(clock)) {
    return want;
  }
  const timekeeper::TkReadBase& tkr =
      clock == kClockMonotonicRaw ? tk.tkr_raw : tk.tkr_mono;
  ExpectedLine& line = expected_[static_cast<size_t>(clock)];
  if (line.state_id != state.id) {
    line = ExpectedLine{};
    line.state_id = state.id;
    // The base: the answer at cycle_last less the model's ns there.
    const uint64_t last = tkr.cycle_last;
    const ClockResult at_last = oracle_.Expected(tk, clock, last);
    if (tk.tkr_raw.cycle_last == tk.tkr_mono.cycle_last && at_last.ret == 0 &&
        at_last.ts.tv_sec >= 0 && at_last.ts.tv_nsec >= 0 &&
        at_last.ts.tv_nsec < static_cast<int64_t>(kNsecPerSec)) {
      const unsigned __int128 value =
          static_cast<unsigned __int128>(at_last.ts.tv_sec) * kNsecPerSec +
          static_cast<uint64_t>(at_last.ts.tv_nsec);
      const uint64_t ns_at_last = timekeeper::TimekeepingCyclesToNs(tkr, last);
      const unsigned __int128 most_ns =
          (static_cast<unsigned __int128>(tkr.clock->max_cycles) * tkr.mult +
           tkr.xtime_nsec) >>
          tkr.shift;
      if (value < kLimitNs && value >= ns_at_last &&
          value - ns_at_last + most_ns < kLimitNs) {
        line.base_ns = static_cast<uint64_t>(value - ns_at_last);
        line.usable = true;
      }
    }
  }
  // The first answer on a state and every 16th after it come here (uses):
  // the shortcut's answer must be the oracle's.
  if (line.usable && InShortcutRange(tkr, call.counter) &&
      !(ExpectedFromBase(line, tkr, call.counter) == want)) {
    expected_shortcut_ = false;
    for (ExpectedLine& l : expected_) l.usable = false;
  }
  return want;
}

}  // namespace vdsolab::sim
