#include "third_party/tomlplusplus/hardened.h"

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace vdsolab::toml_hardened {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The key a parse error at `line` (1-based) of `text` is in, as the
// scenario's other errors name keys ("reader[0].period"), when that line
// is a `key = value` line; "" when it is not (a header, a value continued
// from an earlier line). The table is the last header above it: `[a.b]`,
// or `[[a]]` counted (the k-th `[[a]]` is a[k-1]).
std::string KeyAtLine(std::string_view text, size_t line) {
  std::string table;
  std::map<std::string, int, std::less<>> arrays;
  size_t at = 0;
  for (size_t n = 1; at <= text.size(); ++n) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view l = Trim(text.substr(at, end - at));
    if (n == line) {
      const size_t eq = l.find('=');
      if (l.empty() || l.front() == '[' || l.front() == '#' ||
          eq == std::string_view::npos) {
        return "";
      }
      const std::string_view key = Trim(l.substr(0, eq));
      if (key.empty() ||
          key.find_first_of("\"'[]{},") != std::string_view::npos) {
        return "";
      }
      return table.empty() ? std::string(key) : table + "." + std::string(key);
    }
    if (l.substr(0, 2) == "[[") {
      const size_t close = l.find("]]");
      if (close != std::string_view::npos) {
        const std::string name(Trim(l.substr(2, close - 2)));
        table = name + "[" + std::to_string(arrays[name]++) + "]";
      }
    } else if (l.substr(0, 1) == "[") {
      const size_t close = l.find(']');
      if (close != std::string_view::npos) {
        table = std::string(Trim(l.substr(1, close - 1)));
      }
    }
    if (end == text.size()) break;
    at = end + 1;
  }
  return "";
}

}  // namespace

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
    const std::string key = KeyAtLine(text, err.source().begin.line);
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d:%d: %s%s", source, err.source().begin.line,
        err.source().begin.column, key.empty() ? "" : key + ": ",
        std::string(err.description())));
  }
  return std::move(parsed).table();
}

}  // namespace vdsolab::toml_hardened
