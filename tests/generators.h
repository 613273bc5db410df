// File: tests/generators.h
//
// rapidcheck generators for timekeeper histories, biased toward the values
// where time code breaks: counter starts near 2^32, 2^62, 2^63 and the wrap;
// tick gaps on time, early, idle and beyond max_cycles; probe deltas around
// cycle_last, max_cycles and the 2^62/2^63 sign bits; operations on the
// 6.17+ aux clocks (enable, disable, clock_settime(), a frequency); time
// namespace offsets at the edges of their domain.

#ifndef VDSOLAB_TESTS_GENERATORS_H_
#define VDSOLAB_TESTS_GENERATORS_H_

#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>

#include "common/timespec.h"

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

// One operation on a 6.17+ POSIX aux clock (CLOCK_AUX + index), as
// timekeeper::Timekeeping offers them: aux_clock_enable() and
// aux_clock_disable() (sysfs), aux_clock_set() and aux_clock_adj()'s
// ADJ_FREQUENCY.
struct AuxOp {
  enum class Kind { kEnable, kDisable, kSetTime, kFrequency };
  Kind kind = Kind::kEnable;
  int index = 0;  // 0..7.
  // kSetTime: the time set, below KTIME_MAX (year 2262) so that the aux
  // clock stays in the syscall's ktime_t range for the history's length.
  int64_t sec = 0;
  int64_t nsec = 0;
  int64_t freq = 0;  // kFrequency: scaled ppm, at and inside +/-500 ppm.
};

// Enabling weighs most: an aux clock only serves readers once enabled.
inline rc::Gen<AuxOp> GenAuxOp() {
  return rc::gen::exec([] {
    AuxOp op;
    op.kind = *rc::gen::weightedOneOf<AuxOp::Kind>(
        {{4, rc::gen::just(AuxOp::Kind::kEnable)},
         {1, rc::gen::just(AuxOp::Kind::kDisable)},
         {2, rc::gen::just(AuxOp::Kind::kSetTime)},
         {2, rc::gen::just(AuxOp::Kind::kFrequency)}});
    // Mostly a few of the eight, so that operations meet the same clock.
    op.index = *rc::gen::weightedOneOf<int>(
        {{3, rc::gen::element(0, 3)}, {1, rc::gen::inRange(0, 8)}});
    op.sec = *rc::gen::weightedOneOf<int64_t>(
        {{2, rc::gen::inRange<int64_t>(0, 4000000000)},
         {1, rc::gen::inRange<int64_t>(0, 100)}});
    op.nsec = *rc::gen::element<int64_t>(0, 999999999,
                                         *rc::gen::inRange(0, 1000000000));
    op.freq = *rc::gen::weightedOneOf<int64_t>(
        {{2, rc::gen::inRange<int64_t>(-(500ll << 16), (500ll << 16) + 1)},
         {1, rc::gen::element<int64_t>(-(500ll << 16), 500ll << 16)}});
    return op;
  });
}

// A time namespace offset with whole seconds in [lo_sec, hi_sec] (the
// caller's share of proc_timens_set_offset()'s domain, which keeps the
// clock plus the offset in [0, KTIME_SEC_MAX / 2)): small ones of both
// signs most often, then negative ones down to lo_sec, its edges and 0,
// and anything in between; the nanoseconds at 0, at their end or anywhere.
inline Timespec64 GenTimensOffset(int64_t lo_sec, int64_t hi_sec) {
  const int64_t drawn = *rc::gen::weightedOneOf<int64_t>(
      {{3, rc::gen::inRange<int64_t>(-1000, 1000000)},
       {1, rc::gen::inRange<int64_t>(lo_sec, 1)},
       {1, rc::gen::element(lo_sec, hi_sec, int64_t{0})},
       {1, rc::gen::inRange<int64_t>(lo_sec, hi_sec)}});
  const int64_t nsec = *rc::gen::element<int64_t>(
      0, 999999999, *rc::gen::inRange<int64_t>(0, 1000000000));
  return Timespec64{std::clamp(drawn, lo_sec, hi_sec), nsec};
}

}  // namespace vdsolab::testing

#endif  // VDSOLAB_TESTS_GENERATORS_H_
