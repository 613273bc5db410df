// File: cli/native_speed.h
//
// How fast a variant loaded from a file (a kernel tree, a plugin) answers
// CLOCK_MONOTONIC natively, plain loads and the real TSC, against a
// baseline of the same layout: the default job's "speed:" line, for the
// "is it fast" part of a patch's review. Wall-clock figures, so never part
// of the verdict (the exit code does not depend on them). Measured in a
// forked child: code that crashes or spins when run natively, outside the
// simulation's containment, costs the parent nothing.

#ifndef VDSOLAB_CLI_NATIVE_SPEED_H_
#define VDSOLAB_CLI_NATIVE_SPEED_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/clockid.h"
#include "variants/variant.h"

namespace vdsolab::cli {

struct NativeSpeed {
  double variant_ns = 0;  // Per call, the best of three rounds.
  double base_ns = 0;
};

// Both variants' native loops on one page `base` publishes, in alternation:
// `v` calling `clock`, `base` calling `base_clock` (a plugin's own clock
// declared the same as a kernel clock against that clock). An error says
// why nothing was measured (no native build, the child crashed, spun past
// its bound, or a call failed).
absl::StatusOr<NativeSpeed> MeasureNativeSpeed(
    const variants::Variant& v, const variants::Variant& base,
    ClockId clock = kClockMonotonic, ClockId base_clock = kClockMonotonic);

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_NATIVE_SPEED_H_
