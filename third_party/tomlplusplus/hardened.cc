#include "third_party/tomlplusplus/hardened.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace vdsolab::toml_hardened {

absl::StatusOr<toml::table> ParseToml(const std::string& text,
                                      const std::string& source) {
  toml::parse_result parsed;
  try {
    parsed = toml::parse(text, source);
  } catch (const CheckFailed& failed) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: not valid TOML (the parser stopped at an internal check, %s; "
        "look for a table header that does not start with a key)",
        source, failed.expr));
  }
  if (!parsed) {
    const toml::parse_error& err = parsed.error();
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d:%d: %s", source, err.source().begin.line,
        err.source().begin.column, std::string(err.description())));
  }
  return std::move(parsed).table();
}

}  // namespace vdsolab::toml_hardened
