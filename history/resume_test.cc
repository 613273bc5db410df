// Resume after a sub-second sleep, and a clocksource without max_raw_delta
// (docs/findings.md):
// - before 6a669ee8a790 "timekeeping: Prevent time going backwards on
//   resume" (2.6.23), suspend did not account the time since the last tick
//   before resume re-based cycle_last to now: with a persistent clock of
//   whole seconds a sub-second sleep injects nothing, and MONOTONIC (and
//   REALTIME) step back;
// - a clocksource registered with max_raw_delta 0: 6.13's
//   clocksource_delta() reads every interval as negative motion, nothing is
//   ever accumulated, NTP's frequency never reaches mult (raw_skew misses
//   by the whole offset) and the coarse clocks stand still.

#include <gtest/gtest.h>

#include <cstdlib>

#include "absl/strings/str_format.h"
#include "history/history.h"
#include "kselftest/consistency.h"
#include "timekeeper/timex.h"

namespace vdsolab::history {
namespace {

bool MonotonicBackAcrossResume(kselftest::SimHost& host, std::string* what) {
  host.Sleep(1003000000);  // 3 ms after a tick.
  const Timespec64 before = host.Gettime(kClockMonotonic).ts;
  host.Suspend(300000000, {1764460801, 0});  // 0.3 s, the RTC says 0 s.
  const Timespec64 after = host.Gettime(kClockMonotonic).ts;
  *what = absl::StrFormat("MONOTONIC %s before a 0.3 s suspend, %s after",
                          FormatTimespec(before), FormatTimespec(after));
  return !kselftest::InOrder(before, after);
}

TEST(Resume, WithoutForwardingASubSecondSleepSendsTimeBack) {
  kselftest::SimHostOptions on;
  on.profile.defects.suspend_without_forward = true;
  const Verdict v_on = RunCheck(on, MonotonicBackAcrossResume);
  Print("resume re-bases cycle_last without forwarding", "on", v_on);
  const Verdict v_off =
      RunCheck(kselftest::SimHostOptions{}, MonotonicBackAcrossResume);
  Print("resume re-bases cycle_last without forwarding", "off", v_off);
  EXPECT_TRUE(v_on.caught);
  EXPECT_FALSE(v_off.caught) << v_off.what;
}

// raw_skew.c's measurement over 120 s with NTP at +42 ppm, and the coarse
// clock's progress.
bool TimeFrozen(kselftest::SimHost& host, std::string* what) {
  timekeeper::Timex txc;
  txc.modes = timekeeper::kAdjFrequency;
  txc.freq = int64_t{42} << 16;
  host.Adjtimex(&txc);
  const Timespec64 coarse0 = host.Gettime(kClockMonotonicCoarse).ts;
  auto ns = [](const Timespec64& t) {
    return t.tv_sec * 1000000000 + t.tv_nsec;
  };
  const int64_t mon1 = ns(host.Gettime(kClockMonotonic).ts);
  const int64_t raw1 = ns(host.Gettime(kClockMonotonicRaw).ts);
  host.Sleep(int64_t{120} * 1000000000);
  const int64_t mon2 = ns(host.Gettime(kClockMonotonic).ts);
  const int64_t raw2 = ns(host.Gettime(kClockMonotonicRaw).ts);
  const int64_t eppb =
      ((mon2 - mon1) - (raw2 - raw1)) * 1000000000 / (raw2 - raw1);
  const Timespec64 coarse1 = host.Gettime(kClockMonotonicCoarse).ts;
  *what = absl::StrFormat(
      "raw_skew: estimated %d ppb, actual 42000 ppb; MONOTONIC_COARSE %s "
      "then %s 120 s later",
      eppb, FormatTimespec(coarse0), FormatTimespec(coarse1));
  return std::llabs(eppb - 42000) > 1000 || coarse1 == coarse0;
}

TEST(Resume, AClocksourceWithMaxRawDeltaZeroFreezesTheTimekeeper) {
  kselftest::SimHostOptions on;
  on.profile.defects.clocksource_max_raw_delta_zero = true;
  const Verdict v_on = RunCheck(on, TimeFrozen);
  Print("max_raw_delta 0", "on", v_on);
  const Verdict v_off = RunCheck(kselftest::SimHostOptions{}, TimeFrozen);
  Print("max_raw_delta 0", "off", v_off);
  EXPECT_TRUE(v_on.caught);
  EXPECT_FALSE(v_off.caught) << v_off.what;
}

}  // namespace
}  // namespace vdsolab::history
