#include "sim/scenario_toml.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "sim/scenario_fields.h"
#include "sim/toml_table.h"
#include "third_party/tomlplusplus/hardened.h"

namespace vdsolab::sim {

absl::StatusOr<Scenario> ParseScenario(const std::string& text,
                                       const std::string& source) {
  absl::StatusOr<toml::table> parsed = toml_hardened::ParseToml(text, source);
  if (!parsed.ok()) return parsed.status();
  Scenario s;
  if (absl::Status read = toml_table::ReadTable(
          *parsed, ScenarioFields(), toml_table::Where(&source, ""), s);
      !read.ok()) {
    return read;
  }
  if (absl::Status v = ValidateScenario(s); !v.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", source, v.message()));
  }
  return s;
}

absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrFormat("cannot open scenario file \"%s\"", path));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (buffer.str().size() > (1u << 20)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: larger than 1 MiB", path));
  }
  return ParseScenario(buffer.str(), path);
}

std::string ScenarioToToml(const Scenario& scenario) {
  // Each reader's id resolved (its index where the file left it out), so
  // that a replay shrunk to fewer readers keeps their randomness.
  Scenario s = scenario;
  for (size_t i = 0; i < s.readers.size(); ++i) {
    s.readers[i].id = ReaderId(scenario, i);
  }
  std::string out;
  toml_table::WriteTable(s, ScenarioFields(), "", &out);
  return out;
}

}  // namespace vdsolab::sim
