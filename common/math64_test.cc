#include "common/math64.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace vdsolab {
namespace {

// The loop the kernel runs, for quotients small enough to loop over.
uint32_t IterDivByLoop(uint64_t dividend, uint32_t divisor, uint64_t* rem) {
  uint32_t quotient = 0;
  while (dividend >= divisor) {
    dividend -= divisor;
    ++quotient;
  }
  *rem = dividend;
  return quotient;
}

TEST(IterDivU64Rem, MatchesTheKernelLoopForSmallQuotients) {
  for (uint64_t dividend :
       {0ull, 1ull, 999999999ull, 1000000000ull, 1000000001ull, 5999999999ull,
        17000000000ull, 123456789012ull}) {
    uint64_t rem_fast = 0, rem_loop = 0;
    EXPECT_EQ(IterDivU64Rem(dividend, 1000000000u, &rem_fast),
              IterDivByLoop(dividend, 1000000000u, &rem_loop))
        << dividend;
    EXPECT_EQ(rem_fast, rem_loop) << dividend;
  }
}

TEST(IterDivU64Rem, QuotientWrapsLikeTheKernelsU32Counter) {
  // 2^32 + 3 whole seconds: the kernel's u32 counter ends at 3.
  uint64_t dividend = ((1ull << 32) + 3) * kNsecPerSec + 7;
  uint64_t rem = 0;
  EXPECT_EQ(IterDivU64Rem(dividend, kNsecPerSec, &rem), 3u);
  EXPECT_EQ(rem, 7u);
}

RC_GTEST_PROP(MulU64U32AddU64Shr, Int128AndPortableBodiesAgree, ()) {
  const auto a = *rc::gen::oneOf(
      rc::gen::arbitrary<uint64_t>(), rc::gen::inRange<uint64_t>(0, 1u << 20),
      rc::gen::element<uint64_t>(~0ull, 1ull << 63, (1ull << 62) - 1,
                                 0xffffffffull));
  const auto mul = *rc::gen::arbitrary<uint32_t>();
  const auto b = *rc::gen::arbitrary<uint64_t>();
  // Clocksource shifts are 1..32; the portable body needs shift <= 32.
  const auto shift = *rc::gen::inRange<uint32_t>(1, 33);
  RC_CLASSIFY((a >> 32) != 0, "high word set");
  const unsigned __int128 exact =
      (static_cast<unsigned __int128>(a) * mul + b) >> shift;
  RC_ASSERT(MulU64U32AddU64Shr(a, mul, b, shift) ==
            static_cast<uint64_t>(exact));
  RC_ASSERT(MulU64U32AddU64ShrNoInt128(a, mul, b, shift) ==
            static_cast<uint64_t>(exact));
}

TEST(MulU64U32AddU64Shr, DoesNotOverflowWhereThePlainFormulaDoes) {
  const uint64_t delta = 1ull << 42;
  const uint32_t mult = 6990507;                    // 2.4 GHz TSC, shift 24.
  const uint64_t plain = (delta * mult + 0) >> 24;  // Wraps in u64.
  const uint64_t safe = MulU64U32AddU64Shr(delta, mult, 0, 24);
  EXPECT_NE(plain, safe);
  EXPECT_EQ(safe, (1ull << 18) * mult);  // 2^42 * mult / 2^24, exactly.
}

RC_GTEST_PROP(DivModU128U64, AgreesWithTheCompilersDivision,
              (uint64_t hi, uint64_t lo, uint64_t d)) {
  if (d == 0) d = 1;
  // Weighted toward the simulation's divisor and dividends near it.
  if (hi % 3 == 0) d = 1000000000;
  if (lo % 5 == 0) hi %= d;  // A quotient that fits in 64 bits.
  RC_TAG(hi < d ? "64-bit quotient" : "wider quotient");
  const unsigned __int128 x = (static_cast<unsigned __int128>(hi) << 64) | lo;
  uint64_t rem = ~0ull;
  const unsigned __int128 q = DivModU128U64(x, d, &rem);
  RC_ASSERT(q == x / d);
  RC_ASSERT(rem == static_cast<uint64_t>(x % d));
}

TEST(DivModU128U64, Edges) {
  uint64_t rem = 0;
  EXPECT_TRUE(DivModU128U64(~static_cast<unsigned __int128>(0), 1, &rem) ==
              ~static_cast<unsigned __int128>(0));
  EXPECT_EQ(rem, 0u);
  const unsigned __int128 x =
      (static_cast<unsigned __int128>(999999999) << 64) | ~0ull;
  EXPECT_TRUE(DivModU128U64(x, 1000000000, &rem) == x / 1000000000);
  EXPECT_EQ(rem, static_cast<uint64_t>(x % 1000000000));
}

}  // namespace
}  // namespace vdsolab
