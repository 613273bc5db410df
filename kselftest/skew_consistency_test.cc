// tools/testing/selftests/timers/skew_consistency.c in simulated time: the
// frequency flips between +500 and -500 ppm every 0.5 s while
// inconsistency-check reads a clock back to back; every clock must stay in
// order. The kernel's test runs CLOCK_MONOTONIC for 600 s (and, since
// 6.15, other clock ids too); here MONOTONIC for 600 s and every other
// clock the vDSO serves for 60 s.

#include <gtest/gtest.h>

#include <cstdio>

#include "common/rng.h"
#include "kselftest/consistency.h"
#include "timekeeper/timex.h"

namespace vdsolab::kselftest {
namespace {

ConsistencyResult SkewConsistency(SimHost& host, ClockId clock, int64_t seconds,
                                  int* flips) {
  int ppm = 500;
  uint64_t next_flip = host.now_ns();
  Rng wake = Rng::Deferred(0x5ce3, static_cast<uint64_t>(clock));
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
      ++*flips;
    }
  };
  flip();
  return ConsistencyTest(host, clock, seconds, 4000000, 20251201, flip,
                         [&] { return next_flip; });
}

// A TSC 0.4 ppm faster than its calibration, as real ones are: adjtimex()
// then lands at every phase of the accumulation (with an exact calibration
// cycle_interval rounds a cycle past the tick and the timekeeper lags a
// whole tick, so each adjtimex() accumulates first).
SimHostOptions Machine() {
  SimHostOptions o;
  o.tsc_hz = 2600001000;
  return o;
}

TEST(SkewConsistency, MonotonicStaysInOrderThroughFrequencyFlips) {
  SimHost host(Machine());
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
    SimHost host(Machine());
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
