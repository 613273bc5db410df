#include "sim/counter.h"

#include <gtest/gtest.h>

namespace vdsolab::sim {
namespace {

TEST(CounterModel, CountsWholeTicksOfTrueTime) {
  CounterModel tsc{2600000000, 1000, ~0ull};
  EXPECT_EQ(tsc.At(0), 1000u);
  EXPECT_EQ(tsc.At(1), 1002u);  // 2.6 ticks per ns, floored.
  EXPECT_EQ(tsc.At(1000000000), 1000u + 2600000000u);
  // 100 days: the product needs more than 64 bits.
  EXPECT_EQ(tsc.At(8640000000000000ull), 1000u + 22464000000000000ull);
}

TEST(CounterModel, WrapsAtItsWidth) {
  CounterModel pm{3579545, 0xfffff0, 0xffffff};
  EXPECT_EQ(pm.At(0), 0xfffff0u);
  EXPECT_EQ(pm.At(10000), (0xfffff0u + 35u) & 0xffffffu);  // 35.8 ticks.
}

}  // namespace
}  // namespace vdsolab::sim
