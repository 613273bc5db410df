#include "common/escape.h"

#include "absl/strings/str_format.h"

namespace vdsolab {
namespace {

// The shared part: quotes around, `"` and `\` behind a backslash; the
// dialect's `control(byte, out)` appends its escape for a byte it escapes
// and returns true, or returns false to keep the byte as it is.
template <class Control>
std::string Quote(std::string_view s, Control control) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (!control(static_cast<unsigned char>(c), &out)) {
      out += c;
    }
  }
  out += '"';
  return out;
}

}  // namespace

std::string JsonQuote(std::string_view s) {
  return Quote(s, [](unsigned char u, std::string* out) {
    if (u >= 0x20) return false;
    absl::StrAppendFormat(out, "\\u%04x", u);
    return true;
  });
}

std::string TomlQuote(std::string_view s) {
  return Quote(s, [](unsigned char u, std::string* out) {
    if (u == '\n') {
      *out += "\\n";
      return true;
    }
    if ((u >= 0x20 || u == '\t') && u != 0x7f) return false;
    absl::StrAppendFormat(out, "\\u%04X", u);
    return true;
  });
}

}  // namespace vdsolab
