// The coarse clocks going back after a mid-interval frequency raise, and the
// first fix for it (docs/findings.md):
// - before 6.15 the coarse clocks read xtime_nsec, which adjtimex()'s
//   TK_ADV_FREQ lowers when it raises mult between ticks (Lei Chen's
//   report against 6.14): skew_consistency's flips catch CLOCK_*_COARSE
//   going back;
// - 757b000f7b93 (6.15-rc1) fixed that by forwarding the timekeeper and
//   clearing ntp_error in TK_ADV_FREQ; the coarse clocks stay in order,
//   but freq-step under an NTP client's update rate (64 adjtimex() a
//   second, as in Miroslav Lichvar's report) misses its 0.02 ppm limit. It
//   was reverted (324a2219ba38); 6.15 kept coarse_nsec instead.

#include <gtest/gtest.h>

#include "absl/strings/str_format.h"
#include "common/rng.h"
#include "history/history.h"
#include "kselftest/consistency.h"
#include "kselftest/freq_step.h"
#include "timekeeper/timex.h"

namespace vdsolab::history {
namespace {

using kselftest::SimHost;
using kselftest::SimHostOptions;

// skew_consistency.c's flips on a coarse clock for 60 s.
bool CoarseGoesBack(SimHost& host, std::string* what) {
  int ppm = 500;
  uint64_t next_flip = 0;
  Rng wake = Rng::Deferred(0x5ce3, 615);
  auto flip = [&] {
    while (host.now_ns() >= next_flip) {
      ppm = -ppm;
      timekeeper::Timex tx;
      tx.modes = timekeeper::kAdjFrequency;
      tx.freq = int64_t{ppm} << 16;
      host.Adjtimex(&tx);
      // usleep(500000) wakes a little late, at no fixed phase of the
      // tick (seeded: up to one tick).
      next_flip = host.now_ns() + 500000000 + wake.InRange(0, 3999999);
    }
  };
  flip();
  for (ClockId clock : {kClockRealtimeCoarse, kClockMonotonicCoarse}) {
    const kselftest::ConsistencyResult r = kselftest::ConsistencyTest(
        host, clock, 60, 4000000, 615, flip, [&] { return next_flip; });
    if (!r.ok) {
      *what = r.failure;
      return true;
    }
  }
  *what = "both coarse clocks in order through 60 s of flips each";
  return false;
}

// The era before coarse_nsec, as 6.14 shipped it (mainline's
// timekeeping_apply_adjustment()).
SimHostOptions Era614() {
  SimHostOptions o;
  // A TSC 0.4 ppm faster than its calibration (as real calibrations are):
  // the timekeeper accumulates at every tick, so adjtimex() calls land
  // with less than an interval unaccumulated. (With the calibration
  // exact, cycle_interval rounds to one cycle more than a tick, the
  // timekeeper lags a tick behind and every adjtimex() accumulates first.)
  o.tsc_hz = 2600001000;
  o.profile.coarse_nsec = false;
  o.profile.aux_clocks = false;
  o.profile.apply_adjustment_ntp_error = false;
  return o;
}

TEST(CoarseBack, Before615TheCoarseClocksGoBackAfterAFrequencyRaise) {
  const Verdict on = RunCheck(Era614(), CoarseGoesBack);
  Print("coarse clocks from xtime_nsec (<6.15)", "on", on);
  SimHostOptions fixed = Era614();
  fixed.profile.coarse_nsec = true;
  const Verdict off = RunCheck(fixed, CoarseGoesBack);
  Print("coarse clocks from xtime_nsec (<6.15)", "off (coarse_nsec)", off);
  EXPECT_TRUE(on.caught);
  EXPECT_FALSE(off.caught) << off.what;
}

bool FreqStepFails(SimHost& host, std::string* what) {
  const kselftest::FreqStepResult r =
      kselftest::RunFreqStep(host.options(), 20251201, 64);
  host.Sleep(r.simulated_ns);  // Report the freq-step run's time.
  *what = absl::StrFormat(
      "freq-step with 64 updates/s: %d of %d runs fail, worst |freq error| "
      "%.4f ppm (limit 0.02)",
      r.fails, r.runs, 1e6 * r.worst_freq_error);
  return r.fails > 0;
}

TEST(CoarseBack, TheFirstFixKeptCoarseClocksInOrderButBrokeFreqStep) {
  SimHostOptions first_fix = Era614();
  first_fix.profile.defects.adjtimex_forwards_and_clears_error = true;
  const Verdict coarse = RunCheck(first_fix, CoarseGoesBack);
  Print("757b000f7b93 (forward in TK_ADV_FREQ)", "coarse monotonicity", coarse);
  EXPECT_FALSE(coarse.caught) << coarse.what;
  const Verdict on = RunCheck(first_fix, FreqStepFails);
  Print("757b000f7b93 (forward in TK_ADV_FREQ)", "on", on);
  EXPECT_TRUE(on.caught) << on.what;
  const Verdict off = RunCheck(Era614(), FreqStepFails);
  Print("757b000f7b93 (forward in TK_ADV_FREQ)", "off", off);
  EXPECT_FALSE(off.caught) << off.what;
}

}  // namespace
}  // namespace vdsolab::history
