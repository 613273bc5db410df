// tools/testing/selftests/timers/set-tai.c in simulated time.

#include <gtest/gtest.h>

#include "kselftest/sim_host.h"
#include "timekeeper/timex.h"

namespace vdsolab::kselftest {
namespace {

TEST(SetTai, TaiOffsetsCanBeProperlySet) {
  SimHost host;
  timekeeper::Timex get;
  host.Adjtimex(&get);
  EXPECT_EQ(get.tai, 0);  // "tai offset started at 0"
  for (int i = 1; i <= 60; ++i) {
    timekeeper::Timex set;
    set.modes = timekeeper::kAdjTai;
    set.constant = i;
    host.Adjtimex(&set);
    get = timekeeper::Timex{};
    host.Adjtimex(&get);
    ASSERT_EQ(get.tai, i);
    // Beyond the test: CLOCK_TAI moved with it, through the vDSO.
    const ClockResult tai = host.Gettime(kClockTai);
    const ClockResult real = host.Gettime(kClockRealtime);
    ASSERT_EQ(tai.ret, 0);
    const int64_t diff = TimespecDiffNs(tai.ts, real.ts);
    ASSERT_GT(diff, int64_t{i} * 1000000000 - 1000);
    ASSERT_LE(diff, int64_t{i} * 1000000000);
  }
}

}  // namespace
}  // namespace vdsolab::kselftest
