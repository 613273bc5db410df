#include "sim/scenario_toml.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "sim/scenario_fields.h"
#include "sim/toml_table.h"
#include "third_party/tomlplusplus/hardened.h"

namespace vdsolab::sim {
namespace {

// ":LINE:COLUMN" of the key a validation message starts with
// ("kernel.timekeeping_cpu = 5: ...", "event[2].at ..."), or of its
// nearest enclosing table the file has; "" when the file does not name it
// (a default value).
std::string LineOfKey(const toml::table& table, const std::string& message) {
  std::string path = message.substr(0, message.find_first_of(" :"));
  while (!path.empty()) {
    const toml::node_view<const toml::node> node = table.at_path(path);
    if (node) {
      const toml::source_position at = node.node()->source().begin;
      return absl::StrFormat(":%d:%d", at.line, at.column);
    }
    const size_t cut = path.find_last_of(".[");
    path = cut == std::string::npos ? "" : path.substr(0, cut);
  }
  return "";
}

}  // namespace

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
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s%s: %s", source, LineOfKey(*parsed, std::string(v.message())),
        v.message()));
  }
  return s;
}

namespace {

// The text of a scenario file: only a regular file of a sane size (a
// directory, a device such as /dev/zero or a FIFO would be read forever or
// as an empty scenario).
absl::StatusOr<std::string> ReadScenarioText(const std::string& path,
                                             std::string_view what) {
  constexpr size_t kMaxBytes = 1 << 20;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrFormat("cannot open %s \"%s\": %s",
                                               what, path, strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: not a %s (%s)", path, what,
        S_ISDIR(st.st_mode) ? "a directory" : "not a regular file"));
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: larger than 1 MiB", path));
  }
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrFormat("cannot open %s \"%s\"", what, path));
  }
  std::string text(kMaxBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: larger than 1 MiB", path));
  }
  return text;
}

}  // namespace

absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path,
                                          std::string_view what) {
  absl::StatusOr<std::string> text = ReadScenarioText(path, what);
  if (!text.ok()) return text.status();
  if (text->find_first_not_of(" \t\r\n") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: empty: a scenario file has at least one key (name = \"...\" "
        "is enough: every other key has a default); see docs/scenarios.md",
        path));
  }
  return ParseScenario(*text, path);
}

std::string ScenarioKeyPosition(const std::string& path,
                                const std::string& message) {
  absl::StatusOr<std::string> text = ReadScenarioText(path, "scenario file");
  if (!text.ok()) return path;
  absl::StatusOr<toml::table> parsed = toml_hardened::ParseToml(*text, path);
  if (!parsed.ok()) return path;
  return path + LineOfKey(*parsed, message);
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
