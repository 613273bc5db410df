#include "timekeeper/posix_clocks.h"

#include <gtest/gtest.h>

#include <climits>

#include "timekeeper/clocksource.h"

namespace vdsolab::timekeeper {
namespace {

class PosixClocksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cs = MakeTscClocksource(2600000);
    ASSERT_TRUE(cs.ok());
    tk_ = std::make_unique<Timekeeping>(*cs, 250, nullptr);
    tk_->Init(0, {1700000000, 0}, {42, 0});
    ctx_.cycles = 2600000000ull;  // One second after Init.
    ctx_.process_cputime_ns = 1500000000;
    ctx_.thread_cputime_ns = 700;
  }
  ClockResult Get(ClockId id) { return SysClockGettime(*tk_, id, ctx_); }

  std::unique_ptr<Timekeeping> tk_;
  SyscallContext ctx_;
};

TEST_F(PosixClocksTest, TimekeeperClocksReadTheTimekeeper) {
  // One second of a 2.6 GHz counter at the clocksource's mult/shift: mult
  // rounds 2^24 / 2.6 down, so slightly under a second.
  const Clocksource& cs = tk_->clocksource();
  const int64_t ns = static_cast<int64_t>(
      (static_cast<unsigned __int128>(ctx_.cycles) * cs.mult) >> cs.shift);
  ASSERT_LT(ns, 1000000000);
  ASSERT_GT(ns, 999999000);
  EXPECT_EQ(Get(kClockRealtime), ClockResult::Ok({1700000000, ns}));
  EXPECT_EQ(Get(kClockMonotonic), ClockResult::Ok({42, ns}));
  EXPECT_EQ(Get(kClockMonotonicRaw), ClockResult::Ok({0, ns}));
  EXPECT_EQ(Get(kClockBoottime), ClockResult::Ok({42, ns}));
  EXPECT_EQ(Get(kClockTai), ClockResult::Ok({1700000000, ns}));
  // No tick has run: the coarse clocks still show Init's time.
  EXPECT_EQ(Get(kClockRealtimeCoarse), ClockResult::Ok({1700000000, 0}));
  EXPECT_EQ(Get(kClockMonotonicCoarse), ClockResult::Ok({42, 0}));
}

TEST_F(PosixClocksTest, CpuClocksReturnTheTasksCpuTime) {
  EXPECT_EQ(Get(kClockProcessCputimeId), ClockResult::Ok({1, 500000000}));
  EXPECT_EQ(Get(kClockThreadCputimeId), ClockResult::Ok({0, 700}));
  // MAKE_PROCESS_CPUCLOCK(0, CPUCLOCK_SCHED) == -6 (the host answers 0);
  // MAKE_THREAD_CPUCLOCK(0, CPUCLOCK_SCHED) == -2.
  EXPECT_EQ(Get(-6), ClockResult::Ok({1, 500000000}));
  EXPECT_EQ(Get(-2), ClockResult::Ok({0, 700}));
  // The same clock for this thread's id, and for another (unknown) task.
  EXPECT_EQ(Get((~ctx_.tid << 3) | 4 | 2), ClockResult::Ok({0, 700}));
  EXPECT_EQ(Get((~12345 << 3) | 4 | 2), ClockResult::Error(-kEinval));
}

TEST_F(PosixClocksTest, InvalidIdsAreEinvalAsOnTheHost) {
  // Values observed on the project's 6.18 host (no RTC, aux clocks off).
  for (ClockId id : {kClockRealtimeAlarm, kClockBoottimeAlarm, kClockSgiCycle,
                     12, 15, 16, 23, 24, -1, INT_MIN, INT_MAX}) {
    EXPECT_EQ(Get(id), ClockResult::Error(-kEinval)) << id;
  }
}

TEST_F(PosixClocksTest, AlarmClocksWorkWithAnRtc) {
  ctx_.has_rtc = true;
  EXPECT_EQ(Get(kClockRealtimeAlarm), Get(kClockRealtime));
  EXPECT_EQ(Get(kClockBoottimeAlarm), Get(kClockBoottime));
  EXPECT_EQ(Get(kClockRealtimeAlarm).ret, 0);
}

TEST_F(PosixClocksTest, GettimeofdayIsRealtimeInMicrosecondsTruncated) {
  const ClockResult rt = Get(kClockRealtime);
  ASSERT_EQ(rt.ret, 0);
  const GtodResult g = SysGettimeofday(tk_->timekeeper(), ctx_);
  EXPECT_EQ(g.ret, 0);
  EXPECT_EQ(g.tv_sec, 1700000000);
  // 0.999999xxx s: the microseconds truncate, never round up to a second.
  EXPECT_EQ(g.tv_usec, rt.ts.tv_nsec / 1000);
  EXPECT_EQ(g.tv_usec, 999999);
  EXPECT_EQ(g.tz_minuteswest, 0);
  EXPECT_EQ(g.tz_dsttime, 0);
  // time() is the last update's seconds, whatever the counter says.
  EXPECT_EQ(SysTime(tk_->timekeeper()), 1700000000);
}

TEST_F(PosixClocksTest, GetresByKclock) {
  // hrtimer clocks: hrtimer_resolution; coarse: TICK_NSEC at HZ,
  // (1e9 + HZ / 2) / HZ: 4 ms at 250, 1 ms at 1000, 3333333 ns at 300.
  for (ClockId id : {kClockRealtime, kClockMonotonic, kClockMonotonicRaw,
                     kClockBoottime, kClockTai}) {
    EXPECT_EQ(SysClockGetres(id, ctx_, 1, 250), ClockResult::Ok({0, 1})) << id;
    EXPECT_EQ(SysClockGetres(id, ctx_, 4000000, 250),
              ClockResult::Ok({0, 4000000}))
        << id;
  }
  for (ClockId id : {kClockRealtimeCoarse, kClockMonotonicCoarse}) {
    EXPECT_EQ(SysClockGetres(id, ctx_, 1, 250), ClockResult::Ok({0, 4000000}));
    EXPECT_EQ(SysClockGetres(id, ctx_, 1, 1000), ClockResult::Ok({0, 1000000}));
    EXPECT_EQ(SysClockGetres(id, ctx_, 1, 300), ClockResult::Ok({0, 3333333}));
  }
  // The calling task's SCHED clocks: 1 ns; PROF and VIRT (which 0 and 1):
  // a tick rounded up, (1e9 + HZ - 1) / HZ.
  EXPECT_EQ(SysClockGetres(kClockProcessCputimeId, ctx_, 1, 300),
            ClockResult::Ok({0, 1}));
  EXPECT_EQ(SysClockGetres(-6, ctx_, 1, 300), ClockResult::Ok({0, 1}));
  EXPECT_EQ(SysClockGetres(~0 << 3, ctx_, 1, 300),
            ClockResult::Ok({0, 3333334}));
  // Another task's clock, an fd clock, and ids without a kclock.
  EXPECT_EQ(SysClockGetres((~12345 << 3) | 4 | 2, ctx_, 1, 250),
            ClockResult::Error(-kEinval));
  for (ClockId id : {kClockRealtimeAlarm, kClockBoottimeAlarm, kClockSgiCycle,
                     12, 15, 16, 23, -1, -5, INT_MIN, INT_MAX}) {
    EXPECT_EQ(SysClockGetres(id, ctx_, 1, 250), ClockResult::Error(-kEinval))
        << id;
  }
  ctx_.has_rtc = true;
  EXPECT_EQ(SysClockGetres(kClockBoottimeAlarm, ctx_, 4000000, 250),
            ClockResult::Ok({0, 4000000}));
  EXPECT_EQ(SysClockGetres(kClockRealtimeAlarm, ctx_, 1, 250),
            ClockResult::Ok({0, 1}));
}

}  // namespace
}  // namespace vdsolab::timekeeper
