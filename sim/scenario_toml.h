// File: sim/scenario_toml.h
//
// Scenario files: TOML in, TOML out (docs/scenarios.md has the schema).
// Durations are strings with a unit ("250us", "1.5s") parsed exactly into
// nanoseconds; unknown keys are errors, so a typo cannot silently change a
// run.

#ifndef VDSOLAB_SIM_SCENARIO_TOML_H_
#define VDSOLAB_SIM_SCENARIO_TOML_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/timespec.h"
#include "sim/scenario.h"

namespace vdsolab::sim {

// Parses and validates. `source` names the text in messages (a file name).
absl::StatusOr<Scenario> ParseScenario(const std::string& text,
                                       const std::string& source);
absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path);

// The scenario as TOML that ParseScenario() reads back to an equal value.
std::string ScenarioToToml(const Scenario& scenario);

// "1764460800.5" -> {1764460800, 500000000}: whole seconds (up to 12
// digits) and up to nine fraction digits, nothing else.
absl::StatusOr<Timespec64> ParseSecondsFraction(const std::string& text);

// "1.5s" -> 1500000000; units ns, us, ms, s, m, h; plain integers are ns.
absl::StatusOr<uint64_t> ParseDurationNs(const std::string& text);
// 1500000000 -> "1.5s" (exact).
std::string FormatDurationNs(uint64_t ns);

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_SCENARIO_TOML_H_
