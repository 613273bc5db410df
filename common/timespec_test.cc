#include "common/timespec.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>

namespace vdsolab {
namespace {

constexpr int64_t kBillion = 1000000000;

RC_GTEST_PROP(SetNormalizedTimespec64, KeepsTheTotalAndNormalises, ()) {
  const auto sec = *rc::gen::inRange<int64_t>(-(1ll << 40), 1ll << 40);
  const auto nsec = *rc::gen::oneOf(
      rc::gen::inRange<int64_t>(-3 * kBillion, 3 * kBillion),
      rc::gen::inRange<int64_t>(-(1ll << 62), 1ll << 62),
      rc::gen::element<int64_t>(-1, 0, kBillion - 1, kBillion, -kBillion));
  RC_CLASSIFY(nsec < 0, "negative nsec");
  RC_CLASSIFY(nsec >= kBillion, "carry");
  const Timespec64 ts = SetNormalizedTimespec64(sec, nsec);
  RC_ASSERT(ts.tv_nsec >= 0);
  RC_ASSERT(ts.tv_nsec < kBillion);
  const __int128 before = static_cast<__int128>(sec) * kBillion + nsec;
  const __int128 after =
      static_cast<__int128>(ts.tv_sec) * kBillion + ts.tv_nsec;
  RC_ASSERT(before == after);
}

RC_GTEST_PROP(NsToTimespec64, RoundTripsThroughKtime, ()) {
  const auto ns = *rc::gen::oneOf(
      rc::gen::arbitrary<int64_t>(),
      rc::gen::element<int64_t>(0, -1, 1, INT64_MIN, INT64_MAX, -kBillion));
  const Timespec64 ts = NsToTimespec64(ns);
  RC_ASSERT(ts.tv_nsec >= 0);
  RC_ASSERT(ts.tv_nsec < kBillion);
  const __int128 total =
      static_cast<__int128>(ts.tv_sec) * kBillion + ts.tv_nsec;
  RC_ASSERT(total == static_cast<__int128>(ns));
  if (ts.tv_sec < kKtimeSecMax) RC_ASSERT(Timespec64ToKtime(ts) == ns);
}

TEST(TimespecAddNs, CarriesWholeSeconds) {
  Timespec64 ts{10, 999999999};
  TimespecAddNs(&ts, 2);
  EXPECT_EQ(ts, (Timespec64{11, 1}));
  TimespecAddNs(&ts, 3 * kNsecPerSec);
  EXPECT_EQ(ts, (Timespec64{14, 1}));
}

// A negative time's decimal is its value: {-1, 750000000} is -0.25 s.
TEST(FormatTimespec, NegativeTimesAreTheirDecimalValue) {
  for (int64_t ns :
       {int64_t{-250000000}, int64_t{-3600249994705}, int64_t{-1000000000},
        int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{3600249994705}}) {
    const Timespec64 ts = SetNormalizedTimespec64(0, ns);
    const std::string text = FormatTimespec(ts);
    // Parse the decimal back: sign, seconds, nine digits.
    const bool neg = !text.empty() && text[0] == '-';
    const size_t dot = text.find('.');
    ASSERT_NE(dot, std::string::npos) << text;
    ASSERT_EQ(text.size() - dot - 1, 9u) << text;
    const int64_t sec =
        std::stoll(text.substr(neg ? 1 : 0, dot - (neg ? 1 : 0)));
    const int64_t frac = std::stoll(text.substr(dot + 1));
    EXPECT_EQ((neg ? -1 : 1) * (sec * 1000000000 + frac), ns) << text;
  }
}

TEST(Timespec64Compare, OrdersBySecondsThenNanoseconds) {
  EXPECT_LT(Timespec64Compare({1, 5}, {2, 0}), 0);
  EXPECT_GT(Timespec64Compare({2, 1}, {2, 0}), 0);
  EXPECT_EQ(Timespec64Compare({2, 1}, {2, 1}), 0);
  EXPECT_TRUE(TimespecLess({-1, 999999999}, {0, 0}));
}

TEST(Timespec64ToKtime, SaturatesAtKtimeMax) {
  EXPECT_EQ(Timespec64ToKtime({kKtimeSecMax, 0}), kKtimeMax);
  EXPECT_EQ(Timespec64ToKtime({3, 4}), 3 * kBillion + 4);
}

}  // namespace
}  // namespace vdsolab
