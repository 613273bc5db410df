#include "common/timespec.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

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
