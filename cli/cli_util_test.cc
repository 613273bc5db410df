#include "cli/cli_util.h"

#include <gtest/gtest.h>

#include <string>

namespace vdsolab::cli {
namespace {

// A scenario's name is free text; the replay file's name must stay in its
// directory, be one shell word and not look like a flag.
TEST(SafeFileStem, KeepsSafeNamesAndCleansTheRest) {
  EXPECT_EQ(SafeFileStem("coarse-step-back"), "coarse-step-back");
  EXPECT_EQ(SafeFileStem("x86-4.16_a+b"), "x86-4.16_a+b");
  EXPECT_EQ(SafeFileStem("../x"), "x");
  EXPECT_EQ(SafeFileStem("/tmp/x"), "tmp-x");
  EXPECT_EQ(SafeFileStem("a/b"), "a-b");
  EXPECT_EQ(SafeFileStem("my run"), "my-run");
  EXPECT_EQ(SafeFileStem("a\nb"), "a-b");
  EXPECT_EQ(SafeFileStem("-rf"), "rf");
  EXPECT_EQ(SafeFileStem(".hidden"), "hidden");
  EXPECT_EQ(SafeFileStem("caf\xc3\xa9"), "caf--");
  EXPECT_EQ(SafeFileStem(""), "scenario");
  EXPECT_EQ(SafeFileStem("../"), "scenario");
  EXPECT_EQ(SafeFileStem(std::string(300, 'x')),
            std::string(kMaxFileStem, 'x'));
}

TEST(ShellQuote, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(ShellQuote("dir/a-seed1.replay.toml"), "dir/a-seed1.replay.toml");
  EXPECT_EQ(ShellQuote("--variant=5.3"), "--variant=5.3");
  EXPECT_EQ(ShellQuote("my run.toml"), "'my run.toml'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("a\nb"), "'a\nb'");
  EXPECT_EQ(ShellQuote("$(x)"), "'$(x)'");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuotePath("-x.toml"), "./-x.toml");
  EXPECT_EQ(ShellQuotePath("/tmp/-x.toml"), "/tmp/-x.toml");
  EXPECT_EQ(ShellQuotePath("o ut/x.toml"), "'o ut/x.toml'");
}

}  // namespace
}  // namespace vdsolab::cli
