// tools/testing/selftests/timers/set-2038.c in simulated time: times the
// kernel must refuse (1901, the largest time_t, KTIME_SEC_MAX), then the
// clock set near the edges (1970, 2038 - 600 s, 2038 - 10 s across the
// 32-bit rollover, 2262 - 600 s) with inconsistency-check on
// CLOCK_REALTIME for 20 s after each (the nanosleep tests it also runs are
// not modelled).

#include <gtest/gtest.h>

#include <cstdio>

#include "kselftest/consistency.h"

namespace vdsolab::kselftest {
namespace {

constexpr int64_t kYear1901 = -0x7fffffffL;
constexpr int64_t kYear1970 = 1;
constexpr int64_t kYear2038 = 0x7fffffffL;
constexpr int64_t kYear2262 = kKtimeSecMax;
constexpr int64_t kYearMax = INT64_MAX;

TEST(Set2038, CrazyValuesFailAndTheEdgesStayConsistent) {
  SimHost host;
  host.Sleep(3000000000);  // Up a few seconds, as any machine is.
  EXPECT_NE(host.Settimeofday({kYear1901, 0}), 0);
  EXPECT_NE(host.Settimeofday({kYearMax, 0}), 0);
  EXPECT_NE(host.Settimeofday({kYear2262, 0}), 0);
  for (int64_t t :
       {kYear1970, kYear2038 - 600, kYear2038 - 10, kYear2262 - 600}) {
    const int ret = host.Settimeofday({t, 0});
    const ConsistencyResult r =
        ConsistencyTest(host, kClockRealtime, 20, 2000000, 2038);
    const Timespec64 now = host.Gettime(kClockRealtime).ts;
    std::printf(
        "settimeofday(%#llx) = %d; REALTIME now %s; 20 s: %s, %llu "
        "reads\n",
        static_cast<unsigned long long>(t), ret, FormatTimespec(now).c_str(),
        r.ok ? "in order" : r.failure.c_str(),
        static_cast<unsigned long long>(r.reads));
    EXPECT_TRUE(r.ok) << r.failure;
    if (t == kYear2038 - 10) {
      EXPECT_EQ(ret, 0);
      EXPECT_GT(now.tv_sec, kYear2038);  // Crossed the 32-bit rollover.
    }
  }
}

}  // namespace
}  // namespace vdsolab::kselftest
