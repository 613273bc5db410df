// tools/testing/selftests/timers/skew_consistency.c in simulated time: the
// frequency flips between +500 and -500 ppm every 0.5 s while
// inconsistency-check reads a clock back to back; every clock must stay in
// order. The kernel's test runs CLOCK_MONOTONIC for 600 s (and, since
// 6.15, other clock ids too); here MONOTONIC for 600 s and every other
// clock the vDSO serves for 60 s.

#include <gtest/gtest.h>

#include <cstdio>

#include "kselftest/consistency.h"
#include "timekeeper/timex.h"

namespace vdsolab::kselftest {
namespace {

ConsistencyResult SkewConsistency(SimHost& host, ClockId clock, int64_t seconds,
                                  int* flips) {
  int ppm = 500;
  uint64_t next_flip = host.now_ns();
  auto flip = [&] {
    while (host.now_ns() >= next_flip) {
      ppm = -ppm;
      timekeeper::Timex tx;
      tx.modes = timekeeper::kAdjFrequency;
      tx.freq = int64_t{ppm} << 16;
      host.Adjtimex(&tx);
      next_flip = host.now_ns() + 500000000;
      ++*flips;
    }
  };
  flip();
  return ConsistencyTest(host, clock, seconds, 4000000, 20251201, flip);
}

TEST(SkewConsistency, MonotonicStaysInOrderThroughFrequencyFlips) {
  SimHost host;
  int flips = 0;
  const ConsistencyResult r =
      SkewConsistency(host, kClockMonotonic, 600, &flips);
  std::printf("CLOCK_MONOTONIC, 600 s, %d flips: %s, %llu reads\n", flips,
              r.ok ? "in order" : r.failure.c_str(),
              static_cast<unsigned long long>(r.reads));
  EXPECT_TRUE(r.ok) << r.failure;
}

TEST(SkewConsistency, EveryVdsoClockStaysInOrderThroughFrequencyFlips) {
  for (ClockId clock : kVdsoServedClocks) {
    if (clock == kClockMonotonic) continue;
    SimHost host;
    int flips = 0;
    const ConsistencyResult r = SkewConsistency(host, clock, 60, &flips);
    std::printf("%s, 60 s, %d flips: %s, %llu reads\n",
                ClockName(clock).c_str(), flips,
                r.ok ? "in order" : r.failure.c_str(),
                static_cast<unsigned long long>(r.reads));
    EXPECT_TRUE(r.ok) << r.failure;
  }
}

}  // namespace
}  // namespace vdsolab::kselftest
