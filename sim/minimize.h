// File: sim/minimize.h
//
// The minimiser: a smaller scenario that still shows a random run's
// failure at the same reader call.

#ifndef VDSOLAB_SIM_MINIMIZE_H_
#define VDSOLAB_SIM_MINIMIZE_H_

#include "absl/status/statusor.h"
#include "sim/properties.h"
#include "sim/scenario.h"
#include "variants/variant.h"

namespace vdsolab::sim {

// The run cut short after the failing call, and readers and events it does
// not need removed (each removal kept only if the failure recurs). Carries
// a [replay] section naming the call and the property.
absl::StatusOr<Scenario> MinimizeFailure(const Scenario& scenario,
                                         const variants::Variant& variant,
                                         const Violation& failure);

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_MINIMIZE_H_
