// File: sim/scenario_fields.h
//
// The scenario file's keys: one line per key (sim/scenario_fields.cc),
// which ParseScenario() reads and ScenarioToToml() writes.

#ifndef VDSOLAB_SIM_SCENARIO_FIELDS_H_
#define VDSOLAB_SIM_SCENARIO_FIELDS_H_

#include "sim/scenario.h"
#include "sim/toml_table.h"

namespace vdsolab::sim {

// The top level: name, description and every section.
const toml_table::Fields<Scenario>& ScenarioFields();

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_SCENARIO_FIELDS_H_
