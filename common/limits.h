// File: common/limits.h
//
// Limits every input shares, so that a duration that one command accepts
// another does not refuse.

#ifndef VDSOLAB_COMMON_LIMITS_H_
#define VDSOLAB_COMMON_LIMITS_H_

#include <cstdint>

namespace vdsolab {

// The longest simulated time anything may last: a run, an event (a pause,
// an idle stretch), a command-line duration. A week covers every regime
// vdsolab models (a 64-bit TSC wraps after ~200 years; max_cycles is ~10
// minutes) while keeping every product with a frequency inside 64 bits.
inline constexpr uint64_t kMaxSimulatedNs = 7ull * 86400 * 1000000000;
inline constexpr const char* kMaxSimulatedText = "7 days";

}  // namespace vdsolab

#endif  // VDSOLAB_COMMON_LIMITS_H_
