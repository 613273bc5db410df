// timekeeping_adjust()'s "Adjusting %s more than 11%" warning (6.x,
// kernel/time/timekeeping.c): printed once, the first time the adjusted
// mult is more than the clocksource's maxadj away from its registered mult.
//
// NTP can move mult that far: ADJ_TICK's ±10% of the tick, the frequency's
// ±500 ppm and, with a time constant of 0 in nanosecond mode, a 500 ms phase
// offset slewed at a quarter of it per second. The test draws requests from
// none of these to all of them at their limits, runs a few seconds of ticks,
// and checks the log against the mults it saw after every tick: one warning
// if any was past maxadj, none otherwise.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/timespec.h"
#include "tests/generators.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/timex.h"

namespace vdsolab {
namespace {

namespace tk = timekeeper;

int Warnings(const tk::Timekeeping& k) {
  int n = 0;
  for (const std::string& line : k.log()) {
    if (line.find("more than 11%") != std::string::npos) ++n;
  }
  return n;
}

RC_GTEST_PROP(MaxadjWarning, PrintedOnceExactlyWhenMultMovesPastMaxadj, ()) {
  absl::StatusOr<tk::Clocksource> tsc =
      tk::MakeTscClocksource(*testing::GenTscKhz());
  RC_ASSERT(tsc.ok());
  const int hz = *testing::GenHz();
  tk::Timekeeping k(*tsc, hz, nullptr);
  uint64_t now = *testing::GenCounterStart() & tsc->mask;
  k.Init(now, Timespec64{1700000000, 0}, Timespec64{100, 0});

  const int64_t user_tick = 1000000 / tk::kUserHz;
  tk::Timex txc;
  txc.modes = tk::kAdjTick | tk::kAdjFrequency | tk::kAdjStatus |
              tk::kAdjTimeconst | tk::kAdjOffset | tk::kAdjNano;
  txc.status = tk::kStaPll | tk::kStaNano;
  txc.tick =
      user_tick + *rc::gen::element<int64_t>(-user_tick / 10, -user_tick / 20,
                                             0, user_tick / 20, user_tick / 10);
  const int64_t max_freq = (tk::kMaxFreq / 1000) << 16;  // 500 ppm << 16
  txc.freq = *rc::gen::element<int64_t>(-max_freq, 0, max_freq);
  txc.constant = *rc::gen::element<int64_t>(0, 2, tk::kMaxTc);
  txc.offset = *rc::gen::element<int64_t>(-tk::kMaxPhase, -tk::kMaxPhase / 2, 0,
                                          tk::kMaxPhase / 2, tk::kMaxPhase);
  RC_ASSERT(k.Adjtimex(&txc, now) >= 0);

  const tk::Clocksource& clock = *k.timekeeper().tkr_mono.clock;
  const uint64_t ci = k.timekeeper().cycle_interval;
  bool beyond = false;
  bool checked_beyond_once = false;
  for (int i = 0; i < 3 * hz; ++i) {
    now = (now + ci) & tsc->mask;
    k.Advance(tk::AdvanceMode::kTick, now);
    const int64_t moved = static_cast<int64_t>(k.timekeeper().tkr_mono.mult) -
                          static_cast<int64_t>(clock.mult);
    const int64_t distance = moved < 0 ? -moved : moved;
    if (distance > static_cast<int64_t>(clock.maxadj)) {
      checked_beyond_once = checked_beyond_once || beyond;
      beyond = true;
    }
    // The warning is printed in the tick that first moves mult past maxadj,
    // not later.
    RC_ASSERT(Warnings(k) == (beyond ? 1 : 0));
  }
  RC_CLASSIFY(beyond, "mult past maxadj");
  RC_CLASSIFY(checked_beyond_once, "past it in more than one tick");
  RC_CLASSIFY(txc.tick != user_tick, "ADJ_TICK off nominal");
}

}  // namespace
}  // namespace vdsolab
