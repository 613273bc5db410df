// tools/testing/selftests/timers/valid-adjtimex.c in simulated time, and
// the rest of adjtimex()'s input domain: every request the kernel accepts,
// refuses (-EINVAL) or clamps, with the read-back it gives.

#include <gtest/gtest.h>

#include <climits>
#include <cstdio>

#include "kselftest/sim_host.h"
#include "timekeeper/timex.h"

namespace vdsolab::kselftest {
namespace {

using timekeeper::Timex;
namespace tk = timekeeper;

constexpr int64_t kShiftedPpm = 1 << 16;

int SetFreq(SimHost& host, int64_t freq, Timex* readback) {
  Timex txc;
  txc.modes = tk::kAdjFrequency;
  txc.freq = freq;
  const int ret = host.Adjtimex(&txc);
  *readback = Timex{};
  host.Adjtimex(readback);
  return ret;
}

TEST(ValidAdjtimex, FrequenciesInRangeAreSetOutOfRangeClampedInvalidRefused) {
  SimHost host;
  Timex clear;
  clear.modes = tk::kAdjStatus;
  host.Adjtimex(&clear);
  const int64_t valid[] = {-499, -450, -400, -350, -300, -250, -200, -150,
                           -100, -75,  -50,  -25,  -10,  -5,   -1,   1,
                           5,    10,   25,   50,   75,   100,  150,  200,
                           250,  300,  350,  400,  450,  499};
  int warnings = 0;
  for (int64_t ppm : valid) {
    Timex rb;
    ASSERT_GE(SetFreq(host, ppm * kShiftedPpm, &rb), 0) << ppm;
    // The test only warns when the read-back differs.
    warnings += rb.freq != ppm * kShiftedPpm;
  }
  Timex rb;
  ASSERT_GE(SetFreq(host, -1000, &rb), 0);  // valid_freq[] has -1000 too.
  warnings += rb.freq != -1000;
  for (int64_t ppm : {-1000, -550, 550, 1000}) {
    ASSERT_GE(SetFreq(host, ppm * kShiftedPpm, &rb), 0) << ppm;
    EXPECT_NE(rb.freq, ppm * kShiftedPpm) << "out of range value set";
    EXPECT_EQ(rb.freq, (ppm < 0 ? -500 : 500) * kShiftedPpm);
  }
  for (int64_t freq : {LONG_MAX, LONG_MIN}) {
    EXPECT_LT(SetFreq(host, freq, &rb), 0) << freq;
  }
  std::printf(
      "valid-adjtimex ADJ_FREQ: 31 valid, 4 clamped, 2 refused; "
      "%d read-back warnings\n",
      warnings);
  EXPECT_EQ(warnings, 0);
}

int SetOffset(SimHost& host, int64_t offset, bool nano) {
  Timex txc;
  txc.modes = tk::kAdjSetoffset | (nano ? tk::kAdjNano : 0);
  const int64_t unit = nano ? 1000000000 : 1000000;
  txc.time.tv_sec = offset / unit;
  txc.time.tv_usec = offset % unit;
  if (offset < 0 && txc.time.tv_usec != 0) {
    txc.time.tv_sec -= 1;
    txc.time.tv_usec += unit;
  }
  return host.ClockAdjtime(kClockRealtime, &txc);
}

int SetBadOffset(SimHost& host, int64_t sec, int64_t usec, bool nano) {
  Timex txc;
  txc.modes = tk::kAdjSetoffset | (nano ? tk::kAdjNano : 0);
  txc.time = {sec, usec};
  return host.ClockAdjtime(kClockRealtime, &txc);
}

TEST(ValidAdjtimex, SetoffsetTakesNormalisedOffsetsAndRefusesTheRest) {
  SimHost host;
  host.Sleep(2000000000);
  constexpr int64_t kNs = 1000000000, kUs = 1000000;
  for (int64_t off : {kNs - 1, -kNs + 1, -kNs - 1, 5 * kNs, -5 * kNs,
                      5 * kNs + kNs / 2, -5 * kNs - kNs / 2}) {
    EXPECT_GE(SetOffset(host, off, true), 0) << off;
  }
  for (int64_t off : {kUs - 1, -kUs + 1, -kUs - 1, 5 * kUs, -5 * kUs,
                      5 * kUs + kUs / 2, -5 * kUs - kUs / 2}) {
    EXPECT_GE(SetOffset(host, off, false), 0) << off;
  }
  EXPECT_LT(SetBadOffset(host, 0, -1, true), 0);
  EXPECT_LT(SetBadOffset(host, 0, -1, false), 0);
  EXPECT_LT(SetBadOffset(host, 0, 2 * kNs, true), 0);
  EXPECT_LT(SetBadOffset(host, 0, 2 * kUs, false), 0);
  EXPECT_LT(SetBadOffset(host, 0, kNs, true), 0);
  EXPECT_LT(SetBadOffset(host, 0, kUs, false), 0);
  EXPECT_LT(SetBadOffset(host, 0, -kNs, true), 0);
  EXPECT_LT(SetBadOffset(host, 0, -kUs, false), 0);
}

// Beyond the kernel's test: the other modes' edges.
TEST(ValidAdjtimex, TheOtherModesAcceptRefuseAndClampAsTheKernelDoes) {
  SimHost host;
  Timex txc;
  for (int64_t tick : {8999, 11001, 0, -1}) {
    txc = Timex{};
    txc.modes = tk::kAdjTick;
    txc.tick = tick;
    EXPECT_EQ(host.Adjtimex(&txc), -kEinval) << tick;
  }
  for (int64_t tick : {9000, 11000, 10000}) {
    txc = Timex{};
    txc.modes = tk::kAdjTick;
    txc.tick = tick;
    EXPECT_GE(host.Adjtimex(&txc), 0) << tick;
    EXPECT_EQ(txc.tick, tick);
  }
  txc = Timex{};
  txc.modes = tk::kAdjAdjtime;  // Without the offset bit: still adjtime().
  txc.offset = 0;
  EXPECT_GE(host.Adjtimex(&txc), 0);
  txc = Timex{};
  txc.modes = tk::kAdjMaxerror | tk::kAdjEsterror;
  txc.maxerror = -5;
  txc.esterror = LLONG_MAX;
  host.Adjtimex(&txc);
  EXPECT_EQ(txc.maxerror, 0);
  EXPECT_EQ(txc.esterror, tk::kNtpPhaseLimit);
  txc = Timex{};
  txc.modes = tk::kAdjTimeconst;
  txc.constant = -1;
  host.Adjtimex(&txc);
  EXPECT_EQ(txc.constant, 4);  // Clamped to 0, +4 in microsecond mode.
  txc = Timex{};
  txc.modes = tk::kAdjTai;
  txc.constant = 100001;
  host.Adjtimex(&txc);
  EXPECT_EQ(txc.tai, 0);  // Ignored, not refused.
  txc = Timex{};
  txc.modes = tk::kAdjStatus | tk::kAdjOffset;
  txc.status = tk::kStaPll;
  txc.offset = 2000000;  // 2 s in us: clamped to MAXPHASE.
  host.Adjtimex(&txc);
  EXPECT_EQ(txc.offset, 500000);
  txc = Timex{};
  txc.modes = tk::kAdjOffsetSingleshot;
  txc.offset = 1234;
  host.Adjtimex(&txc);
  EXPECT_EQ(txc.offset, 0);  // The previous adjtime() slew.
  txc = Timex{};
  txc.modes = tk::kAdjOffsetSsRead;
  host.Adjtimex(&txc);
  EXPECT_EQ(txc.offset, 1234);
  EXPECT_EQ(txc.tolerance, 500 * kShiftedPpm);
  EXPECT_EQ(txc.precision, 1);
}

}  // namespace
}  // namespace vdsolab::kselftest
