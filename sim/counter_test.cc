#include "sim/counter.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/rng.h"
#include "sim/machine.h"

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

// The machine's counter in unsigned 64-bit divides against the signed
// 128-bit formula it replaced, over the scenario's limits (1 kHz .. 10 GHz,
// drift within 1e8 ppb, skew, steps) and times up to 2^63 ns.
TEST(Machine, FastIdealCounterMatchesTheSignedFormula) {
  Rng rng(20261201);
  int wide = 0;
  for (int i = 0; i < 20000; ++i) {
    MachineSpec spec;
    spec.counter_hz = rng.InRange(1000, 10000000000ull);
    spec.counter_start = rng.Next();
    CpuCounterSpec cpu;
    cpu.drift_ppb = static_cast<int64_t>(rng.InRange(0, 200000000)) - 100000000;
    if (i % 7 == 0) cpu.drift_ppb = i % 2 == 0 ? 100000000 : -100000000;
    cpu.offset_cycles = static_cast<int64_t>(rng.Next() >> 2);
    cpu.steps.push_back(
        CounterStep{rng.Next() >> 1, static_cast<int64_t>(rng.Next() >> 8)});
    spec.cpus = {cpu};
    const Machine m(spec, 1);
    // Small times, times near a second's multiple, and huge ones.
    const uint64_t t = i % 3 == 0   ? rng.InRange(0, 1000000)
                       : i % 3 == 1 ? rng.InRange(0, 1u << 20) * 1000000000ull
                                    : rng.Next() >> 1;
    if ((static_cast<unsigned __int128>(t) * spec.counter_hz) >> 64 >=
        1000000000) {
      ++wide;  // t * hz / 1e9 has a quotient wider than 64 bits.
    }
    ASSERT_TRUE(m.IdealCounter(0, t) == m.SlowIdealCounter(cpu, t))
        << "hz " << spec.counter_hz << " drift " << cpu.drift_ppb << " t " << t;
  }
  EXPECT_GT(wide, 100);  // The two-divide path was exercised.
}

// The inline Counter() of a CPU without steps, wobble or jitter (64-bit
// sums, the quotient estimated from a double and corrected) against the
// signed 128-bit formula at the width: every rate within the limits, the
// widths the scenarios use, and times on both sides of 2^52 ns (where the
// estimate gives way to the divide), near multiples of 1e18 / part, and
// zero.
TEST(Machine, PlainCounterMatchesTheSignedFormula) {
  Rng rng(20261202);
  int estimated = 0, divided = 0;
  for (int i = 0; i < 50000; ++i) {
    MachineSpec spec;
    spec.counter_hz = rng.InRange(1000, 10000000000ull);
    spec.counter_start = rng.Next();
    spec.width_bits = std::vector<int>{64, 64, 56, 32, 24}[i % 5];
    CpuCounterSpec cpu;
    cpu.drift_ppb = static_cast<int64_t>(rng.InRange(0, 200000000)) - 100000000;
    if (i % 11 == 0) cpu.drift_ppb = 0;
    cpu.offset_cycles = static_cast<int64_t>(rng.Next()) >> (i % 4 * 8);
    spec.cpus = {cpu};
    const Machine m(spec, 1);
    uint64_t t = 0;
    switch (i % 6) {
      case 0:
        t = rng.InRange(0, 1000000);
        break;
      case 1:
        t = rng.InRange(0, 86400) * 1000000000ull;
        break;
      case 2:
        t = (uint64_t{1} << 52) - rng.InRange(0, 3);
        break;
      case 3:
        t = (uint64_t{1} << 52) + rng.InRange(0, 3);
        break;
      case 4:
        t = rng.Next() >> rng.InRange(1, 40);
        break;
      default:
        t = i % 12 == 5 ? 0 : rng.Next();
        break;
    }
    (t < (uint64_t{1} << 52) ? estimated : divided)++;
    const uint64_t want =
        static_cast<uint64_t>(m.SlowIdealCounter(cpu, t)) & m.mask();
    ASSERT_EQ(m.Counter(0, t), want)
        << "hz " << spec.counter_hz << " drift " << cpu.drift_ppb << " t " << t
        << " width " << spec.width_bits;
  }
  EXPECT_GT(estimated, 10000);
  EXPECT_GT(divided, 5000);
}

}  // namespace
}  // namespace vdsolab::sim
