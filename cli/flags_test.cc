#include "cli/flags.h"

#include <gtest/gtest.h>

namespace vdsolab::cli {
namespace {

CommandSpec Spec() {
  CommandSpec s;
  s.name = "run";
  s.synopsis = "vdsolab run SCENARIO [flags]";
  s.positional = {"SCENARIO"};
  s.min_positional = s.max_positional = 1;
  s.flags = {
      MakeSeedFlag("N", "seed", ""),
      MakeFlag("hz", FlagKind::kInt, "N", "HZ", "250", 10, 10000),
      MakeFlag("ppm", FlagKind::kDouble, "PPM", "ppm", "", -500, 500),
      MakeFlag("duration", FlagKind::kDuration, "D", "how long", "", 0,
               86400e9),
      MakeFlag("variant-so", FlagKind::kList, "FILE", "plugins"),
      MakeFlag("watch", FlagKind::kBool, "", "watch"),
      MakeChoice("format", {"text", "json"}, "format", "text"),
  };
  return s;
}

absl::StatusOr<ParsedFlags> Parse(std::vector<std::string> args) {
  return ParseFlags(Spec(), args);
}

std::string Error(std::vector<std::string> args) {
  auto r = Parse(std::move(args));
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : std::string(r.status().message());
}

TEST(Flags, ParsesEverySpellingAndType) {
  auto f = Parse({"a.toml", "--seed=7", "--hz", "100", "--ppm=-2.5",
                  "--duration=1500ms", "--variant_so=x.so",
                  "--variant-so=y.so,z.so", "--watch", "--format=json"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->positional(), std::vector<std::string>{"a.toml"});
  EXPECT_EQ(f->Uint("seed"), 7u);
  EXPECT_EQ(f->Int("hz"), 100);
  EXPECT_EQ(f->Double("ppm"), -2.5);
  EXPECT_EQ(f->DurationNs("duration"), 1500000000u);
  EXPECT_EQ(f->List("variant-so"),
            (std::vector<std::string>{"x.so", "y.so", "z.so"}));
  EXPECT_TRUE(f->Bool("watch"));
  EXPECT_EQ(f->String("format"), "json");
  EXPECT_FALSE(f->Has("nothing"));
}

TEST(Flags, RefusesWhatTheCommandDoesNotTake) {
  EXPECT_NE(Error({"a", "--bogus"}).find("unknown flag --bogus for 'run'"),
            std::string::npos);
  EXPECT_NE(Error({"a", "-x"}).find("unknown option '-x'"), std::string::npos);
  EXPECT_NE(Error({}).find("missing SCENARIO"), std::string::npos);
  EXPECT_NE(Error({"a", "b"}).find("unexpected argument 'b'"),
            std::string::npos);
}

TEST(Flags, RefusesBadValuesNamingThem) {
  EXPECT_NE(Error({"a", "--hz=abc"}).find("--hz=abc: want a decimal integer"),
            std::string::npos);
  EXPECT_NE(Error({"a", "--hz=5"}).find("--hz=5: want 10 .. 10000"),
            std::string::npos);
  EXPECT_NE(Error({"a", "--seed=-1"}).find("--seed=-1: want a non-negative"),
            std::string::npos);
  EXPECT_NE(Error({"a", "--seed=99999999999999999999"}).find("--seed="),
            std::string::npos);
  // What a replay file's run.seed can hold: 2^63-1 and not one more.
  EXPECT_NE(Error({"a", "--seed=9223372036854775808"})
                .find("--seed=9223372036854775808: want 0 .. "
                      "9223372036854775807"),
            std::string::npos);
  EXPECT_NE(Error({"a", "--seed=18446744073709551615"}).find("want 0 .. "),
            std::string::npos);
  EXPECT_EQ(Parse({"a", "--seed=9223372036854775807"})->Uint("seed"),
            uint64_t{9223372036854775807u});
  EXPECT_NE(Error({"a", "--duration=-1s"}).find("--duration=-1s"),
            std::string::npos);
  EXPECT_NE(Error({"a", "--duration=25h"}).find("at most 24h"),
            std::string::npos);
  EXPECT_NE(Error({"a", "--ppm=nan"}).find("want a number"), std::string::npos);
  EXPECT_NE(Error({"a", "--format=xml"}).find("want \"text\", \"json\""),
            std::string::npos);
  EXPECT_NE(Error({"a", "--seed"}).find("--seed needs a value"),
            std::string::npos);
  EXPECT_NE(Error({"a", "--seed=1", "--seed=2"}).find("given twice"),
            std::string::npos);
  EXPECT_NE(Error({"a", "--variant-so=x,,y"}).find("empty item"),
            std::string::npos);
}

TEST(Flags, HelpNeedsNoPositionalAndListsEveryFlag) {
  auto f = Parse({"--help"});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->help());
  const std::string help = CommandHelp(Spec());
  for (const char* flag :
       {"--seed=N", "--hz=N", "--variant-so=FILE", "--watch",
        "--format=text|json", "(default: 250)", "(repeatable)"}) {
    EXPECT_NE(help.find(flag), std::string::npos) << flag << "\n" << help;
  }
}

TEST(Flags, DoubleDashEndsTheFlags) {
  auto f = Parse({"--", "--seed=1"});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->positional(), std::vector<std::string>{"--seed=1"});
  EXPECT_FALSE(f->Has("seed"));
}

}  // namespace
}  // namespace vdsolab::cli
