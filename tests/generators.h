// File: tests/generators.h
//
// rapidcheck generators for timekeeper histories, biased toward the values
// where time code breaks: counter starts near 2^32, 2^62, 2^63 and the wrap;
// tick gaps on time, early, idle and beyond max_cycles; probe deltas around
// cycle_last, max_cycles and the 2^62/2^63 sign bits.

#ifndef VDSOLAB_TESTS_GENERATORS_H_
#define VDSOLAB_TESTS_GENERATORS_H_

#include <rapidcheck.h>

#include <cstdint>

namespace vdsolab::testing {

// A TSC frequency in kHz: common parts, odd calibrations, extremes.
inline rc::Gen<uint32_t> GenTscKhz() {
  return rc::gen::weightedOneOf<uint32_t>({
      {4, rc::gen::element<uint32_t>(2600000, 2400000, 3000000, 2596005,
                                     2095998, 3699999, 1000000)},
      {2, rc::gen::inRange<uint32_t>(500000, 6000000)},
      {1, rc::gen::element<uint32_t>(1000, 32768, 14318, 4294967)},
  });
}

// CONFIG_HZ values the kernel offers.
inline rc::Gen<int> GenHz() { return rc::gen::element(100, 250, 300, 1000); }

// The counter at boot.
inline rc::Gen<uint64_t> GenCounterStart() {
  return rc::gen::weightedOneOf<uint64_t>({
      {4, rc::gen::inRange<uint64_t>(0, 1ull << 44)},
      {1, rc::gen::inRange<uint64_t>((1ull << 32) - (1ull << 26),
                                     (1ull << 32) + (1ull << 26))},
      {1, rc::gen::inRange<uint64_t>((1ull << 62) - (1ull << 40),
                                     (1ull << 62) + (1ull << 20))},
      {1, rc::gen::inRange<uint64_t>((1ull << 63) - (1ull << 40),
                                     (1ull << 63) + (1ull << 20))},
      {1, rc::gen::inRange<uint64_t>(~0ull - (1ull << 40), ~0ull)},
  });
}

// Cycles between two timekeeper updates.
inline rc::Gen<uint64_t> GenTickGap(uint64_t cycle_interval,
                                    uint64_t max_cycles) {
  return rc::gen::weightedOneOf<uint64_t>({
      {8, rc::gen::inRange<uint64_t>(cycle_interval - cycle_interval / 50,
                                     cycle_interval + cycle_interval / 50)},
      {2, rc::gen::inRange<uint64_t>(0, cycle_interval)},
      {2, rc::gen::inRange<uint64_t>(cycle_interval, 64 * cycle_interval)},
      {1, rc::gen::inRange<uint64_t>(max_cycles - 2, max_cycles + 3)},
      {1, rc::gen::inRange<uint64_t>(max_cycles, 4 * max_cycles)},
  });
}

// A probe counter's distance from cycle_last (two's complement: "negative"
// values are behind cycle_last).
inline rc::Gen<uint64_t> GenProbeDelta(uint64_t cycle_interval,
                                       uint64_t max_cycles) {
  return rc::gen::weightedOneOf<uint64_t>({
      {10, rc::gen::inRange<uint64_t>(0, 2 * cycle_interval)},
      {2, rc::gen::element<uint64_t>(0, 1, ~0ull, ~0ull - 1)},
      {2, rc::gen::inRange<uint64_t>(~0ull - (1ull << 24), ~0ull)},  // behind
      {2, rc::gen::element<uint64_t>(max_cycles - 1, max_cycles, max_cycles + 1,
                                     max_cycles + 2)},
      {2, rc::gen::inRange<uint64_t>(max_cycles, 1ull << 62)},
      {1, rc::gen::element<uint64_t>(
              (1ull << 62) - 1, 1ull << 62, (1ull << 62) + 1, (1ull << 63) - 1,
              1ull << 63, (1ull << 63) + 1, (1ull << 63) + (1ull << 62))},
      {1, rc::gen::arbitrary<uint64_t>()},
  });
}

}  // namespace vdsolab::testing

#endif  // VDSOLAB_TESTS_GENERATORS_H_
