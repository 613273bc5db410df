#include "timekeeper/ntp.h"

#include <gtest/gtest.h>

#include "common/clock_result.h"

namespace vdsolab::timekeeper {
namespace {

// The nominal tick: 1e9 / HZ ns, in ns << 32.
uint64_t NominalTickLength(int hz) {
  return (uint64_t{1000000000} << 32) / static_cast<uint64_t>(hz);
}

TEST(Ntp, StartsUnsynchronisedAtTheNominalTickLength) {
  Ntp ntp(250);
  EXPECT_EQ(ntp.TickLength(), NominalTickLength(250));
  EXPECT_NE(ntp.data().time_status & kStaUnsync, 0);
  // While unsynchronised, adjtimex() reports TIME_ERROR.
  auto ret = ntp.Adjtimex(Timex{});
  ASSERT_TRUE(ret.ok());
  EXPECT_EQ(*ret, kTimeError);
}

TEST(Ntp, AdjFrequencyScalesTheTickLengthByPpm) {
  Ntp ntp(250);
  Timex txc;
  txc.modes = kAdjFrequency;
  txc.freq = 100 << 16;  // +100 ppm, as scaled ppm.
  ASSERT_TRUE(ntp.Adjtimex(txc).ok());
  // One second gains 100 us: 1e9 + 1e5 ns per second, 250 ticks.
  const uint64_t expected =
      ((uint64_t{1000000000} << 32) + (uint64_t{100000} << 32)) / 250;
  EXPECT_EQ(ntp.TickLength(), expected);
}

TEST(Ntp, AdjFrequencyIsClampedTo500Ppm) {
  Ntp ntp(1000);
  Timex txc;
  txc.modes = kAdjFrequency;
  txc.freq = -int64_t{2000} << 16;
  ASSERT_TRUE(ntp.Adjtimex(txc).ok());
  EXPECT_EQ(ntp.data().time_freq, -kMaxFreqScaled);
}

TEST(Ntp, AdjTickChangesTheUserTick) {
  Ntp ntp(100);
  Timex txc;
  txc.modes = kAdjTick;
  txc.tick = 10100;  // +1%.
  ASSERT_TRUE(ntp.Adjtimex(txc).ok());
  EXPECT_EQ(ntp.TickLength(), (uint64_t{10100000} << 32));
}

TEST(Ntp, AdjTickOutsideTenPercentIsEinval) {
  Ntp ntp(250);
  for (int64_t tick : {8999, 11001, 0, -1}) {
    Timex txc;
    txc.modes = kAdjTick;
    txc.tick = tick;
    auto ret = ntp.Adjtimex(txc);
    ASSERT_TRUE(ret.ok());
    EXPECT_EQ(*ret, -kEinval) << tick;
  }
  EXPECT_EQ(ntp.TickLength(), NominalTickLength(250));  // Unchanged.
}

TEST(Ntp, HugeFrequencyIsEinvalNotOverflow) {
  Ntp ntp(250);
  Timex txc;
  txc.modes = kAdjFrequency;
  txc.freq = INT64_MAX / 1000;
  auto ret = ntp.Adjtimex(txc);
  ASSERT_TRUE(ret.ok());
  EXPECT_EQ(*ret, -kEinval);
}

// ADJ_OFFSET used to be refused as unmodelled; it is modelled now, and
// without STA_PLL the kernel ignores it (ntp_update_offset() returns).
TEST(Ntp, AdjOffsetWithoutThePllChangesNothing) {
  Ntp ntp(250);
  Timex txc;
  txc.modes = kAdjOffset | kAdjFrequency;
  txc.offset = 1000;
  auto ret = ntp.Adjtimex(txc);
  ASSERT_TRUE(ret.ok());
  EXPECT_EQ(*ret, kTimeError);
  EXPECT_EQ(ntp.data().time_offset, 0);
}

TEST(Ntp, SecondOverflowRestoresTheBaseTickLength) {
  Ntp ntp(250);
  const uint64_t base = ntp.TickLength();
  EXPECT_EQ(ntp.SecondOverflow(1), 0);
  EXPECT_EQ(ntp.TickLength(), base);
  EXPECT_EQ(ntp.data().time_maxerror, kNtpPhaseLimit);
}

}  // namespace
}  // namespace vdsolab::timekeeper
