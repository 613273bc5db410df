// The timekeeper's events beyond ticks and frequency changes: offset
// injection, TAI, leap seconds, suspend/resume, clocksource changes, era
// profiles and the history defects (timekeeper/timekeeping.h).

#include <gtest/gtest.h>

#include <memory>

#include "common/clock_result.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/timekeeping.h"

namespace vdsolab::timekeeper {
namespace {

constexpr int64_t kBillion = 1000000000;
constexpr uint32_t kKhz = 2600000;  // 2.6 GHz: 2.6 cycles per ns.

__int128 Ns(const Timespec64& t) {
  return static_cast<__int128>(t.tv_sec) * kBillion + t.tv_nsec;
}

// Counter cycles of `ns` at 2.6 GHz.
uint64_t Cycles(uint64_t ns) { return ns * 26 / 10; }

class Events : public ::testing::Test {
 protected:
  void Make(const TimekeeperProfile& profile = {}, bool nonstop = false,
            Timespec64 wall = {1764460800, 0}) {
    auto cs = MakeTscClocksource(kKhz);
    ASSERT_TRUE(cs.ok());
    cs->suspend_nonstop = nonstop;
    tk_ = std::make_unique<Timekeeping>(*cs, 250, nullptr, profile);
    tk_->Init(0, wall, {1, 0});
  }
  // Ticks every 4 ms until counter `to`.
  void TickTo(uint64_t to) {
    const uint64_t step = Cycles(4000000);
    for (uint64_t c = (now_ / step + 1) * step; c <= to; c += step) {
      tk_->Advance(AdvanceMode::kTick, c);
    }
    now_ = to;
  }
  std::unique_ptr<Timekeeping> tk_;
  uint64_t now_ = 0;
};

TEST_F(Events, InjectOffsetStepsRealtimeBoottimeAndTaiNotMonotonic) {
  Make();
  TickTo(Cycles(1500000000));
  const uint64_t c = now_ + 12345;
  const Timespec64 mono = tk_->GetTs64(c);
  const Timespec64 real = tk_->GetRealTs64(c);
  const uint32_t seq = tk_->timekeeper().clock_was_set_seq;
  ASSERT_EQ(tk_->InjectOffset({-3, 250000000}, c), 0);  // -2.75 s
  EXPECT_EQ(tk_->GetTs64(c), mono);
  EXPECT_EQ(Ns(tk_->GetRealTs64(c)), Ns(real) - 2750000000);
  EXPECT_EQ(tk_->timekeeper().clock_was_set_seq, seq + 1);
  EXPECT_NE(tk_->ntp().data().time_status & kStaUnsync, 0);  // NTP cleared.
}

TEST_F(Events, InjectOffsetRefusesWhatTheKernelRefuses) {
  Make();
  TickTo(Cycles(100000000));
  const Timespec64 real = tk_->GetRealTs64(now_);
  EXPECT_EQ(tk_->InjectOffset({0, kBillion}, now_), -kEinval);
  EXPECT_EQ(tk_->InjectOffset({0, -1}, now_), -kEinval);
  // MONOTONIC would go negative: REALTIME before boot.
  EXPECT_EQ(tk_->InjectOffset({-1764460800, 0}, now_), -kEinval);
  // Past TIME_SETTOD_SEC_MAX.
  EXPECT_EQ(tk_->InjectOffset({INT64_MAX / 2, 0}, now_), -kEinval);
  EXPECT_EQ(tk_->GetRealTs64(now_), real);
}

TEST_F(Events, AdjtimexSetoffsetTakesMicrosecondsOrNanoseconds) {
  Make();
  const uint64_t c = Cycles(10000000);
  const Timespec64 real = tk_->GetRealTs64(c);
  Timex txc;
  txc.modes = kAdjSetoffset;
  txc.time = {-1, 999999};  // -1 us
  EXPECT_EQ(tk_->Adjtimex(&txc, c), kTimeError);
  EXPECT_EQ(Ns(tk_->GetRealTs64(c)), Ns(real) - 1000);
  txc = Timex{};
  txc.modes = kAdjSetoffset | kAdjNano;
  txc.time = {0, 5};
  tk_->Adjtimex(&txc, c);
  EXPECT_EQ(Ns(tk_->GetRealTs64(c)), Ns(real) - 995);
  // The read-back reports the time before the injection.
  EXPECT_EQ(txc.time.tv_sec, real.tv_sec);
}

TEST_F(Events, AdjTaiMovesTaiAndPublishes) {
  Make();
  const uint64_t c = Cycles(10000000);
  const Timespec64 tai = tk_->GetClocktaiTs64(c);
  Timex txc;
  txc.modes = kAdjTai;
  txc.constant = 37;
  tk_->Adjtimex(&txc, c);
  EXPECT_EQ(tk_->timekeeper().tai_offset, 37);
  EXPECT_EQ(Ns(tk_->GetClocktaiTs64(c)), Ns(tai) + 37 * kBillion);
  EXPECT_EQ(txc.tai, 37);
}

TEST_F(Events, LeapSecondInsertionRepeatsASecondOfRealtimeOnly) {
  const int64_t midnight = int64_t{1764460800} + 86400;
  Make({}, false, {midnight - 5, 0});
  Timex txc;
  txc.modes = kAdjStatus;
  txc.status = kStaPll | kStaIns;
  ASSERT_EQ(tk_->Adjtimex(&txc, 1), kTimeOk);
  TickTo(Cycles(3000000000ull));
  EXPECT_EQ(tk_->ntp().data().time_state, kTimeIns);
  // The pending insertion in MONOTONIC for the hrtimers.
  const Ktime leap_mono = tk_->timekeeper().next_leap_ktime;
  EXPECT_EQ(leap_mono, midnight * kBillion + tk_->timekeeper().offs_real * -1);

  // Just past midnight, before the tick that applies the leap: the clocks
  // extrapolate past midnight, the hrtimer base is one second earlier.
  TickTo(Cycles(5000000000ull));
  const uint64_t past = now_ + Cycles(2000000);
  EXPECT_GE(tk_->GetRealTs64(past).tv_sec, midnight);
  HrtimerOffsets offs;
  const Ktime mono_now =
      KtimeGetUpdateOffsetsNow(tk_->timekeeper(), past, &offs);
  EXPECT_LT(mono_now + offs.offs_real, midnight * kBillion);

  const Timespec64 mono_before = tk_->GetTs64(past);
  const Timespec64 tai_before = tk_->GetClocktaiTs64(past);
  const uint32_t seq = tk_->timekeeper().clock_was_set_seq;
  TickTo(Cycles(5004000000ull));
  EXPECT_EQ(tk_->GetRealTs64(now_).tv_sec, midnight - 1);  // 23:59:60
  EXPECT_GT(Ns(tk_->GetTs64(now_)), Ns(mono_before));
  EXPECT_GT(Ns(tk_->GetClocktaiTs64(now_)), Ns(tai_before));
  EXPECT_EQ(tk_->timekeeper().tai_offset, 1);
  EXPECT_EQ(tk_->timekeeper().clock_was_set_seq, seq + 1);
  TickTo(Cycles(7000000000ull));
  EXPECT_EQ(tk_->ntp().data().time_state, kTimeWait);
}

TEST_F(Events, ResumeInjectsSleepIntoRealtimeAndBoottimeNotMonotonic) {
  Make({}, /*nonstop=*/true);
  TickTo(Cycles(1000000000));
  const uint64_t s = now_ + Cycles(1234567);
  const Timespec64 mono = tk_->GetTs64(s), raw = tk_->GetRawTs64(s),
                   real = tk_->GetRealTs64(s), boot = tk_->GetBoottimeTs64(s);
  tk_->Suspend(s, {});
  const uint64_t r = s + Cycles(90000000000ull);  // 90 s asleep.
  const Timespec64 slept = tk_->Resume({r, {}});
  // The sleep as the nonstop TSC's mult/shift convert it.
  const Clocksource& cs = tk_->clocksource();
  const __int128 want = static_cast<__int128>(
      (static_cast<unsigned __int128>(r - s) * cs.mult) >> cs.shift);
  EXPECT_EQ(Ns(slept), want);
  EXPECT_EQ(tk_->GetTs64(r), mono);
  EXPECT_EQ(tk_->GetRawTs64(r), raw);
  EXPECT_EQ(Ns(tk_->GetRealTs64(r)), Ns(real) + Ns(slept));
  EXPECT_EQ(Ns(tk_->GetBoottimeTs64(r)), Ns(boot) + Ns(slept));
  EXPECT_EQ(tk_->timekeeper().tkr_mono.cycle_last, r);
  EXPECT_EQ(tk_->timekeeper().monotonic_to_boot, slept);
}

TEST_F(Events, ThePersistentClockGivesWholeSecondsAndSubSecondSleepsNothing) {
  Make();
  TickTo(Cycles(1000000000));
  const uint64_t s = now_ + 777;
  const Timespec64 real = tk_->GetRealTs64(s);
  tk_->Suspend(s, {1764460801, 0});
  EXPECT_EQ(Ns(tk_->Resume({s + Cycles(400000000), {1764460801, 0}})), 0);
  EXPECT_EQ(tk_->GetRealTs64(s + Cycles(400000000)), real);
  // The next suspend compensates the RTC's whole seconds by how far the
  // system clock was ahead of it (timekeeping_suspend()'s delta_delta):
  // after resume REALTIME is the RTC's reading again.
  tk_->Suspend(s + Cycles(400000000), {1764460801, 0});
  const uint64_t r = s + Cycles(9000000000ull);
  const Timespec64 slept = tk_->Resume({r, {1764460810, 0}});
  EXPECT_GT(Ns(slept), 8500000000);
  EXPECT_LT(Ns(slept), 9000000000);
  EXPECT_LE(Ns(tk_->GetRealTs64(r)) - int64_t{1764460810} * kBillion, 1);
  EXPECT_GE(Ns(tk_->GetRealTs64(r)) - int64_t{1764460810} * kBillion, 0);
}

TEST_F(Events, SuspendWithoutForwardLosesTheTimeSinceTheLastTick) {
  TimekeeperProfile p;
  p.defects.suspend_without_forward = true;
  Make(p);
  TickTo(Cycles(1000000000));
  const uint64_t s = now_ + Cycles(3000000);  // 3 ms after the tick.
  const Timespec64 mono = tk_->GetTs64(s);
  tk_->Suspend(s, {1764460801, 0});
  tk_->Resume({s + Cycles(300000000), {1764460801, 0}});
  // 2.6.23's "time going backwards on resume".
  EXPECT_LT(Ns(tk_->GetTs64(s + Cycles(300000000))), Ns(mono));
}

TEST_F(Events, AClocksourceChangeKeepsTimeAndClearsNtp) {
  Make();
  TickTo(Cycles(1000000000));
  const uint64_t c = now_ + Cycles(1000000);
  const Timespec64 mono = tk_->GetTs64(c), raw = tk_->GetRawTs64(c);
  auto hpet = ClocksourceRegisterScale("hpet", ClocksourceMask(32), 1, 14318180,
                                       kVdsoClockmodeNone, 250);
  ASSERT_TRUE(hpet.ok());
  const uint8_t changes = tk_->timekeeper().cs_was_changed_seq;
  tk_->ChangeClocksource(*hpet, c, 4242);
  EXPECT_EQ(tk_->clocksource().name, "hpet");
  EXPECT_EQ(tk_->timekeeper().cs_was_changed_seq, changes + 1);
  EXPECT_EQ(tk_->timekeeper().tkr_mono.cycle_last, 4242u);
  // The shift drops from 24 to hpet's: the sub-ns remainder may go.
  EXPECT_LE(Ns(mono) - Ns(tk_->GetTs64(4242)), 1);
  EXPECT_GE(Ns(mono) - Ns(tk_->GetTs64(4242)), 0);
  EXPECT_LE(Ns(raw) - Ns(tk_->GetRawTs64(4242)), 1);
  // 1 s of HPET later.
  EXPECT_NEAR(static_cast<double>(Ns(tk_->GetTs64(4242 + 14318180)) -
                                  Ns(tk_->GetTs64(4242))),
              1e9, 2.0);
}

TEST_F(Events, Before613NegativeMotionWasTheMsb) {
  // A 24-bit counter: deltas between 1/2 and 7/8 of the mask are forward
  // motion since Dec 2024 and negative (zero) before.
  auto pm = ClocksourceRegisterScale("acpi_pm", ClocksourceMask(24), 1, 3579545,
                                     kVdsoClockmodeNone, 200);
  ASSERT_TRUE(pm.ok());
  const uint64_t gap = (uint64_t{1} << 23) + 1000;
  for (const char* era : {"6.10", "6.13"}) {
    auto profile = ProfileForEra(era);
    ASSERT_TRUE(profile.ok());
    Timekeeping tk(*pm, 250, nullptr, *profile);
    tk.Init(0, {1764460800, 0}, {1, 0});
    tk.Advance(AdvanceMode::kTick, gap);
    const bool accumulated = tk.timekeeper().tkr_mono.cycle_last != 0;
    EXPECT_EQ(accumulated, std::string(era) == "6.13") << era;
  }
}

TEST_F(Events, Before610AForwardOverflowedPastTheProductsRange) {
  for (const char* era : {"6.1", "6.10"}) {
    auto profile = ProfileForEra(era);
    ASSERT_TRUE(profile.ok());
    Make(*profile);
    // 30 minutes without a tick, then settimeofday() forwards.
    const uint64_t c = Cycles(1800ull * kBillion);
    const Timespec64 before = tk_->GetRawTs64(c);
    ASSERT_EQ(tk_->SetTimeOfDay({1764470000, 0}, c), 0);
    const bool exact = tk_->GetRawTs64(c) == before;
    EXPECT_EQ(exact, std::string(era) == "6.10") << era;
  }
}

TEST_F(Events, Before615CoarseClocksFollowXtimeNsecEverywhere) {
  auto profile = ProfileForEra("6.13");
  ASSERT_TRUE(profile.ok());
  Make(*profile);
  TickTo(Cycles(1000000000));
  Timex txc;
  txc.modes = kAdjFrequency;
  txc.freq = int64_t{500} << 16;
  tk_->Adjtimex(&txc, now_ + Cycles(3000000));
  const Timekeeper& t = tk_->timekeeper();
  EXPECT_EQ(t.coarse_nsec, t.tkr_mono.xtime_nsec >> t.tkr_mono.shift);
}

TEST_F(Events, AZeroMaxRawDeltaFreezesTime) {
  TimekeeperProfile p;
  p.defects.clocksource_max_raw_delta_zero = true;
  Make(p);
  TickTo(Cycles(2000000000));
  EXPECT_EQ(tk_->timekeeper().tkr_mono.cycle_last, 0u);
  EXPECT_EQ(tk_->GetCoarseTs64(), (Timespec64{1, 0}));
}

TEST_F(Events, AdjtimexForwardDefectMovesThePeriodAndClearsTheError) {
  TimekeeperProfile p;
  p.defects.adjtimex_forwards_and_clears_error = true;
  Make(p);
  TickTo(Cycles(1000000000));
  const uint64_t c = now_ + Cycles(1500000);
  Timex txc;
  txc.modes = kAdjFrequency;
  txc.freq = int64_t{100} << 16;
  tk_->Adjtimex(&txc, c);
  EXPECT_EQ(tk_->timekeeper().tkr_mono.cycle_last, c);  // Forwarded.
  EXPECT_EQ(tk_->timekeeper().ntp_error, 0);
}

TEST_F(Events, AuxClocksRunOnTheCoreClocksourceWithTheirOwnNtp) {
  Make();
  TickTo(Cycles(1000000000));
  tk_->EnableAux(2, now_);
  ASSERT_TRUE(tk_->AuxEnabled(2));
  EXPECT_EQ(KtimeGetAux(tk_->aux_timekeeper(2), now_), 0);
  ASSERT_EQ(tk_->AuxSetTime(2, {500, 0}, now_), 0);
  EXPECT_EQ(KtimeGetAux(tk_->aux_timekeeper(2), now_), 500 * kBillion);
  Timex txc;
  txc.modes = kAdjFrequency;
  txc.freq = int64_t{-200} << 16;
  EXPECT_EQ(tk_->AuxAdjtimex(2, &txc, now_), kTimeError);
  EXPECT_EQ(tk_->ntp().data().time_freq, 0);  // The core's NTP is untouched.
  const uint64_t start = now_;
  TickTo(now_ + Cycles(10ull * kBillion));
  const Ktime aux = *KtimeGetAux(tk_->aux_timekeeper(2), now_);
  const double ran = static_cast<double>(aux - 500 * kBillion);
  EXPECT_NEAR(ran, 10e9 * (1 - 200e-6), 5000.0);
  // Aux clocks refuse leap seconds; disabled, they read -ENODEV.
  Timex leap;
  leap.modes = kAdjStatus;
  leap.status = kStaIns;
  EXPECT_EQ(tk_->AuxAdjtimex(2, &leap, now_), -kEinval);
  tk_->DisableAux(2);
  EXPECT_FALSE(KtimeGetAux(tk_->aux_timekeeper(2), now_).has_value());
  EXPECT_EQ(tk_->AuxSetTime(2, {1, 0}, now_), -kEnodev);
  EXPECT_EQ(tk_->AuxAdjtimex(9, &txc, now_), -kEinval);
  (void)start;
}

TEST_F(Events, AuxClocksNeedA617Era) {
  auto profile = ProfileForEra("6.15");
  ASSERT_TRUE(profile.ok());
  Make(*profile);
  tk_->EnableAux(0, 0);
  EXPECT_FALSE(tk_->AuxEnabled(0));
}

TEST(Profiles, ErasAndDefectsAreNamed) {
  EXPECT_FALSE(ProfileForEra("6.2").ok());
  auto p53 = ProfileForEra("5.3");
  ASSERT_TRUE(p53.ok());
  EXPECT_TRUE(p53->defects.vsyscall_boottime_shift_overflow);
  EXPECT_FALSE(p53->chunked_forward);
  EXPECT_EQ(*ProfileForEra("6.18"), TimekeeperProfile{});
  TimekeeperProfile p;
  EXPECT_TRUE(EnableDefect("ntp_offset_readback_u32", &p).ok());
  EXPECT_TRUE(p.ntp.offset_readback_u32);
  EXPECT_FALSE(EnableDefect("nope", &p).ok());
}

}  // namespace
}  // namespace vdsolab::timekeeper
