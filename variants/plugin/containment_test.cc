// Containment of misbehaving plugins: a reader that crashes (a wild
// pointer, a division by zero, abort(), a stack overflow), spins without
// returning (in its own code or in vdsolab's callbacks) or blocks is a finding
// of the run, with a minimal replay that shows it again, never the end of
// vdsolab; the calls it answers normally are still checked.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "sim/run.h"
#include "testing/runfile.h"
#include "variants/plugin/call_guard.h"
#include "variants/plugin/loader.h"

namespace vdsolab::variants {
namespace {

using ::vdsolab::testing::Runfile;

// One reader alternating MONOTONIC (which misbehaves) and REALTIME (which
// the plugin answers through the syscall), a few dozen calls.
sim::Scenario Short() {
  sim::Scenario s;
  s.name = "short";
  s.run.duration_ns = 20000000;
  s.readers = {sim::ReaderSpec{}};
  s.readers[0].clocks = {kClockRealtime, kClockMonotonic};
  s.readers[0].period_ns = 1000000;
  return s;
}

struct Case {
  const char* name;
  sim::Property property;
  const char* why;
  double limit = 0.2;  // SetCallTimeLimit(), seconds.
  // Spins through the load callbacks: the replay's trace would be
  // millions of steps, and keeps a bounded number.
  bool bounded_trace = false;
  // The call does not return normally (a crash, a spin, an exit).
  bool faults = true;
  // In the violation's detail, if set: where a crash happened, as every
  // run prints it (not an address the layout's randomisation moves).
  const char* detail = nullptr;
  // In the replay's text, if set.
  const char* replay = nullptr;
};

class Containment : public ::testing::TestWithParam<Case> {};

// What contains a call and what vdsolab's own work needs, shared by the
// whole process: a plugin's call must leave it as it was.
struct ProcessState {
  struct sigaction segv = {};
  sigset_t mask;
  stack_t altstack = {};
  struct rlimit fsize = {};
  mode_t umask = 0;
};
ProcessState Now() {
  ProcessState p;
  sigaction(SIGSEGV, nullptr, &p.segv);
  sigprocmask(SIG_BLOCK, nullptr, &p.mask);
  sigaltstack(nullptr, &p.altstack);
  getrlimit(RLIMIT_FSIZE, &p.fsize);
  p.umask = ::umask(022);
  ::umask(p.umask);
  return p;
}

TEST_P(Containment, IsAFindingWithAReplay) {
  const Case& c = GetParam();
  // The guard's handlers and this thread's alternate stack are installed
  // at its first guarded call.
  EXPECT_FALSE(RunContained([] {}).has_value());
  const ProcessState before = Now();
  SetCallTimeLimit(c.limit);
  absl::StatusOr<const Variant*> v = LoadPluginVariant(
      Runfile("examples/plugin/libmisbehaving_" + std::string(c.name) + ".so"));
  ASSERT_TRUE(v.ok()) << v.status();
  const sim::Scenario s = Short();
  absl::StatusOr<sim::Outcome> out = sim::Run(s, **v);
  ASSERT_TRUE(out.ok()) << out.status();
  std::fputs(sim::FormatOutcome(s, *out).c_str(), stdout);
  EXPECT_TRUE(out->failed);
  const sim::PropertyStats& bad =
      out->stats[static_cast<size_t>(c.property) - 1];
  EXPECT_GT(bad.defects, 0u);
  // Every MONOTONIC call misbehaved; the REALTIME calls between them (the
  // plugin's syscall) were still checked, and held.
  const sim::PropertyStats& sane =
      out->stats[static_cast<size_t>(sim::Property::kSane) - 1];
  EXPECT_GT(sane.checked, 0u);
  EXPECT_EQ(sane.defects, 0u);
  EXPECT_GT(out->random->coverage.fallbacks, 0u);
  ASSERT_FALSE(out->replays.empty());
  const sim::FailureReplay& first = out->replays.front();
  EXPECT_EQ(first.failure.property, c.property);
  EXPECT_NE(first.failure.why.find(c.why), std::string::npos)
      << first.failure.why;
  if (c.detail != nullptr) {
    EXPECT_NE(first.failure.detail.find(c.detail), std::string::npos)
        << first.failure.detail;
  }
  ASSERT_TRUE(first.scenario.has_value()) << first.error;
  absl::StatusOr<sim::ReplayOutcome> replay = sim::Replay(*first.scenario, **v);
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_TRUE(replay->reproduced) << replay->text;
  if (c.faults) {
    EXPECT_NE(replay->text.find("did not return: "), std::string::npos)
        << replay->text;
  }
  if (c.replay != nullptr) {
    EXPECT_NE(replay->text.find(c.replay), std::string::npos) << replay->text;
  }
  const ProcessState after = Now();
  EXPECT_EQ(after.segv.sa_sigaction, before.segv.sa_sigaction);
  EXPECT_EQ(after.segv.sa_flags, before.segv.sa_flags);
  EXPECT_EQ(sigismember(&after.mask, SIGSEGV), 0);
  EXPECT_EQ(after.altstack.ss_flags, before.altstack.ss_flags);
  EXPECT_EQ(after.altstack.ss_sp, before.altstack.ss_sp);
  EXPECT_EQ(after.fsize.rlim_cur, before.fsize.rlim_cur);
  EXPECT_EQ(after.umask, before.umask);
  if (c.bounded_trace) {
    ASSERT_TRUE(replay->call.has_value());
    const std::vector<sim::TraceStep>& trace = replay->call->trace;
    std::printf("the spinning call's trace: %zu steps kept\n", trace.size());
    EXPECT_LE(trace.size(), 200002u);
    ASSERT_GE(trace.size(), 2u);
    EXPECT_EQ(trace.back().kind, sim::TraceStep::Kind::kFault);
    EXPECT_NE(trace[trace.size() - 2].what.find("more steps not recorded"),
              std::string::npos)
        << trace[trace.size() - 2].what;
  }
}

// A C++ exception out of the entry point: caught at the call's boundary,
// a finding for every throwing call, and the C++ runtime left sane (before,
// std::terminate() was contained as SIGABRT once, then every later call
// printed "terminate called recursively").
TEST(ContainmentCpp, AnExceptionIsCaughtAtTheBoundary) {
  SetCallTimeLimit(0.2);
  absl::StatusOr<const Variant*> v =
      LoadPluginVariant(Runfile("examples/plugin/libthrowing_plugin.so"));
  ASSERT_TRUE(v.ok()) << v.status();
  const sim::Scenario s = Short();
  absl::StatusOr<sim::Outcome> out = sim::Run(s, **v);
  ASSERT_TRUE(out.ok()) << out.status();
  const sim::PropertyStats& crash =
      out->stats[static_cast<size_t>(sim::Property::kCrash) - 1];
  const sim::PropertyStats& sane =
      out->stats[static_cast<size_t>(sim::Property::kSane) - 1];
  EXPECT_GT(crash.defects, 1u);
  EXPECT_GT(sane.checked, 0u);
  EXPECT_EQ(sane.defects, 0u);
  ASSERT_FALSE(out->replays.empty());
  EXPECT_NE(out->replays.front().failure.why.find(
                "did what a vDSO call cannot (threw a C++ exception)"),
            std::string::npos)
      << out->replays.front().failure.why;
  EXPECT_EQ(std::uncaught_exceptions(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Plugins, Containment,
    ::testing::Values(
        // A pointer from NULL: its address; an instruction's fault: its
        // offset in the plugin; abort(): no address (its siginfo holds the
        // sender's pid); a stack overflow: none either (the stack moves).
        Case{"segv", sim::Property::kCrash, "crashed (SIGSEGV)", 0.2, false,
             true, "died of SIGSEGV at address 0x1"},
        Case{"fpe", sim::Property::kCrash, "crashed (SIGFPE)", 0.2, false, true,
             "died of SIGFPE at address libmisbehaving_fpe.so+0x"},
        Case{"abort", sim::Property::kCrash, "crashed (SIGABRT)", 0.2, false,
             true, "died of SIGABRT after"},
        Case{"recurse", sim::Property::kCrash, "crashed (SIGSEGV)", 0.2, false,
             true, "died of SIGSEGV after"},
        // exit() and _exit() end the call, not vdsolab.
        Case{"exit", sim::Property::kCrash,
             "tried to end the process (exit(3))"},
        Case{"underscore_exit", sim::Property::kCrash,
             "tried to end the process (exit(0))"},
        // The page is read-only to readers, as to user space.
        Case{"page_write", sim::Property::kCrash, "crashed (SIGSEGV)"},
        // Loads through the callbacks outside the vvar area are refused
        // (never made), and the call is a finding named by the first one's
        // place, as a plain load's fault there is: here 4 bytes before the
        // area's start (the syscall's time it then answered is dropped).
        Case{"load_outside", sim::Property::kCrash,
             "did what a vDSO call cannot (loaded outside the vvar area)", 0.2,
             false, false,
             "loaded outside the vvar area at address vvar-0x4 "
             "after"},
        // ...as are loads of the area's pages the kernel does not map
        // (vdsolab's hook read them on its own side and died).
        Case{"load_unmapped_page", sim::Property::kCrash,
             "did what a vDSO call cannot (loaded outside the vvar area)", 0.2,
             false, false,
             "loaded outside the vvar area at address vvar+0x1000, the time "
             "namespace page"},
        // A load at the top of the address space, where `p + 4` wraps.
        Case{"load_wrap", sim::Property::kCrash,
             "did what a vDSO call cannot (loaded outside the vvar area)", 0.2,
             false, false, "loaded outside the vvar area at address vvar+0x"},
        // fork(): the child ends inside fork(), so one report, one replay
        // file and no copies of the run (a fork at every call was a fork
        // bomb); the call is a finding when it returns.
        Case{"fork", sim::Property::kCrash,
             "did what a vDSO call cannot (fork())"},
        Case{"thread_exit", sim::Property::kCrash,
             "did what a vDSO call cannot (pthread_exit())"},
        Case{"quick_exit", sim::Property::kCrash,
             "tried to end the process (exit(4))"},
        // vdsolab's store of the answer through the plugin's NULL.
        Case{"fallback_null", sim::Property::kCrash, "crashed (SIGSEGV)"},
        Case{"spin", sim::Property::kLivelock, "spun for 0."},
        // SIG_IGN for the watchdog's signal, by the system call: refused
        // (syscall user dispatch), and the spin after it stopped. Without
        // dispatch the watchdog installs its handler again
        // (call_guard_test's CallGuardWatchdog).
        Case{"ignore_watchdog", sim::Property::kCrash,
             "did what a vDSO call cannot (rt_sigaction(SIGXCPU))", 0.05},
        // Stopped inside a load callback: the stop waits for
        // the callback to return, then still happens. A bound of
        // 0.9 s, so that the trace reaches its cap of 200,000 steps
        // on a slow or loaded machine too (0.2 s made 188,395 on a
        // loaded 2-vCPU VM: ~1 µs a step).
        Case{"spin_loads", sim::Property::kLivelock, "spun for 0.", 0.9, true},
        // Blocked: stopped once seen asleep for the bound (two
        // watchdog periods at least, 0.04 s), not after the
        // wall-time backstop (30 times the bound), and reported as
        // blocked, not spinning.
        Case{"sleep", sim::Property::kLivelock, "blocked for 0.0 s", 0.02},
        // Not faults, but their default action ends the process: a
        // finding, with no address (the signal has none).
        Case{"raise_usr1", sim::Property::kCrash, "crashed (SIGUSR1)", 0.2,
             false, true, "died of SIGUSR1 after"},
        Case{"sigpipe", sim::Property::kCrash, "crashed (SIGPIPE)", 0.2, false,
             true, "died of SIGPIPE after"},
        // The call returns with the CPU's control state changed, which
        // would break its caller: vdsolab died of SIGFPE in its own next
        // division, or aborted in a backwards memcpy(). A finding; the
        // REALTIME calls after it (vdsolab's arithmetic in its checks) run
        // in vdsolab's own state again.
        Case{"fp_traps", sim::Property::kCrash,
             "did what a vDSO call cannot (returned with the floating-point "
             "control changed: MXCSR 0x1f80 -> 0xf80, x87 control word 0x37f "
             "-> 0x35f)",
             0.2, false, false,
             "returned with the floating-point control changed: MXCSR 0x1f80 "
             "-> 0xf80, x87 control word 0x37f -> 0x35f after",
             "\nreturned with the floating-point control changed: MXCSR"},
        Case{"rounding", sim::Property::kCrash,
             "did what a vDSO call cannot (returned with the floating-point "
             "control changed: MXCSR 0x1f80 -> 0x5f80, x87 control word 0x37f "
             "-> 0xb7f)",
             0.2, false, false, nullptr,
             "\nreturned with the floating-point control changed: MXCSR"},
        // A call that undoes what contains it (the fault signal's handler,
        // the alternate stack a stack overflow is handled on, an unblocked
        // SIGSEGV) and then faults ended vdsolab by the signal; one that
        // lowers a limit ended it later, at its next write to a file. The
        // change is refused, and it is the finding (the fault after it,
        // which it explains, is not).
        Case{"signal_default", sim::Property::kCrash,
             "did what a vDSO call cannot (signal(SIGSEGV))"},
        Case{"no_altstack", sim::Property::kCrash,
             "did what a vDSO call cannot (sigaltstack())"},
        Case{"block_segv", sim::Property::kCrash,
             "did what a vDSO call cannot (sigprocmask(SIG_BLOCK))"},
        Case{"file_size_limit", sim::Property::kCrash,
             "did what a vDSO call cannot (setrlimit(RLIMIT_FSIZE))", 0.2,
             false, false, "vdsolab refused it"},
        // Calls that replace, start, stop or end a process, or change
        // what the process shares: vdsolab ended with /bin/true's status
        // 0 (silently), stopped for ever, wrote its replay file mode 0000,
        // crashed after the vfork() child's _exit() jumped back into its
        // frames, was killed at its next system call (seccomp), or
        // reported the plugin's SIGTERM as the user's interrupt. Each
        // returns, then is the call's finding.
        Case{"exec", sim::Property::kCrash,
             "did what a vDSO call cannot (execl())", 0.2, false, false},
        Case{"raise_stop", sim::Property::kCrash,
             "did what a vDSO call cannot (raise(SIGSTOP))", 0.2, false, false},
        Case{"raise_term", sim::Property::kCrash,
             "did what a vDSO call cannot (raise(SIGTERM))", 0.2, false, false},
        Case{"umask", sim::Property::kCrash,
             "did what a vDSO call cannot (umask())", 0.2, false, false},
        Case{"vfork", sim::Property::kCrash,
             "did what a vDSO call cannot (vfork())", 0.2, false, false},
        Case{"seccomp", sim::Property::kCrash,
             "did what a vDSO call cannot (prctl(PR_SET_SECCOMP))", 0.2, false,
             false},
        // The same by an inline `syscall`, past every wrapper: a
        // SIGSEGV handler set back to SIG_DFL ended vdsolab by the fault
        // after it; exit_group() and execve() ended it with status 0,
        // silently; kill(SIGSTOP) stopped it for ever. Syscall user
        // dispatch brings each to the same judgement as its wrapper.
        Case{"raw_signal_default", sim::Property::kCrash,
             "did what a vDSO call cannot (rt_sigaction(SIGSEGV))"},
        Case{"raw_exit", sim::Property::kCrash,
             "tried to end the process (exit(0))"},
        Case{"raw_exec", sim::Property::kCrash,
             "did what a vDSO call cannot (execve())", 0.2, false, false},
        // A plain load 64 KiB past the area's start read vdsolab's own
        // memory and passed: the area's guards make it fault, at an
        // offset every run prints the same.
        Case{"past_the_area", sim::Property::kCrash, "crashed (SIGSEGV)", 0.2,
             false, true, "died of SIGSEGV at address vvar+0x10000"},
        // A page inside the area the kernel does not map (SIGBUS there)
        // read zeros and passed.
        Case{"unmapped_vvar_page", sim::Property::kCrash, "crashed (SIGSEGV)",
             0.2, false, true,
             "died of SIGSEGV at address vvar+0x1000, the time namespace "
             "page, which the kernel maps only for a task in a time "
             "namespace (the kernel: SIGBUS on a load)"},
        // A success without the time stored read as 0.000000000, blamed
        // on the reader's arithmetic.
        Case{"unwritten_answer", sim::Property::kCrash,
             "did what a vDSO call cannot (returned 0 without writing the "
             "timespec it was given)",
             0.2, false, false},
        Case{"raw_stop", sim::Property::kCrash,
             "did what a vDSO call cannot (kill(SIGSTOP))", 0.2, false, false},
        // The ABI's callee-saved registers and the caller's frame: rbp
        // changed crashed vdsolab, r15 changed made it run another
        // simulation and pass. The thunk puts them back and blames the
        // call; a store past the timespec is found by guard words.
        Case{"rbp_changed", sim::Property::kCrash,
             "did what a vDSO call cannot (returned with callee-saved "
             "register rbp changed)",
             0.2, false, false},
        Case{"r15_changed", sim::Property::kCrash,
             "did what a vDSO call cannot (returned with callee-saved "
             "register r15 changed)",
             0.2, false, false},
        Case{"frame_written", sim::Property::kCrash,
             "did what a vDSO call cannot (returned with its caller's stack "
             "frame written)",
             0.2, false, false},
        Case{"past_the_answer", sim::Property::kCrash,
             "did what a vDSO call cannot (returned after writing past the "
             "end of the timespec it was given)",
             0.2, false, false},
        Case{"direction_flag", sim::Property::kCrash,
             "did what a vDSO call cannot (returned with the direction flag "
             "set)",
             0.2, false, false, "returned with the direction flag set after",
             "\nreturned with the direction flag set\n"}),
    [](const ::testing::TestParamInfo<Case>& param) {
      return std::string(param.param.name);
    });

}  // namespace
}  // namespace vdsolab::variants
