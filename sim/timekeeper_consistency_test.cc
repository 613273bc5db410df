// The writer's timekeeper checks (sim/timekeeper_consistency.h): silent on
// the model's own states through ticks, a settime refused below MONOTONIC,
// a leap armed and cleared; each finds the broken state it is there for.

#include "sim/timekeeper_consistency.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "common/clock_result.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/timex.h"

namespace vdsolab::sim {
namespace {

using timekeeper::AdvanceMode;
using timekeeper::HrtimerOffsets;
using timekeeper::Timekeeper;
using timekeeper::Timekeeping;

// 4 ms at 2.6 GHz (HZ 250), and a little: cycle_interval rounds up, so a
// tick exactly 4 ms in would find less than one interval to accumulate.
constexpr uint64_t kTick = 2600000 * 4 + 1000;

class Consistency : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cs = timekeeper::MakeTscClocksource(2600000);
    ASSERT_TRUE(cs.ok());
    tk_ = std::make_unique<Timekeeping>(*cs, 250, nullptr);
    // REALTIME 86399.99 s: a leap asked for by 8 ms is armed by the tick at
    // 12 ms, the first past second 86400.
    tk_->Init(0, {86399, 990000000}, {5, 0});
  }
  // A tick at counter c, checked as the writer checks it.
  void TickAt(uint64_t c) {
    const Timekeeper before = tk_->timekeeper();
    tk_->Advance(AdvanceMode::kTick, c);
    EXPECT_EQ(TickGridMismatch(before, tk_->timekeeper()), "");
    ExpectConsistent(c);
  }
  void ExpectConsistent(uint64_t c) {
    EXPECT_EQ(DerivedStateMismatch(tk_->timekeeper(), tk_->ntp().data()), "");
    EXPECT_EQ(HrtimerViewMismatch(tk_->timekeeper(), c, &hrtimer_), "");
  }
  std::unique_ptr<Timekeeping> tk_;
  HrtimerOffsets hrtimer_;
};

TEST_F(Consistency, SilentOnTheModelsOwnStates) {
  ExpectConsistent(0);
  TickAt(kTick);
  // Refused: REALTIME 3 s is below MONOTONIC (5 s).
  EXPECT_EQ(tk_->SetTimeOfDay({3, 0}, kTick + 777), -kEinval);
  ExpectConsistent(kTick + 777);
  TickAt(2 * kTick);
  timekeeper::Timex leap;
  leap.modes = timekeeper::kAdjStatus;
  leap.status = timekeeper::kStaIns;
  ASSERT_GE(tk_->Adjtimex(&leap, 2 * kTick + 5), 0);
  ExpectConsistent(2 * kTick + 5);
  TickAt(3 * kTick);  // Second 86400 begins: the insertion is armed.
  EXPECT_NE(tk_->timekeeper().next_leap_ktime, kKtimeMax);
  timekeeper::Timex clear;
  clear.modes = timekeeper::kAdjStatus;
  clear.status = 0;
  EXPECT_EQ(tk_->Adjtimex(&clear, 3 * kTick + 9), timekeeper::kTimeIns);
  EXPECT_EQ(tk_->timekeeper().next_leap_ktime, kKtimeMax);
  ExpectConsistent(3 * kTick + 9);
  TickAt(4 * kTick);
}

TEST_F(Consistency, FindsEachBrokenState) {
  TickAt(kTick);
  const Timekeeper good = tk_->timekeeper();
  const timekeeper::NtpData& ntp = tk_->ntp().data();
  Timekeeper bad = good;
  bad.next_leap_ktime = 123;  // An UpdateLeapStateAll() that did not run.
  EXPECT_NE(DerivedStateMismatch(bad, ntp), "");
  bad = good;
  bad.offs_tai += 1000000000;  // TAI moved without tai_offset.
  EXPECT_NE(DerivedStateMismatch(bad, ntp), "");
  bad = good;
  bad.monotonic_to_boot.tv_sec += 1;
  EXPECT_NE(DerivedStateMismatch(bad, ntp), "");
  bad = good;
  bad.ktime_sec += 1;
  EXPECT_NE(DerivedStateMismatch(bad, ntp), "");
  // A tick that accumulated from an unpublished, forwarded shadow.
  bad = good;
  bad.tkr_mono.cycle_last += good.cycle_interval + 17;
  bad.tkr_raw.cycle_last += good.cycle_interval + 17;
  EXPECT_NE(TickGridMismatch(good, bad), "");
  bad.tkr_mono.cycle_last -= 17;
  bad.tkr_raw.cycle_last -= 17;
  EXPECT_EQ(TickGridMismatch(good, bad), "");
  // TAI changed without clock_was_set: the hrtimer cache stays stale.
  HrtimerOffsets cached;
  EXPECT_EQ(HrtimerViewMismatch(good, kTick, &cached), "");
  bad = good;
  bad.tai_offset = 37;
  bad.offs_tai = bad.offs_real + int64_t{37} * 1000000000;
  EXPECT_NE(HrtimerViewMismatch(bad, kTick, &cached), "");
  // Past an armed insertion no tick has applied, hrtimer's offs_real is a
  // second less, as the kernel's: not a finding of this check.
  HrtimerOffsets fresh;
  bad = good;
  bad.next_leap_ktime = 0;
  EXPECT_EQ(HrtimerViewMismatch(bad, kTick, &fresh), "");
}

}  // namespace
}  // namespace vdsolab::sim
