// Corners of the kernel's timekeeping the timekeeper fuzzer ran into, each
// the kernel's own behaviour as its source reads (docs/findings.md).

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/clock_result.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/profile.h"
#include "timekeeper/readers.h"
#include "timekeeper/timekeeping.h"

namespace vdsolab::timekeeper {
namespace {

constexpr int64_t kBillion = 1000000000;

// Counter cycles of `ns` at 2.6 GHz.
uint64_t Cycles(uint64_t ns) { return ns * 26 / 10; }

std::unique_ptr<Timekeeping> Make(const TimekeeperProfile& profile,
                                  Timespec64 wall) {
  auto cs = MakeTscClocksource(2600000);
  EXPECT_TRUE(cs.ok());
  auto tk = std::make_unique<Timekeeping>(*cs, 250, nullptr, profile);
  tk->Init(0, wall, {3, 0});
  return tk;
}

// Ticks every 4 ms (HZ=250) a little late: 3.9 ms of leftover cycles for
// timekeeping_adjust() to scale by each mult change.
void TickTo(Timekeeping& tk, uint64_t* now, uint64_t to) {
  const uint64_t step = Cycles(4000000);
  while (*now + step <= to) {
    *now += step;
    tk.Advance(AdvanceMode::kTick, *now + Cycles(3900000));
  }
}

// Runs the PLL with a large phase offset, so that the tick length (and so
// mult) changes every second, until timekeeping_adjust() underflows
// xtime_nsec at the tick after a second boundary and sets
// skip_second_overflow. Returns false if it never does in 60 s.
bool RunUntilSkip(Timekeeping& tk, uint64_t* now) {
  Timex pll;
  pll.modes = kAdjStatus | kAdjOffset | kAdjNano;
  pll.status = kStaPll;
  pll.offset = 400000000;  // 0.4 s, slewed over the time constant.
  tk.Adjtimex(&pll, *now);
  for (int i = 0; i < 15000; ++i) {
    TickTo(tk, now, *now + Cycles(4000000));
    if (tk.timekeeper().skip_second_overflow != 0) return true;
  }
  return false;
}

// Deletes the leap second of the day `secs` (a REALTIME 3 s before a
// midnight) is in: settimeofday(), STA_DEL, five seconds of ticks. Returns
// how far REALTIME moved against MONOTONIC, in seconds.
int64_t DeleteLeapAfterSettime(Timekeeping& tk, uint64_t* now, int64_t secs) {
  EXPECT_EQ(tk.SetTimeOfDay({secs, 500000000}, *now + Cycles(3900000)), 0);
  const int64_t wtm = tk.timekeeper().wall_to_monotonic.tv_sec;
  Timex del;
  del.modes = kAdjStatus;
  del.status = kStaDel;
  EXPECT_GE(tk.Adjtimex(&del, *now + Cycles(3900000)), 0);
  TickTo(tk, now, *now + Cycles(5ull * kBillion));
  return wtm - tk.timekeeper().wall_to_monotonic.tv_sec;
}

// timekeeping_adjust() sets skip_second_overflow when a mult change right
// after a second boundary underflows xtime_nsec: that second was already
// handed to second_overflow(), so the next crossing must not be. Only
// tk_setup_internals() clears the flag; a settimeofday() in between keeps
// it, and the first second of the new time skips second_overflow(). A
// deletion armed at 23:59:58 is then armed at 23:59:59, for the next day.
TEST(Corners, ASettimeKeepsSkipSecondOverflowAndALeapMovesADay) {
  const int64_t midnight = int64_t{1764460800} + 86400;
  uint64_t now = 0;
  auto tk = Make({}, {1764460800, 0});
  ASSERT_TRUE(RunUntilSkip(*tk, &now));
  EXPECT_EQ(DeleteLeapAfterSettime(*tk, &now, midnight - 3), 0);
  EXPECT_EQ(tk->ntp().data().time_state, kTimeDel);
  EXPECT_EQ(tk->ntp().data().next_leap_sec, midnight + 86400 - 1);

  // Without the pending skip the same settime deletes the second.
  uint64_t now2 = 0;
  auto control = Make({}, {1764460800, 0});
  ASSERT_TRUE(RunUntilSkip(*control, &now2));
  TickTo(*control, &now2, now2 + Cycles(1ull * kBillion));
  ASSERT_EQ(control->timekeeper().skip_second_overflow, 0u);
  EXPECT_EQ(DeleteLeapAfterSettime(*control, &now2, midnight - 3), 1);
  EXPECT_EQ(control->ntp().data().time_state, kTimeWait);
}

// Before 6.13 a settime or offset injection the kernel refused after
// forwarding the timekeeper still published it with TK_CLEAR_NTP: the
// refusal cleared the NTP state. 6.13+ restores the shadow.
TEST(Corners, Before613ARefusedOffsetInjectionClearedNtp) {
  for (const char* era : {"6.1", "6.13"}) {
    auto profile = ProfileForEra(era);
    ASSERT_TRUE(profile.ok());
    auto tk = Make(*profile, {1764460800, 0});
    Timex pll;
    pll.modes = kAdjStatus | kAdjFrequency;
    pll.status = kStaPll;
    pll.freq = int64_t{50} << 16;
    tk->Adjtimex(&pll, Cycles(1000000));
    const uint32_t seq = tk->timekeeper().clock_was_set_seq;
    // MONOTONIC would go negative.
    Timex back;
    back.modes = kAdjSetoffset;
    back.time = {-1764460800 - 100, 0};
    EXPECT_EQ(tk->Adjtimex(&back, Cycles(2000000)), -kEinval) << era;
    const bool old = std::string(era) == "6.1";
    EXPECT_EQ((tk->ntp().data().time_status & kStaUnsync) != 0, old) << era;
    EXPECT_EQ(tk->timekeeper().clock_was_set_seq, seq + (old ? 1 : 0)) << era;
    EXPECT_EQ(tk->SetTimeOfDay({1, 0}, Cycles(3000000)), -kEinval) << era;
    EXPECT_EQ(tk->timekeeper().clock_was_set_seq, seq + (old ? 2 : 0)) << era;
  }
}

// clock_settime() on an aux clock refuses times past TIME_SETTOD_SEC_MAX,
// but ADJ_SETOFFSET on it only refuses a negative result: an offset
// beyond KTIME_SEC_MAX saturates to KTIME_MAX and puts the clock at the
// end of ktime, from where it wraps to a negative time (6.17+).
TEST(Corners, AnAuxClockSetoffsetCanRunItIntoKtimeMax) {
  auto tk = Make({}, {1764460800, 0});
  uint64_t now = Cycles(kBillion);
  tk->Advance(AdvanceMode::kTick, now);
  tk->EnableAux(0, now);
  ASSERT_EQ(tk->AuxSetTime(0, {0, 0}, now), 0);
  EXPECT_EQ(tk->AuxSetTime(0, {kKtimeSecMax - 1, 0}, now), -kEinval);
  Timex far;
  far.modes = kAdjSetoffset | kAdjNano;
  far.time = {kKtimeSecMax + 5, 0};
  EXPECT_GE(tk->AuxAdjtimex(0, &far, now), 0);
  EXPECT_EQ(*KtimeGetAux(tk->aux_timekeeper(0), now), kKtimeMax);
  now += Cycles(1000);
  const Ktime after = *KtimeGetAux(tk->aux_timekeeper(0), now);
  EXPECT_LT(after, 0);  // Wrapped: the aux clock went back 292 years.
}

// A clocksource whose max_cycles is 0 makes timekeeping_forward()'s
// chunked loop (6.10+) add nothing per step: the kernel would spin there.
// The model's loop guard stops it and names it, so a simulation reports a
// livelock finding instead of hanging; every later guarded loop stops too.
TEST(TimekeepingCorners, EndlessLoopIsStoppedAndNamed) {
  auto cs = MakeTscClocksource(2600000);
  ASSERT_TRUE(cs.ok());
  Clocksource broken = *cs;
  broken.max_cycles = 0;
  Timekeeping tk(broken, 250, nullptr, TimekeeperProfile{});
  tk.Init(0, {1764460800, 0}, {});
  EXPECT_EQ(tk.stalled_loop(), nullptr);
  tk.SetTimeOfDay({1764460900, 0}, Cycles(5000000));
  ASSERT_NE(tk.stalled_loop(), nullptr);
  EXPECT_EQ(std::string(tk.stalled_loop()), "timekeeping_forward()");
  // Still answers afterwards (bounded), and names the first loop only.
  tk.Advance(AdvanceMode::kTick, Cycles(3 * kBillion));
  EXPECT_EQ(std::string(tk.stalled_loop()), "timekeeping_forward()");
}

}  // namespace
}  // namespace vdsolab::timekeeper
