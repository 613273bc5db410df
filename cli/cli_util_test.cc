#include "cli/cli_util.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

TEST(FlagError, NamesTheFlagOnce) {
  EXPECT_EQ(FlagError("kernel-tree", "/x", "no Makefile"),
            "--kernel-tree=/x: no Makefile");
  // A library's message that names the flag already is kept as it is.
  EXPECT_EQ(FlagError("kernel-tree", "/x", "--kernel-tree=/x: no Makefile"),
            "--kernel-tree=/x: no Makefile");
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

// Ctrl-C: a failure found stands; a run cut short with nothing failed is
// no verdict, so its status is the signal's, never 0.
TEST(InterruptedExit, OnlyAFailureOrTheEndGivesAnExitStatus) {
  EXPECT_EQ(InterruptedExit(0), 0);  // Not stopped.
  EXPECT_EQ(InterruptedExit(1), 1);
  {
    InterruptScope scope;
    raise(SIGTERM);
    EXPECT_TRUE(StopFlag().load());
    EXPECT_EQ(StopSignal(), SIGTERM);
    EXPECT_EQ(InterruptedExit(0), 128 + SIGTERM);
    EXPECT_EQ(InterruptedExit(1), 1);
    EXPECT_EQ(InterruptedExit(2), 2);
    EXPECT_EQ(FinishCommand(1), 1);  // Returns: nothing to end.
  }
  // FinishCommand() ends the process by the signal, after its output.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    FinishCommand(128 + SIGTERM);
    _exit(0);  // Not reached when it works.
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status)) << status;
  if (WIFSIGNALED(status)) {
    EXPECT_EQ(WTERMSIG(status), SIGTERM);
  }
}

// A command slow to reach its next stop check (a minimisation does not
// poll the flag) still ends at the second Ctrl-C, by the signal.
TEST(InterruptScope, TheSecondCtrlCEndsTheProcess) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    InterruptScope scope;
    raise(SIGINT);
    if (!StopFlag().load()) _exit(3);  // The first only asks.
    raise(SIGINT);
    _exit(4);  // Not reached when it works.
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGINT);
}

}  // namespace
}  // namespace vdsolab::cli
