// File: sim/durations.h
//
// Times and durations as scenario files and the command line spell them,
// parsed exactly (no floating point) and written back exactly.

#ifndef VDSOLAB_SIM_DURATIONS_H_
#define VDSOLAB_SIM_DURATIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/timespec.h"

namespace vdsolab::sim {

// "1764460800.5" -> {1764460800, 500000000}: whole seconds (up to 12
// digits) and up to nine fraction digits, nothing else.
absl::StatusOr<Timespec64> ParseSecondsFraction(const std::string& text);

// "1.5s" -> 1500000000; units ns, us, ms, s, m, h; plain integers are ns.
absl::StatusOr<uint64_t> ParseDurationNs(const std::string& text);
// 1500000000 -> "1.5s" (exact).
std::string FormatDurationNs(uint64_t ns);

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_DURATIONS_H_
