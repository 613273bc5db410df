// File: sim/scenario_toml.h
//
// Scenario files: TOML in, TOML out (docs/scenarios.md has the schema).
// One table of fields (sim/scenario_fields.cc) drives both directions.
// Durations are strings with a unit ("250us", "1.5s") parsed exactly into
// nanoseconds; unknown keys are errors, so a typo cannot silently change a
// run; a message names the file, the line and the key.

#ifndef VDSOLAB_SIM_SCENARIO_TOML_H_
#define VDSOLAB_SIM_SCENARIO_TOML_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "sim/durations.h"  // IWYU pragma: export
#include "sim/scenario.h"

namespace vdsolab::sim {

// Parses and validates. `source` names the text in messages (a file name).
absl::StatusOr<Scenario> ParseScenario(const std::string& text,
                                       const std::string& source);
// `what` names the file in messages about opening it ("replay file").
absl::StatusOr<Scenario> LoadScenarioFile(
    const std::string& path, std::string_view what = "scenario file");

// "PATH:LINE:COLUMN" of the key that `message` (an error about the
// scenario file at `path`) starts with ("reader[1].timens: ..."), or of its
// nearest enclosing table in the file; "PATH" when the file names neither.
std::string ScenarioKeyPosition(const std::string& path,
                                const std::string& message);

// The scenario as TOML that ParseScenario() reads back to an equal value.
std::string ScenarioToToml(const Scenario& scenario);

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_SCENARIO_TOML_H_
