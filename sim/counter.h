// File: sim/counter.h
//
// A hardware counter as a function of true time. True time is an exact
// integer count of nanoseconds since the simulation began; the counter runs
// at an exact integer frequency from a start value, wrapping at its width.

#ifndef VDSOLAB_SIM_COUNTER_H_
#define VDSOLAB_SIM_COUNTER_H_

#include <cstdint>

namespace vdsolab::sim {

struct CounterModel {
  uint64_t freq_hz = 0;  // True ticks per second.
  uint64_t start = 0;    // Value at true time 0.
  uint64_t mask = ~0ull;

  // floor(t * freq / 1e9), added to start, wrapped to the width.
  uint64_t At(uint64_t true_ns) const {
    const unsigned __int128 ticks =
        static_cast<unsigned __int128>(true_ns) * freq_hz / 1000000000u;
    return (start + static_cast<uint64_t>(ticks)) & mask;
  }
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_COUNTER_H_
