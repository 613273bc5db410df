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

// How many times `delim` (""" or ''') occurs in `line`.
int Count(std::string_view line, std::string_view delim) {
  int n = 0;
  for (size_t at = line.find(delim); at != std::string_view::npos;
       at = line.find(delim, at + delim.size())) {
    ++n;
  }
  return n;
}

// A header's name with each array-table prefix given its current index:
// [a.b] under the k-th [[a]] is a[k].b.
std::string Resolve(const std::string& name,
                    const std::map<std::string, int, std::less<>>& current) {
  std::string out;
  size_t from = 0;
  for (;;) {
    const size_t dot = name.find('.', from);
    const std::string prefix = name.substr(0, dot);
    out += name.substr(
        from, dot == std::string::npos ? std::string::npos : dot - from);
    if (dot == std::string::npos) return out;
    if (auto it = current.find(prefix); it != current.end()) {
      out += "[" + std::to_string(it->second) + "]";
    }
    out += ".";
    from = dot + 1;
  }
}

// The key a parse error at `line` (1-based) of `text` is in, as the
// scenario's other errors name keys ("reader[0].period"), when that line
// is a `key = value` line; "" when it is not (a header, a value continued
// from an earlier line, a line inside a multi-line string). The table is
// the last header above it: `[a.b]`, or `[[a]]` counted per parent (the
// k-th `[[a]]` is a[k-1]).
std::string KeyAtLine(std::string_view text, size_t line) {
  std::string table;
  std::map<std::string, int, std::less<>> count;    // By resolved name.
  std::map<std::string, int, std::less<>> current;  // By written name.
  bool in_basic = false;                            // Inside a """ string...
  bool in_literal = false;                          // ...or a ''' one.
  size_t at = 0;
  for (size_t n = 1; at <= text.size(); ++n) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view l = Trim(text.substr(at, end - at));
    const bool in_string = in_basic || in_literal;
    if (Count(l, "\"\"\"") % 2 == 1 && !in_literal) in_basic = !in_basic;
    if (Count(l, "'''") % 2 == 1 && !in_basic) in_literal = !in_literal;
    if (n == line) {
      const size_t eq = l.find('=');
      if (in_string || l.empty() || l.front() == '[' || l.front() == '#' ||
          eq == std::string_view::npos) {
        return "";
      }
      const std::string_view key = Trim(l.substr(0, eq));
      if (key.empty()) return "";
      for (const char c : key) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u >= 0x7f || c == '"' || c == '\'' || c == '[' ||
            c == ']' || c == '{' || c == '}' || c == ',') {
          return "";
        }
      }
      return table.empty() ? std::string(key) : table + "." + std::string(key);
    }
    if (!in_string && l.substr(0, 2) == "[[") {
      const size_t close = l.find("]]");
      if (close != std::string_view::npos) {
        const std::string name(Trim(l.substr(2, close - 2)));
        const std::string resolved = Resolve(name, current);
        const int k = count[resolved]++;
        current[name] = k;
        table = resolved + "[" + std::to_string(k) + "]";
      }
    } else if (!in_string && l.substr(0, 1) == "[") {
      const size_t close = l.find(']');
      if (close != std::string_view::npos) {
        table = Resolve(std::string(Trim(l.substr(1, close - 1))), current);
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
