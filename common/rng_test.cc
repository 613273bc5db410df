#include "common/rng.h"

#include <gtest/gtest.h>

#include <array>

namespace vdsolab {
namespace {

// Reference values from an independent Python implementation of
// xoshiro256** seeded through SplitMix64.
TEST(Rng, MatchesTheReferenceSequence) {
  Rng zero(0);
  EXPECT_EQ(zero.Next(), 0x99ec5f36cb75f2b4ull);
  EXPECT_EQ(zero.Next(), 0xbf6e1f784956452aull);
  EXPECT_EQ(zero.Next(), 0x1a5f849d4933e6e0ull);
  Rng answer(42);
  EXPECT_EQ(answer.Next(), 0x15780b2e0c2ec716ull);
  EXPECT_EQ(answer.Next(), 0x6104d9866d113a7eull);
}

// Reference values from an independent Python implementation of the
// SplitMix64 finaliser chain.
TEST(MixHash, MatchesTheReferenceValues) {
  EXPECT_EQ(MixHash(1, 2, 3, 4), 0x5115ab620b51673eull);
  EXPECT_EQ(MixHash(0xdeadbeef, 0xca11, 7, 123456), 0x97537cc84ebe46caull);
  EXPECT_EQ(MixHash(5, 0x5e0f), 0xa42d330706936d8eull);
}

// The engine seeds its per-call generators from a per-reader prefix: the
// same seeds, so the same runs, as hashing all four words per call.
TEST(MixHash, PrefixThenFinishIsTheWholeHash) {
  Rng words(11);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t a = words.Next(), b = words.Next(), c = words.Next(),
                   d = i % 3 == 0 ? 0 : words.Next();
    ASSERT_EQ(MixHashFinish(MixHashPrefix(a, b, c), d), MixHash(a, b, c, d));
    Rng whole(MixHash(a, b, c, d));
    Rng deferred = Rng::Deferred(a, b, c, d);
    Rng prefixed = Rng::DeferredFromPrefix(MixHashPrefix(a, b, c), d);
    for (int k = 0; k < 4; ++k) {
      const uint64_t x = whole.Next();
      ASSERT_EQ(deferred.Next(), x);
      ASSERT_EQ(prefixed.Next(), x);
    }
  }
}

TEST(Rng, BelowStaysInBoundsAndCoversTheRange) {
  Rng rng(7);
  std::array<int, 10> buckets{};
  for (int i = 0; i < 100000; ++i) {
    const uint64_t x = rng.Below(10);
    ASSERT_LT(x, 10u);
    ++buckets[x];
  }
  for (int count : buckets) {
    EXPECT_GT(count, 9000);  // Expected 10000 each; 10 sigma is ~950.
    EXPECT_LT(count, 11000);
  }
}

TEST(Rng, InRangeIsInclusiveAndHandlesTheFullRange) {
  Rng rng(3);
  bool saw_lo = false, saw_hi = false;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = rng.InRange(5, 7);
    ASSERT_GE(x, 5u);
    ASSERT_LE(x, 7u);
    saw_lo |= x == 5;
    saw_hi |= x == 7;
  }
  EXPECT_TRUE(saw_lo && saw_hi);
  (void)rng.InRange(0, ~0ull);  // Must not divide by zero.
}

}  // namespace
}  // namespace vdsolab
