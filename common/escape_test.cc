#include "common/escape.h"

#include <gtest/gtest.h>

#include <string>

namespace vdsolab {
namespace {

using std::string_literals::operator""s;

TEST(JsonQuote, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonQuote(""), "\"\"");
  EXPECT_EQ(JsonQuote("plain text"), "\"plain text\"");
  EXPECT_EQ(JsonQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonQuote("\n\t\r"), "\"\\u000a\\u0009\\u000d\"");
  EXPECT_EQ(JsonQuote("\x01\x1f"), "\"\\u0001\\u001f\"");
  EXPECT_EQ(JsonQuote("nul\0here"s), "\"nul\\u0000here\"");
  // JSON needs no escape for DEL.
  EXPECT_EQ(JsonQuote("\x7f"), "\"\x7f\"");
}

TEST(TomlQuote, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(TomlQuote(""), "\"\"");
  EXPECT_EQ(TomlQuote("plain text"), "\"plain text\"");
  EXPECT_EQ(TomlQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  // Newline has a short escape, tab may stand unescaped, the rest and DEL
  // are \uXXXX.
  EXPECT_EQ(TomlQuote("\n\t\r"), "\"\\n\t\\u000D\"");
  EXPECT_EQ(TomlQuote("\x01\x1f\x7f"), "\"\\u0001\\u001F\\u007F\"");
  EXPECT_EQ(TomlQuote("nul\0here"s), "\"nul\\u0000here\"");
}

TEST(Quote, PassesNonAsciiBytesThrough) {
  // UTF-8 (é, U+FEF7) and a byte that is not UTF-8 at all.
  const std::string bytes = "caf\xc3\xa9 \xef\xbb\xb7 \xff";
  EXPECT_EQ(JsonQuote(bytes), "\"" + bytes + "\"");
  EXPECT_EQ(TomlQuote(bytes), "\"" + bytes + "\"");
}

}  // namespace
}  // namespace vdsolab
