// tools/testing/selftests/timers/inconsistency-check.c in simulated time:
// every clock id from CLOCK_REALTIME to CLOCK_TAI (CLOCK_HWSPECIFIC and the
// ones clock_gettime() refuses are skipped, as there) read back to back,
// always in order; on a steady machine, with NTP steering the frequency,
// and with the PLL slewing a phase offset.

#include <gtest/gtest.h>

#include <cstdio>

#include "kselftest/consistency.h"
#include "timekeeper/timex.h"

namespace vdsolab::kselftest {
namespace {

constexpr ClockId kHwSpecific = 10;  // CLOCK_HWSPECIFIC (SGI_CYCLE)

void CheckAllClocks(SimHost& host, const char* what) {
  for (ClockId clock = kClockRealtime; clock <= kClockTai; ++clock) {
    if (clock == kHwSpecific) continue;
    // The default -t 10 s of the clock's own time.
    const ConsistencyResult r =
        ConsistencyTest(host, clock, 10, 2000000, 20251201);
    if (r.clock_failed) {
      std::printf("%-24s %s: SKIP (clock_gettime() refused)\n",
                  ClockName(clock).c_str(), what);
      continue;
    }
    std::printf("%-24s %s: %s, %llu reads\n", ClockName(clock).c_str(), what,
                r.ok ? "in order" : r.failure.c_str(),
                static_cast<unsigned long long>(r.reads));
    EXPECT_TRUE(r.ok) << r.failure;
  }
}

TEST(InconsistencyCheck, EveryClockStaysInOrderOnASteadyMachine) {
  SimHost host;
  CheckAllClocks(host, "steady");
}

TEST(InconsistencyCheck, EveryClockStaysInOrderWhileNtpSteers) {
  SimHost host;
  timekeeper::Timex txc;
  txc.modes = timekeeper::kAdjFrequency | timekeeper::kAdjStatus |
              timekeeper::kAdjOffset;
  txc.status = timekeeper::kStaPll;
  txc.freq = int64_t{42} << 16;
  txc.offset = -400000;  // The PLL slews -0.4 s.
  ASSERT_GE(host.Adjtimex(&txc), 0);
  CheckAllClocks(host, "NTP +42 ppm, PLL slewing");
}

}  // namespace
}  // namespace vdsolab::kselftest
