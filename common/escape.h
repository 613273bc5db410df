// File: common/escape.h
//
// Strings as quoted JSON and TOML strings: the one escaper for `vdsolab
// compare --format=json` and scenario files. Bytes are escaped as bytes:
// UTF-8 (or any other byte >= 0x80) passes through unchanged, so the text
// reads back to the same bytes.

#ifndef VDSOLAB_COMMON_ESCAPE_H_
#define VDSOLAB_COMMON_ESCAPE_H_

#include <string>
#include <string_view>

namespace vdsolab {

// A JSON string (RFC 8259 §7): `"` and `\` escaped, U+0000..U+001F as
// \u00xx; nothing else is.
std::string JsonQuote(std::string_view s);

// A TOML basic string (TOML 1.0): `"` and `\` escaped, newline as \n and
// every other control character but tab (U+007F too) as \u00XX.
std::string TomlQuote(std::string_view s);

}  // namespace vdsolab

#endif  // VDSOLAB_COMMON_ESCAPE_H_
