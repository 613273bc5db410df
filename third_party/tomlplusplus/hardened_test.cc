#include "third_party/tomlplusplus/hardened.h"

#include <gtest/gtest.h>

#include <string>

namespace vdsolab::toml_hardened {
namespace {

TEST(ParseToml, ParsesAndSaysWhereItStopped) {
  const absl::StatusOr<toml::table> t = ParseToml("a = 1\n", "ok.toml");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->get("a")->value<int64_t>(), 1);
  const absl::StatusOr<toml::table> bad = ParseToml("a = 1\n[b\n", "x.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("x.toml:2:", 0), 0u) << bad.status();
}

// Fix 1: an internal check of the library fails; an error, not an abort.
// The parser's own errors name the key of their line, in its table.
TEST(ParseToml, AParseErrorNamesTheKeyOfItsLine) {
  struct Case {
    const char* text;
    const char* want;  // The message's start.
  };
  for (const Case& c : {
           Case{"a = 99999999999999999999\n", "k.toml:1:25: a: "},
           Case{"[m.n]\n# c\nx = 1e999\n", "k.toml:3:10: m.n.x: "},
           Case{"[[r]]\n[[r]]\n[[q]]\n[[r]]\n y = 1e999\n",
                "k.toml:5:11: r[2].y: "},
           // Array tables counted per parent; a table under one indexed.
           Case{"[[a]]\n[[a.b]]\n[[a]]\n[[a.b]]\nz = 1e999\n",
                "k.toml:5:10: a[1].b[0].z: "},
           Case{"[[a]]\n[[a]]\n[a.c]\nz = 1e999\n", "k.toml:4:10: a[1].c.z: "},
           // A header inside a multi-line string is no header.
           Case{
               "n = \"\"\"\n[[r]]\n\"\"\"\n[[r]]\ncpu = 99999999999999999999\n",
               "k.toml:5:27: r[0].cpu: "},
           // Not a `key = value` line: no key.
           Case{"a = [1,\n 99999999999999999999]\n", "k.toml:2:22: Error"},
           Case{"[b\n", "k.toml:1:3: Error"},
       }) {
    const absl::StatusOr<toml::table> t = ParseToml(c.text, "k.toml");
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_EQ(t.status().message().rfind(c.want, 0), 0u)
        << c.text << " -> " << t.status();
  }
}

TEST(ParseToml, ATableHeaderWithoutAKeyIsAnError) {
  const absl::StatusOr<toml::table> t = ParseToml("[{a]]\n", "h.toml");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("h.toml"), std::string::npos);
}

// Fix 2: code points the generated predicates never expected (U+00DE,
// U+FEF7) where whitespace may stand: an error, not undefined behaviour.
TEST(ParseToml, NonAsciiWhereWhitespaceMayStandIsAnError) {
  for (const char* text : {"\xc3\x9e", "x = 1 \xef\xbb\xb7\n"}) {
    EXPECT_FALSE(ParseToml(text, "u.toml").ok()) << text;
  }
}

// Fix 3: a float asked for as an integer is no integer (and no cast).
TEST(IntegerValue, OnlyIntegerNodesHaveOne) {
  const absl::StatusOr<toml::table> t =
      ParseToml("i = -7\nf = 1e300\ns = \"3\"\n", "v.toml");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(IntegerValue(*t->get("i")), -7);
  EXPECT_EQ(IntegerValue(*t->get("f")), std::nullopt);
  EXPECT_EQ(IntegerValue(*t->get("s")), std::nullopt);
}

}  // namespace
}  // namespace vdsolab::toml_hardened
