// The NTP modes, state machine and read-back (timekeeper/ntp.h): each test
// states the kernel behaviour it pins down, with values worked from
// kernel/time/ntp.c's arithmetic.

#include <gtest/gtest.h>

#include <climits>

#include "common/clock_result.h"
#include "timekeeper/ntp.h"

namespace vdsolab::timekeeper {
namespace {

// One adjtimex() with read-back at REALTIME `now_sec`, no TAI.
int Call(Ntp& ntp, Timex* txc, int64_t now_sec = 1000, int32_t tai = 0) {
  if (const int v = ValidateTimex(*txc, false); v != 0) return v;
  return ntp.DoAdjtimex(txc, Timespec64{now_sec, 123456789}, &tai, now_sec);
}

Timex Status(int32_t status) {
  Timex txc;
  txc.modes = kAdjStatus;
  txc.status = status;
  return txc;
}

TEST(NtpModes, ThePllSlewsAnOffsetInChunksSetByTheTimeConstant) {
  Ntp ntp(250);
  Timex on = Status(kStaPll);
  ASSERT_EQ(Call(ntp, &on), kTimeOk);  // STA_PLL clears STA_UNSYNC.
  Timex txc;
  txc.modes = kAdjOffset;
  txc.offset = 400;  // us, without STA_NANO.
  ASSERT_EQ(Call(ntp, &txc), kTimeOk);
  // time_offset: 400 us as ns << 32 per tick.
  const int64_t per_tick = (int64_t{400000} << 32) / 250;
  EXPECT_EQ(ntp.data().time_offset, per_tick);
  EXPECT_EQ(txc.offset, 400);  // Read back in us.
  // Each second_overflow() moves 1 / 2^(SHIFT_PLL + time_constant) of
  // what is left into the tick length (time_constant 2: a sixteenth).
  const uint64_t base = ntp.data().tick_length_base;
  ntp.SecondOverflow(1001);
  const int64_t chunk = per_tick >> (2 + 2);
  EXPECT_EQ(ntp.TickLength(), base + static_cast<uint64_t>(chunk));
  EXPECT_EQ(ntp.data().time_offset, per_tick - chunk);
}

TEST(NtpModes, MicrosecondOffsetsAreClampedBeforeScaling) {
  Ntp ntp(100);
  Timex on = Status(kStaPll);
  Call(ntp, &on);
  Timex txc;
  txc.modes = kAdjOffset;
  txc.offset = LLONG_MAX;  // Clamped to 1 s, then to MAXPHASE (0.5 s).
  Call(ntp, &txc);
  EXPECT_EQ(ntp.data().time_offset, (kMaxPhase << 32) / 100);
  EXPECT_EQ(txc.offset, kMaxPhase / 1000);
}

TEST(NtpModes, NegativeOffsetsReadBackSigned) {
  Ntp ntp(250);
  Timex on = Status(kStaPll);
  Call(ntp, &on);
  Timex txc;
  txc.modes = kAdjOffset;
  txc.offset = -1;  // -1 us.
  Call(ntp, &txc);
  EXPECT_EQ(txc.offset, -1);
}

TEST(NtpModes, BeforeTheFixANegativeOffsetReadBackThroughU32) {
  NtpQuirks q;
  q.offset_readback_u32 = true;
  Ntp ntp(250, q);
  Timex on = Status(kStaPll);
  Call(ntp, &on);
  Timex txc;
  txc.modes = kAdjOffset;
  txc.offset = -1;
  Call(ntp, &txc);
  // (u32)(-1000) / 1000, as f5807b0606da's message describes.
  EXPECT_EQ(txc.offset, 4294966);
}

TEST(NtpModes, NanoModeTakesNanoseconds) {
  Ntp ntp(1000);
  Timex txc;
  txc.modes = kAdjStatus | kAdjNano | kAdjOffset;
  txc.status = kStaPll;
  txc.offset = -7777;  // ns
  Call(ntp, &txc);
  EXPECT_NE(ntp.data().time_status & kStaNano, 0);
  // time_offset is per tick, truncated: (-7777 << 32) / 1000 * 1000 >> 32
  // reads back 1 ns short.
  EXPECT_EQ(txc.offset, -7776);
  EXPECT_EQ(txc.time.tv_usec, 123456789);  // ns in tv_usec with STA_NANO.
  Timex micro;
  micro.modes = kAdjMicro;
  Call(ntp, &micro);
  EXPECT_EQ(micro.offset, -7);  // div_s64 truncates toward zero.
  EXPECT_EQ(micro.time.tv_usec, 123456);
}

TEST(NtpModes, TheFllTakesOverForLongIntervals) {
  Ntp ntp(250);
  Timex txc;
  txc.modes = kAdjStatus | kAdjNano;
  txc.status = kStaPll | kStaFll;
  Call(ntp, &txc, /*now_sec=*/1000);
  Timex off;
  off.modes = kAdjOffset;
  off.offset = 1000000;                     // 1 ms in ns.
  Call(ntp, &off, /*now_sec=*/1000 + 300);  // 300 s >= MINSEC with STA_FLL.
  EXPECT_NE(ntp.data().time_status & kStaMode, 0);
  // FLL share (offset << 30) / secs plus the PLL share with secs capped at
  // 2^(SHIFT_PLL + 1 + time_constant) = 32 s.
  const int64_t fll = (int64_t{1000000} << 30) / 300;
  const int64_t pll = (int64_t{1000000} * 32) << (32 - 2 * (2 + 2 + 2));
  EXPECT_EQ(ntp.data().time_freq, fll + pll);
}

TEST(NtpModes, FrequencyReadsBackAndIsClamped) {
  Ntp ntp(250);
  for (int64_t freq : {int64_t{100} << 16, -(int64_t{499} << 16),
                       int64_t{-1000}, int64_t{1}}) {
    Timex txc;
    txc.modes = kAdjFrequency;
    txc.freq = freq;
    Call(ntp, &txc);
    // The read-back's multiply by PPM_SCALE_INV is within 1 of the value.
    EXPECT_LE(txc.freq - freq, 1) << freq;
    EXPECT_GE(txc.freq - freq, -1) << freq;
  }
  Timex big;
  big.modes = kAdjFrequency;
  big.freq = int64_t{550} << 16;
  Call(ntp, &big);
  EXPECT_EQ(big.freq, int64_t{500} << 16);
  EXPECT_EQ(big.tolerance, int64_t{500} << 16);
  EXPECT_EQ(big.precision, 1);
}

TEST(NtpModes, MaxerrorAndEsterrorAreClamped) {
  Ntp ntp(250);
  Timex txc;
  txc.modes = kAdjMaxerror | kAdjEsterror;
  txc.maxerror = LLONG_MAX;
  txc.esterror = -5;
  Call(ntp, &txc);
  EXPECT_EQ(txc.maxerror, kNtpPhaseLimit);
  EXPECT_EQ(txc.esterror, 0);
}

TEST(NtpModes, UnclampedMaxerrorWrapsAndNeverUnsyncs) {
  NtpQuirks q;
  q.maxerror_unclamped = true;
  Ntp ntp(250, q);
  Timex txc;
  txc.modes = kAdjMaxerror | kAdjStatus;
  txc.status = kStaPll;
  txc.maxerror = LLONG_MAX;
  Call(ntp, &txc);
  ntp.SecondOverflow(1);
  EXPECT_LT(ntp.data().time_maxerror, 0);  // LLONG_MAX + 500 wrapped.
  EXPECT_EQ(ntp.data().time_status & kStaUnsync, 0);
}

TEST(NtpModes, TimeConstantIsClampedAndShiftedForMicroseconds) {
  Ntp ntp(250);
  Timex txc;
  txc.modes = kAdjTimeconst;
  txc.constant = LLONG_MAX;
  Call(ntp, &txc);
  EXPECT_EQ(txc.constant, kMaxTc);
  txc.modes = kAdjTimeconst;
  txc.constant = 3;
  Call(ntp, &txc);
  EXPECT_EQ(txc.constant, 7);  // +4 without STA_NANO.
}

TEST(NtpModes, BeforeTheFixAHugeTimeConstantWrappedToZero) {
  NtpQuirks q;
  q.time_constant_add_before_clamp = true;
  Ntp ntp(250, q);
  Timex txc;
  txc.modes = kAdjTimeconst;
  txc.constant = LLONG_MAX;
  Call(ntp, &txc);
  EXPECT_EQ(txc.constant, 0);
}

TEST(NtpModes, TaiIsSetInRangeAndIgnoredOutside) {
  Ntp ntp(250);
  int32_t tai = 37;
  Timex txc;
  txc.modes = kAdjTai;
  txc.constant = 100001;
  ntp.DoAdjtimex(&txc, {}, &tai, 0);
  EXPECT_EQ(tai, 37);
  txc.modes = kAdjTai;
  txc.constant = 38;
  ntp.DoAdjtimex(&txc, {}, &tai, 0);
  EXPECT_EQ(tai, 38);
  EXPECT_EQ(txc.tai, 38);
}

TEST(NtpModes, AdjtimeSlewsAtMostHalfAMillisecondPerSecond) {
  Ntp ntp(100);
  Timex txc;
  txc.modes = kAdjOffsetSingleshot;
  txc.offset = 1200;  // us
  ASSERT_EQ(ValidateTimex(txc, false), 0);
  Call(ntp, &txc);
  EXPECT_EQ(txc.offset, 0);  // The previous slew.
  const uint64_t base = ntp.data().tick_length_base;
  const uint64_t max_scaled = (uint64_t{500000} << 32) / 100;
  ntp.SecondOverflow(1);
  EXPECT_EQ(ntp.TickLength(), base + max_scaled);
  ntp.SecondOverflow(2);
  EXPECT_EQ(ntp.TickLength(), base + max_scaled);
  ntp.SecondOverflow(3);  // The last 200 us, per tick: 2000 ns.
  EXPECT_EQ(ntp.TickLength(), base + (uint64_t{2000} << 32));
  EXPECT_EQ(ntp.data().time_adjust, 0);
  Timex read;
  read.modes = kAdjOffsetSsRead;
  read.offset = 77;
  Call(ntp, &read);
  EXPECT_EQ(read.offset, 0);
  EXPECT_EQ(ntp.data().time_adjust, 0);  // Read-only.
}

// timekeeping_validate_timex() tests modes & ADJ_OFFSET_SINGLESHOT, which
// ADJ_ADJTIME always satisfies: the kernel accepts 0x8000 as adjtime().
TEST(NtpModes, AdjtimeFlagWithoutOffsetBitIsStillAdjtime) {
  Timex txc;
  txc.modes = kAdjAdjtime;
  EXPECT_EQ(ValidateTimex(txc, false), 0);
  txc.modes = kAdjAdjtime | kAdjFrequency;
  EXPECT_EQ(ValidateTimex(txc, false), 0);
  Ntp ntp(250);
  Timex set;
  set.modes = kAdjAdjtime;
  set.offset = 1234;
  Call(ntp, &set);
  EXPECT_EQ(ntp.data().time_adjust, 1234);
  EXPECT_EQ(set.offset, 0);  // The slew pending before.
}

TEST(NtpModes, SetoffsetNeedsANormalisedFraction) {
  Timex txc;
  txc.modes = kAdjSetoffset;
  txc.time = {0, 999999};
  EXPECT_EQ(ValidateTimex(txc, false), 0);
  txc.time = {0, 1000000};
  EXPECT_EQ(ValidateTimex(txc, false), -kEinval);
  txc.time = {-5, -1};
  EXPECT_EQ(ValidateTimex(txc, false), -kEinval);
  txc.modes |= kAdjNano;
  txc.time = {-5, 999999999};
  EXPECT_EQ(ValidateTimex(txc, false), 0);
  txc.time = {0, 1000000000};
  EXPECT_EQ(ValidateTimex(txc, false), -kEinval);
}

TEST(NtpModes, AuxClocksRefuseLeapTaiAndPps) {
  Timex txc;
  txc.modes = kAdjStatus;
  txc.status = kStaIns;
  EXPECT_EQ(ValidateTimex(txc, true), -kEinval);
  EXPECT_EQ(ValidateTimex(txc, false), 0);
  txc.status = kStaPpsfreq;
  EXPECT_EQ(ValidateTimex(txc, true), -kEinval);
  txc.modes = kAdjTai;
  EXPECT_EQ(ValidateTimex(txc, true), -kEinval);
  Ntp aux(250, {}, /*aux=*/true);
  EXPECT_EQ(aux.GetNextLeap(), kKtimeMax);
}

TEST(NtpModes, LeapInsertionRunsTheStateMachine) {
  Ntp ntp(250);
  const int64_t midnight = int64_t{1764460800} + 86400;
  Timex txc = Status(kStaPll | kStaIns);
  Call(ntp, &txc, midnight - 10);
  EXPECT_EQ(ntp.SecondOverflow(midnight - 9), 0);
  EXPECT_EQ(ntp.data().time_state, kTimeIns);
  EXPECT_EQ(ntp.data().next_leap_sec, midnight);
  EXPECT_EQ(ntp.GetNextLeap(), midnight * 1000000000);
  // adjtimex() in the repeated second reports 23:59:60 and TIME_OOP.
  Timex read;
  EXPECT_EQ(Call(ntp, &read, midnight), kTimeOop);
  EXPECT_EQ(read.time.tv_sec, midnight - 1);
  EXPECT_EQ(read.tai, 1);
  EXPECT_EQ(ntp.SecondOverflow(midnight), -1);
  EXPECT_EQ(ntp.data().time_state, kTimeOop);
  EXPECT_EQ(ntp.SecondOverflow(midnight), 0);
  EXPECT_EQ(ntp.data().time_state, kTimeWait);
  EXPECT_EQ(ntp.GetNextLeap(), kKtimeMax);
  // TIME_WAIT until STA_INS is cleared.
  ntp.SecondOverflow(midnight + 1);
  EXPECT_EQ(ntp.data().time_state, kTimeWait);
  Timex clear = Status(kStaPll);
  Call(ntp, &clear, midnight + 2);
  ntp.SecondOverflow(midnight + 2);
  EXPECT_EQ(ntp.data().time_state, kTimeOk);
}

TEST(NtpModes, LeapDeletionSkipsTheLastSecond) {
  Ntp ntp(250);
  const int64_t midnight = int64_t{1764460800} + 86400;
  Timex txc = Status(kStaPll | kStaDel);
  Call(ntp, &txc, midnight - 10);
  ntp.SecondOverflow(midnight - 9);
  EXPECT_EQ(ntp.data().time_state, kTimeDel);
  EXPECT_EQ(ntp.data().next_leap_sec, midnight - 1);
  Timex read;
  EXPECT_EQ(Call(ntp, &read, midnight - 1), kTimeWait);
  EXPECT_EQ(read.time.tv_sec, midnight);
  EXPECT_EQ(read.tai, -1);
  EXPECT_EQ(ntp.SecondOverflow(midnight - 1), 1);
  EXPECT_EQ(ntp.data().time_state, kTimeWait);
}

TEST(NtpModes, TurningThePllOffResetsTheStateMachine) {
  Ntp ntp(250);
  Timex txc = Status(kStaPll | kStaIns);
  Call(ntp, &txc, 100);
  ntp.SecondOverflow(101);
  ASSERT_EQ(ntp.data().time_state, kTimeIns);
  // process_adj_status() sets STA_UNSYNC, and the status written right
  // after it replaces that bit too.
  Timex off = Status(0);
  EXPECT_EQ(Call(ntp, &off, 102), kTimeOk);
  EXPECT_EQ(ntp.data().time_state, kTimeOk);
  EXPECT_EQ(ntp.data().time_status, 0);
  EXPECT_EQ(ntp.data().next_leap_sec, kTime64Max);
}

TEST(NtpModes, ReadOnlyStatusBitsCannotBeSet) {
  Ntp ntp(250);
  Timex txc = Status(kStaPll | kStaClockerr | kStaNano);
  Call(ntp, &txc);
  EXPECT_EQ(ntp.data().time_status & (kStaClockerr | kStaNano), 0);
}

TEST(NtpModes, MaxerrorGrowsToTheLimitThenUnsyncs) {
  Ntp ntp(250);
  Timex txc;
  txc.modes = kAdjMaxerror | kAdjStatus;
  txc.status = kStaPll;
  txc.maxerror = kNtpPhaseLimit - 1000;
  ASSERT_EQ(Call(ntp, &txc), kTimeOk);
  ntp.SecondOverflow(1);
  ntp.SecondOverflow(2);
  EXPECT_EQ(ntp.data().time_maxerror, kNtpPhaseLimit);
  EXPECT_EQ(ntp.data().time_status & kStaUnsync, 0);
  ntp.SecondOverflow(3);
  EXPECT_NE(ntp.data().time_status & kStaUnsync, 0);
}

}  // namespace
}  // namespace vdsolab::timekeeper
