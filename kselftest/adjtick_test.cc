// tools/testing/selftests/timers/adjtick.c in simulated time: ADJ_TICK from
// -10% to +10% of the USER_HZ tick in 4 steps each side; the frequency
// MONOTONIC runs at against MONOTONIC_RAW over 15 s must be the tick's
// within 100 ppm, and adjtimex() must read back the tick with no offset or
// frequency.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "kselftest/sim_host.h"
#include "timekeeper/timex.h"

namespace vdsolab::kselftest {
namespace {

int64_t Ns(const Timespec64& t) { return t.tv_sec * 1000000000 + t.tv_nsec; }

void MonotonicAndRaw(SimHost& host, int64_t* mon, int64_t* raw) {
  *mon = Ns(host.Gettime(kClockMonotonic).ts);
  *raw = Ns(host.Gettime(kClockMonotonicRaw).ts);
  int64_t diff = 0;
  for (int i = 0; i < 3; ++i) {
    const int64_t start = Ns(host.Gettime(kClockMonotonic).ts);
    const int64_t mid = Ns(host.Gettime(kClockMonotonicRaw).ts);
    const int64_t end = Ns(host.Gettime(kClockMonotonic).ts);
    if (diff == 0 || end - start < diff) {
      diff = end - start;
      *raw = mid;
      *mon = (start + end) / 2;
    }
  }
}

int64_t PpmDrift(SimHost& host) {
  int64_t mon_start = 0, raw_start = 0, mon_end = 0, raw_end = 0;
  MonotonicAndRaw(host, &mon_start, &raw_start);
  host.Sleep(int64_t{15} * 1000000000);
  MonotonicAndRaw(host, &mon_end, &raw_end);
  const int64_t delta1 = mon_end - mon_start;
  const int64_t delta2 = raw_end - raw_start;
  return (delta1 * 1000000) / delta2 - 1000000;
}

TEST(Adjtick, TheTickSetsTheFrequencyWithinAHundredPpm) {
  SimHost host;
  const int64_t systick = 1000000 / timekeeper::kUserHz;
  const int64_t max = systick / 10;
  const int64_t interval = max / 4;
  int steps = 0;
  for (int64_t tick = systick - max; tick < systick + max; tick += interval) {
    timekeeper::Timex tx1;
    tx1.modes = timekeeper::kAdjTick | timekeeper::kAdjOffset |
                timekeeper::kAdjFrequency | timekeeper::kAdjStatus;
    tx1.status = timekeeper::kStaPll;
    tx1.tick = tick;
    ASSERT_GE(host.Adjtimex(&tx1), 0);
    host.Sleep(1000000000);
    const int64_t ppm = (tick * 1000000) / systick - 1000000;
    const int64_t eppm = PpmDrift(host);
    timekeeper::Timex read;
    host.Adjtimex(&read);
    std::printf("tick %lld: expected %lld ppm, measured %lld ppm\n",
                static_cast<long long>(tick), static_cast<long long>(ppm),
                static_cast<long long>(eppm));
    EXPECT_EQ(read.offset, 0);
    EXPECT_EQ(read.freq, 0);
    EXPECT_EQ(read.tick, tick);
    EXPECT_LE(std::llabs(eppm - ppm), 100) << tick;
    ++steps;
  }
  EXPECT_EQ(steps, 8);
}

}  // namespace
}  // namespace vdsolab::kselftest
