// call_guard's duties beyond a single contained call:
//
// - A signal outside any guarded call is not vdsolab's: it goes to the
//   handler that was installed before vdsolab installed its own, with the
//   arguments that handler expects (a plain handler its signal number, an
//   SA_SIGINFO one the siginfo and context too; SIG_IGN ignores it). A
//   program embedding vdsolab, a test framework or a sanitizer keeps its
//   handlers. Each case runs in a fresh process (a death test, re-executed:
//   the guard installs its handlers once per process, so the earlier
//   handler must be there before its first call).
// - A thread that ends gives its watchdog slot back: threads that come and
//   go (a pool per run, per test) never exhaust the table, and a spin in
//   foreign code on the hundredth thread is stopped as on the first.
// - A call that returns with the CPU's control state changed (MXCSR, the
//   x87 control word, DF) is a fault, and vdsolab's state is put back,
//   after a jump out of a call too.

#include "variants/plugin/call_guard.h"

#include <asm/prctl.h>
#include <fenv.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "vdso/vvar_page.h"

namespace vdsolab::variants {
namespace {

// What the earlier handler saw (async-signal-safe: lock-free atomics).
std::atomic<int> g_plain_sig{0};
std::atomic<int> g_info_sig{0};
std::atomic<int> g_info_signo{0};
std::atomic<int> g_info_code{0};
std::atomic<int> g_info_pid{0};
std::atomic<bool> g_info_uctx{false};

void PlainHandler(int sig) { g_plain_sig.store(sig); }

void InfoHandler(int sig, siginfo_t* info, void* uctx) {
  g_info_sig.store(sig);
  g_info_signo.store(info != nullptr ? info->si_signo : -1);
  g_info_code.store(info != nullptr ? info->si_code : -1);
  g_info_pid.store(info != nullptr ? static_cast<int>(info->si_pid) : -1);
  // The kernel's context, not any pointer: its rt_sigframe holds the
  // ucontext and, right after it, the siginfo (x86-64), so the two are a
  // few hundred bytes apart. A handler called with a stale register for
  // its third argument sees something else there.
  const auto* u = static_cast<const char*>(uctx);
  const auto* i = reinterpret_cast<const char*>(info);
  g_info_uctx.store(u != nullptr && i != nullptr && i > u && i - u < 4096);
}

// The guard's handlers, installed by its first call (which returns).
void InstallGuard() {
  const std::optional<vdso::CallFault> fault =
      RunContained(call_guard_internal::ThisThread(), [] {});
  if (fault.has_value()) {
    std::fprintf(stderr, "an empty guarded call faulted\n");
    std::_Exit(3);
  }
}

// Exits 0 when a plain handler installed before the guard received a
// raised signal (outside any guarded call) with its number, else 1.
void PlainHandlerChild(int sig) {
  struct sigaction sa = {};
  sa.sa_handler = PlainHandler;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
  InstallGuard();
  raise(sig);
  const int seen = g_plain_sig.load();
  std::fprintf(stderr, "plain handler saw signal %d\n", seen);
  std::_Exit(seen == sig ? 0 : 1);
}

// The same for an SA_SIGINFO handler: the signal, its siginfo (raise():
// si_signo, SI_TKILL, this pid) and a context.
void InfoHandlerChild(int sig) {
  struct sigaction sa = {};
  sa.sa_sigaction = InfoHandler;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
  InstallGuard();
  raise(sig);
  std::fprintf(stderr,
               "siginfo handler saw signal %d, si_signo %d, si_code "
               "%d, si_pid %d, context %d\n",
               g_info_sig.load(), g_info_signo.load(), g_info_code.load(),
               g_info_pid.load(), g_info_uctx.load() ? 1 : 0);
  const bool right = g_info_sig.load() == sig && g_info_signo.load() == sig &&
                     g_info_code.load() == SI_TKILL &&
                     g_info_pid.load() == static_cast<int>(getpid()) &&
                     g_info_uctx.load();
  std::_Exit(right ? 0 : 1);
}

// SIG_IGN before the guard: the raised signal stays ignored and the
// process goes on (exit 0); anything else kills it or exits 1.
void IgnoredChild(int sig) {
  signal(sig, SIG_IGN);
  InstallGuard();
  raise(sig);
  std::fprintf(stderr, "ignored signal %d: still running\n", sig);
  std::_Exit(0);
}

class ChainTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    // Re-executed children: the guard's handlers are not yet installed
    // there, whatever earlier tests of this process installed.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

TEST_P(ChainTest, APlainHandlerInstalledFirstGetsTheSignal) {
  EXPECT_EXIT(PlainHandlerChild(GetParam()), ::testing::ExitedWithCode(0),
              "plain handler saw signal");
}

TEST_P(ChainTest, AnSaSiginfoHandlerInstalledFirstGetsItsArguments) {
  EXPECT_EXIT(InfoHandlerChild(GetParam()), ::testing::ExitedWithCode(0),
              "siginfo handler saw signal");
}

TEST_P(ChainTest, AnIgnoredSignalStaysIgnored) {
  EXPECT_EXIT(IgnoredChild(GetParam()), ::testing::ExitedWithCode(0),
              "still running");
}

// Every signal the guard handles (call_guard.h: the crashes, SIGXCPU, the
// watchdog's, and some of the signals that are not faults but end the
// process by default).
INSTANTIATE_TEST_SUITE_P(GuardedSignals, ChainTest,
                         ::testing::Values(SIGSEGV, SIGBUS, SIGFPE, SIGILL,
                                           SIGABRT, SIGTRAP, SIGSYS, SIGXCPU,
                                           SIGUSR1, SIGPIPE, SIGALRM,
                                           SIGRTMIN + 3),
                         [](const ::testing::TestParamInfo<int>& param) {
                           const char* name = sigabbrev_np(param.param);
                           return name != nullptr
                                      ? std::string(name)
                                      : "RT" + std::to_string(param.param);
                         });

// A signal that ends the process by default (SIGUSR1) raised outside any
// guarded call still ends it: the guard's handler gives it back to the
// default action and raises it again.
void EndingSignalOutsideACallChild() {
  InstallGuard();
  raise(SIGUSR1);
  std::fprintf(stderr, "SIGUSR1 outside a call: still running\n");
  std::_Exit(0);
}

// Sent by another process while a call runs (a user's kill -USR1), it is
// not the call's: it ends the process as it would have.
void EndingSignalFromAnotherProcessChild() {
  InstallGuard();
  const pid_t self = getpid();
  const pid_t sender = fork();
  if (sender == 0) {
    timespec ts = {0, 100000000};
    nanosleep(&ts, nullptr);
    kill(self, SIGUSR1);
    std::_Exit(0);
  }
  SetCallTimeLimit(10.0);
  const std::optional<vdso::CallFault> fault =
      RunContained(call_guard_internal::ThisThread(), [] {
        timespec ts = {2, 0};
        while (nanosleep(&ts, &ts) != 0) {
        }
      });
  std::fprintf(stderr, "a call outlived another process's SIGUSR1: %s\n",
               fault ? vdso::DescribeFault(*fault).c_str() : "returned");
  std::_Exit(0);
}

// With a handler installed before the guard's (a profiler's SIGPROF), the
// signal is that handler's even inside a call: not the call's fault.
void EndingSignalWithAHandlerChild() {
  struct sigaction sa = {};
  sa.sa_handler = PlainHandler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, nullptr);
  InstallGuard();
  const std::optional<vdso::CallFault> fault =
      RunContained(call_guard_internal::ThisThread(), [] { raise(SIGUSR1); });
  std::fprintf(stderr, "handler saw %d; the call %s\n", g_plain_sig.load(),
               fault ? vdso::DescribeFault(*fault).c_str() : "returned");
  std::_Exit(!fault && g_plain_sig.load() == SIGUSR1 ? 0 : 1);
}

// A thread the code under test started calls exit(0) outside any call:
// vdsolab ends with status 1 and says why, not with the 0 it chose.
void ForeignThreadExitChild() {
  InstallGuard();
  std::thread([] { std::exit(0); }).join();
  std::fprintf(stderr, "the thread's exit(0) returned\n");
  std::_Exit(3);
}

TEST(CallGuardExitDeath, AnExitFromAForeignThreadIsStatusOne) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(ForeignThreadExitChild(), ::testing::ExitedWithCode(1),
              "a thread the code under test started called exit\\(0\\)");
}

class EndingSignalTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(EndingSignalTest, OutsideACallItStillEndsTheProcess) {
  EXPECT_EXIT(EndingSignalOutsideACallChild(),
              ::testing::KilledBySignal(SIGUSR1), "");
}

TEST_F(EndingSignalTest, FromAnotherProcessItEndsTheProcessEvenInACall) {
  EXPECT_EXIT(EndingSignalFromAnotherProcessChild(),
              ::testing::KilledBySignal(SIGUSR1), "");
}

TEST_F(EndingSignalTest, AHandlerInstalledFirstGetsItEvenInACall) {
  EXPECT_EXIT(EndingSignalWithAHandlerChild(), ::testing::ExitedWithCode(0),
              "handler saw");
}

// Raised by the call itself (or sent by the kernel for it: SIGPIPE), it is
// the call's fault, with no address: the process goes on.
TEST(CallGuardSignals, AnEndingSignalRaisedInACallIsTheCallsFault) {
  for (int sig : {SIGUSR1, SIGPIPE, SIGRTMIN + 3}) {
    const std::optional<vdso::CallFault> fault =
        RunContained(call_guard_internal::ThisThread(), [sig] { raise(sig); });
    ASSERT_TRUE(fault.has_value()) << sig;
    EXPECT_EQ(fault->kind, vdso::CallFault::Kind::kCrash);
    EXPECT_EQ(fault->signal, sig);
    EXPECT_FALSE(fault->has_address) << vdso::DescribeFault(*fault);
  }
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  const int wfd = fds[1];
  const std::optional<vdso::CallFault> pipe_fault =
      RunContained(call_guard_internal::ThisThread(),
                   [wfd] { [[maybe_unused]] ssize_t n = write(wfd, "x", 1); });
  close(wfd);
  ASSERT_TRUE(pipe_fault.has_value());
  EXPECT_EQ(pipe_fault->signal, SIGPIPE);
}

// The calling thread's CPU time, ns.
int64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// More threads than call_guard.cc's slot table holds (kMaxThreads, 64),
// started and ended in waves; each makes a guarded call that spins (until
// the watchdog stops it, or a deadline long past the bound) and one that
// crashes.
TEST(CallGuardThreads, EveryThreadOfManyStillHasItsSpinStopped) {
  constexpr int kSlots = 64;
  constexpr int kThreads = 2 * kSlots + 8;
  constexpr int kWave = 8;
  SetCallTimeLimit(0.05);
  std::atomic<int> stopped{0}, crashed{0}, first_bad{-1};
  // A wave with a thread not contained ends the test: the next would wait
  // out its deadlines too.
  for (int start = 0; start < kThreads && first_bad.load() < 0;
       start += kWave) {
    std::vector<std::thread> wave;
    for (int t = start; t < start + kWave && t < kThreads; ++t) {
      wave.emplace_back([t, &stopped, &crashed, &first_bad] {
        // Bounded so that a missed spin fails the test instead of hanging
        // it: 5 s, beyond the watchdog's wall-time backstop (30 times the
        // bound) for a thread that got no CPU on a loaded machine.
        timespec begin;
        clock_gettime(CLOCK_MONOTONIC, &begin);
        const std::optional<vdso::CallFault> spin =
            RunContained(call_guard_internal::ThisThread(), [&begin] {
              timespec now;
              do {
                clock_gettime(CLOCK_MONOTONIC, &now);
              } while (now.tv_sec - begin.tv_sec < 5);
            });
        const bool spin_stopped =
            spin.has_value() && spin->kind == vdso::CallFault::Kind::kSpin;
        const std::optional<vdso::CallFault> crash = RunContained(
            call_guard_internal::ThisThread(), [] { raise(SIGSEGV); });
        const bool crash_caught =
            crash.has_value() && crash->kind == vdso::CallFault::Kind::kCrash &&
            crash->signal == SIGSEGV;
        stopped += spin_stopped ? 1 : 0;
        crashed += crash_caught ? 1 : 0;
        if (!spin_stopped || !crash_caught) {
          int none = -1;
          first_bad.compare_exchange_strong(none, t);
        }
      });
    }
    for (std::thread& th : wave) th.join();
  }
  SetCallTimeLimit(1.0);
  std::printf(
      "%d threads in waves of %d: %d spins stopped, %d crashes "
      "caught\n",
      kThreads, kWave, stopped.load(), crashed.load());
  EXPECT_EQ(first_bad.load(), -1)
      << "thread " << first_bad.load() << " was the first not contained";
  EXPECT_EQ(stopped.load(), kThreads);
  EXPECT_EQ(crashed.load(), kThreads);
}

// The bound is per call: a run of short guarded calls back to back, each
// far below it but together many times it (the thread busy in foreign
// code nearly all the time, as a simulation over a plugin is), has no
// call stopped. The watchdog must see the calls counter move and start
// over, not add the run up as one spin.
TEST(CallGuardThreads, ARunOfShortCallsLongerThanTheBoundIsNeverStopped) {
  SetCallTimeLimit(0.05);
  timespec begin, now;
  clock_gettime(CLOCK_MONOTONIC, &begin);
  int calls = 0, stopped = 0;
  do {
    // About 1 ms of the thread's CPU per call: a twentieth of the bound.
    const std::optional<vdso::CallFault> fault =
        RunContained(call_guard_internal::ThisThread(), [] {
          const int64_t start = ThreadCpuNs();
          while (ThreadCpuNs() - start < 1000000) {
          }
        });
    ++calls;
    stopped += fault.has_value() ? 1 : 0;
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - begin.tv_sec) * 1000000000 +
               (now.tv_nsec - begin.tv_nsec) <
           600000000);
  SetCallTimeLimit(1.0);
  std::printf("%d calls of 1 ms in 0.6 s under a 50 ms bound: %d stopped\n",
              calls, stopped);
  EXPECT_EQ(stopped, 0);
}

// The bounds on sleeping and on wall time are per call too: guarded calls
// that each block (sleep, no CPU) across a watchdog period, each below a
// quarter of the bound (a block when it returns) but together past the
// bound and past kWallBackstop times it, have none stopped. The watchdog
// must start its counts of a call's asleep and stalled wall time over at
// every new call, not carry them from the last.
TEST(CallGuardThreads, ARunOfBlockedCallsIsNotAddedUpIntoOneStall) {
  // A quarter: 40 ms (two watchdog periods at least); a 3 s wall-time
  // backstop (30 times).
  SetCallTimeLimit(0.1);
  int stopped = 0;
  const int kCalls = 240;  // 240 x 15 ms: 3.6 s blocked in all.
  for (int i = 0; i < kCalls; ++i) {
    const std::optional<vdso::CallFault> fault =
        RunContained(call_guard_internal::ThisThread(), [] {
          // Across at most one watchdog period's sample.
          timespec ts = {0, 15000000};
          while (nanosleep(&ts, &ts) != 0) {
          }
        });
    stopped += fault.has_value() ? 1 : 0;
  }
  SetCallTimeLimit(1.0);
  std::printf("%d blocked calls of 15 ms under a 0.1 s bound: %d stopped\n",
              kCalls, stopped);
  EXPECT_EQ(stopped, 0);
}

// A call asleep in the kernel is stopped for sleeping, after the bound of
// its asleep time, not after kWallBackstop times the bound of wall time:
// the fault says it blocked (only the asleep path sets that), and a spin
// says it did not.
TEST(CallGuardThreads, ACallAsleepIsStoppedAsBlockedAndASpinIsNot) {
  SetCallTimeLimit(0.1);
  const std::optional<vdso::CallFault> asleep =
      RunContained(call_guard_internal::ThisThread(), [] {
        for (;;) {
          timespec hour = {3600, 0};
          nanosleep(&hour, nullptr);
        }
      });
  const std::optional<vdso::CallFault> spin =
      RunContained(call_guard_internal::ThisThread(), [] {
        for (;;) {
          asm volatile("" ::: "memory");
        }
      });
  SetCallTimeLimit(1.0);
  ASSERT_TRUE(asleep.has_value());
  EXPECT_EQ(asleep->kind, vdso::CallFault::Kind::kSpin);
  EXPECT_TRUE(asleep->blocked) << vdso::DescribeFault(*asleep);
  EXPECT_GE(asleep->seconds, 0.1);
  EXPECT_EQ(vdso::DescribeFault(*asleep).rfind("blocked for ", 0), 0u)
      << vdso::DescribeFault(*asleep);
  ASSERT_TRUE(spin.has_value());
  EXPECT_EQ(spin->kind, vdso::CallFault::Kind::kSpin);
  EXPECT_FALSE(spin->blocked) << vdso::DescribeFault(*spin);
}

// Asleep inside vdsolab's own callback (HostCallScope: a write to a full
// pipe) is not the foreign code's: a callback that sleeps for three times
// the bound, far below the wall-time backstop, is not stopped.
TEST(CallGuardThreads, ASleepInsideACallbackIsNotTheCallsToBlame) {
  SetCallTimeLimit(0.05);  // A 1.5 s wall-time backstop.
  call_guard_internal::GuardState& g = call_guard_internal::ThisThread();
  const std::optional<vdso::CallFault> fault = RunContained(g, [&g] {
    HostCallScope host(g);
    timespec ts = {0, 150000000};
    while (nanosleep(&ts, &ts) != 0) {
    }
  });
  SetCallTimeLimit(1.0);
  EXPECT_FALSE(fault.has_value())
      << "a callback asleep for 150 ms under a 50 ms bound was stopped: "
      << vdso::DescribeFault(*fault);
}

// The bound counts the CPU a call itself has used, not the thread's total:
// in a thread that has already run for several bounds' worth of CPU
// outside any guarded call, a call that runs for several watchdog periods
// (20 ms each) but a fifth of the bound is not stopped.
TEST(CallGuardThreads, ACallIsBoundByItsOwnCpuNotTheThreads) {
  SetCallTimeLimit(0.25);
  // Outside any guarded call: 0.6 s of this thread's CPU.
  const int64_t before = ThreadCpuNs();
  while (ThreadCpuNs() - before < 600000000) {
  }
  const std::optional<vdso::CallFault> fault =
      RunContained(call_guard_internal::ThisThread(), [] {
        const int64_t start = ThreadCpuNs();
        while (ThreadCpuNs() - start < 50000000) {  // 50 ms: 2.5 periods.
        }
      });
  SetCallTimeLimit(1.0);
  EXPECT_FALSE(fault.has_value())
      << "a 50 ms call under a 250 ms bound was stopped: "
      << vdso::DescribeFault(*fault);
}

// A thread that takes over an ended thread's slot starts with a clean
// watchdog record: the ended thread's last call count and CPU reading are
// not the new thread's. Thread A runs 0.6 s of CPU, then one guarded call
// across several watchdog periods (the watchdog records its count, 1, and
// its CPU then) and ends; thread B, in the slot A gave back, makes its
// first call, count 1 again, of 50 ms under a 250 ms bound: not stopped.
TEST(CallGuardThreads, AReusedSlotStartsWithACleanWatchdogRecord) {
  SetCallTimeLimit(0.25);
  auto burn = [](int64_t ns) {
    const int64_t start = ThreadCpuNs();
    while (ThreadCpuNs() - start < ns) {
    }
  };
  std::optional<vdso::CallFault> a_fault, b_fault;
  std::thread a([&] {
    burn(600000000);
    a_fault = RunContained(call_guard_internal::ThisThread(),
                           [&] { burn(50000000); });
  });
  a.join();
  std::thread b([&] {
    b_fault = RunContained(call_guard_internal::ThisThread(),
                           [&] { burn(50000000); });
  });
  b.join();
  SetCallTimeLimit(1.0);
  EXPECT_FALSE(a_fault.has_value()) << vdso::DescribeFault(*a_fault);
  EXPECT_FALSE(b_fault.has_value())
      << "the new thread's first call was stopped: "
      << vdso::DescribeFault(*b_fault);
}

}  // namespace
}  // namespace vdsolab::variants

namespace vdsolab::variants {
namespace {

// Busy for `ms` of this thread's CPU time.
void BurnCpuMs(int ms) {
  timespec begin, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &begin);
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - begin.tv_sec) * 1000 +
               (now.tv_nsec - begin.tv_nsec) / 1000000 <
           ms);
}

// Loading a plugin has a bound of its own: a dlopen() that runs longer
// than a clock_gettime() may (the allocator consolidating the host's
// frees) is not stopped, where the same work as a call is; and the next
// call has the per-call bound again.
TEST(CallGuardLimits, ALoadRunsUnderItsOwnFloorAndCallsUnderTheirBound) {
  SetCallTimeLimit(0.02);
  const std::optional<vdso::CallFault> load =
      RunContainedAtLeast(2.0, [] { BurnCpuMs(150); });
  EXPECT_FALSE(load.has_value()) << vdso::DescribeFault(*load);
  const std::optional<vdso::CallFault> call =
      RunContained(call_guard_internal::ThisThread(), [] { BurnCpuMs(3000); });
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->kind, vdso::CallFault::Kind::kSpin);
  // Stopped near the per-call bound, not the load's floor.
  EXPECT_LT(call->seconds, 1.0);
  // A load that spins past its floor is still stopped.
  const std::optional<vdso::CallFault> spin =
      RunContainedAtLeast(0.1, [] { BurnCpuMs(5000); });
  ASSERT_TRUE(spin.has_value());
  EXPECT_EQ(spin->kind, vdso::CallFault::Kind::kSpin);
  SetCallTimeLimit(1.0);
}

// A bound below 1 ms is 1 ms, not 0 (which means no bound at all): a
// spin under a 1 us bound is stopped, and reported as a spin.
TEST(CallGuardLimits, ABoundBelowAMillisecondStillStops) {
  SetCallTimeLimit(1e-6);
  EXPECT_GT(CallTimeLimit(), 0.0);
  const std::optional<vdso::CallFault> spin =
      RunContained(call_guard_internal::ThisThread(), [] { BurnCpuMs(10000); });
  SetCallTimeLimit(1.0);
  ASSERT_TRUE(spin.has_value());
  EXPECT_EQ(spin->kind, vdso::CallFault::Kind::kSpin);
  EXPECT_LT(spin->seconds, 5.0);
}

// fork() inside a guarded call: the child is vdsolab in mid-call, and
// going on it would run the rest of the run and fork again at the same
// call. It ends inside fork() (status 127), before the code under test
// sees it return; the parent's call is a crash finding. A fork outside a
// guarded call, and the next call, are untouched.
TEST(CallGuardFork, AChildForkedInACallEndsAtOnceAndTheCallIsAFault) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = -1;
  const std::optional<vdso::CallFault> fault =
      RunContained(call_guard_internal::ThisThread(), [&] {
        child = fork();
        if (child == 0) {
          // Reached only if the child was not ended: say so and end it
          // without any of the test's code (exit() is interposed).
          [[maybe_unused]] ssize_t w = write(fds[1], "x", 1);
          syscall(SYS_exit_group, 0);
        }
      });
  close(fds[1]);
  ASSERT_GT(child, 0);
  char byte = 0;
  EXPECT_EQ(read(fds[0], &byte, 1), 0) << "the child ran on after fork()";
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 127) << status;
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->kind, vdso::CallFault::Kind::kCrash);
  EXPECT_EQ(vdso::DescribeFault(*fault), "called fork()");

  EXPECT_FALSE(
      RunContained(call_guard_internal::ThisThread(), [] {}).has_value());
  const pid_t outside = fork();
  if (outside == 0) syscall(SYS_exit_group, 3);
  ASSERT_GT(outside, 0);
  ASSERT_EQ(waitpid(outside, &status, 0), outside);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status;
  EXPECT_FALSE(
      RunContained(call_guard_internal::ThisThread(), [] {}).has_value());
}

// pthread_exit() and quick_exit() inside a guarded call end the call, not
// the thread (the run would wait for it for good) or the process (with a
// status of the code's choosing: quick_exit() reaches libc's _exit() past
// the interposed one).
TEST(CallGuardExit, ThreadExitAndQuickExitEndOnlyTheCall) {
  std::optional<vdso::CallFault> fault = RunContained(
      call_guard_internal::ThisThread(), [] { pthread_exit(nullptr); });
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->kind, vdso::CallFault::Kind::kCrash);
  EXPECT_EQ(vdso::DescribeFault(*fault), "called pthread_exit()");
  fault = RunContained(call_guard_internal::ThisThread(),
                       [] { std::quick_exit(5); });
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->exit_status, 5);
  EXPECT_FALSE(
      RunContained(call_guard_internal::ThisThread(), [] {}).has_value());
}

// Code under test that sets SIGXCPU, the watchdog's signal, to SIG_IGN
// and spins: the watchdog installs its handler again and stops the call.
// By the system call: signal() itself is refused (signal_guard.cc).
// Without syscall user dispatch (a kernel before 5.11), which refuses the
// system call first (RawSystemCallsAreJudgedAsTheWrappersAre).
TEST(CallGuardWatchdog, ASpinThatIgnoresTheWatchdogsSignalIsStillStopped) {
  call_guard_internal::ThisThread();
  call_guard_internal::DisableSyscallDispatch();
  SetCallTimeLimit(0.05);
  const std::optional<vdso::CallFault> fault =
      RunContained(call_guard_internal::ThisThread(), [] {
        const struct {
          void (*handler)(int);
          unsigned long flags;
          void (*restorer)();
          uint64_t mask;
        } ignore = {SIG_IGN, 0, nullptr, 0};
        syscall(SYS_rt_sigaction, SIGXCPU, &ignore, nullptr,
                sizeof ignore.mask);
        BurnCpuMs(5000);
      });
  SetCallTimeLimit(1.0);
  call_guard_internal::EnableSyscallDispatch();
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->kind, vdso::CallFault::Kind::kSpin);
}

// Code under test that blocks SIGXCPU and spins cannot be stopped: vdsolab
// ends (a check failed, exit 1) with one line saying why, not a hang.
// Without syscall user dispatch, as above.
void BlockedSpinChild() {
  call_guard_internal::ThisThread();
  call_guard_internal::DisableSyscallDispatch();
  SetCallTimeLimit(0.05);
  RunContained(call_guard_internal::ThisThread(), [] {
    // The system call: pthread_sigmask() itself is refused.
    const uint64_t xcpu = uint64_t{1} << (SIGXCPU - 1);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &xcpu, nullptr, sizeof xcpu);
    BurnCpuMs(20000);
  });
  std::fprintf(stderr, "the spin returned\n");
  std::_Exit(0);
}

TEST(CallGuardWatchdog, ASpinThatBlocksTheWatchdogsSignalEndsVdsolab) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(BlockedSpinChild(), ::testing::ExitedWithCode(1),
              "does not stop: it blocks SIGXCPU");
}

// A change a call makes, and how the refusal names it.
struct Change {
  const char* called;
  void (*fn)();
};

// The change is refused and is the call's finding, also when the call
// faults after it, as code relying on the change would.
void ExpectRefusedAndBlamed(const Change& c) {
  call_guard_internal::GuardState& g = call_guard_internal::ThisThread();
  std::optional<vdso::CallFault> fault = RunContained(g, c.fn);
  ASSERT_TRUE(fault.has_value()) << c.called;
  EXPECT_EQ(fault->kind, vdso::CallFault::Kind::kCrash);
  EXPECT_STREQ(fault->called, c.called);
  ASSERT_NE(fault->why, nullptr);
  EXPECT_NE(std::string(fault->why).find("refused"), std::string::npos);
  fault = RunContained(g, [&] {
    c.fn();
    raise(SIGSEGV);
  });
  ASSERT_TRUE(fault.has_value()) << c.called;
  EXPECT_STREQ(fault->called, c.called);
}

// Code under test that changes what contains it (a fault signal's handler,
// the signal mask, the alternate stack) or a limit vdsolab's own work
// needs: the change is refused and is the call's finding, whatever the
// call did after it; a query is answered, and vdsolab's own signal
// handlers are not refused even inside a call.
TEST(CallGuardRefusal, ChangesToSignalsAndLimitsAreRefusedAndBlamed) {
  const Change changes[] = {
      {"signal(SIGSEGV)", [] { signal(SIGSEGV, SIG_DFL); }},
      {"sigaction(SIGBUS)",
       [] {
         struct sigaction dfl = {};
         dfl.sa_handler = SIG_DFL;
         sigaction(SIGBUS, &dfl, nullptr);
       }},
      {"sigaltstack()",
       [] {
         stack_t off = {};
         off.ss_flags = SS_DISABLE;
         sigaltstack(&off, nullptr);
       }},
      {"sigprocmask(SIG_SETMASK)",
       [] {
         sigset_t all;
         sigfillset(&all);
         sigprocmask(SIG_SETMASK, &all, nullptr);
       }},
      {"pthread_sigmask(SIG_BLOCK)",
       [] {
         sigset_t segv;
         sigemptyset(&segv);
         sigaddset(&segv, SIGSEGV);
         pthread_sigmask(SIG_BLOCK, &segv, nullptr);
       }},
      {"setrlimit(RLIMIT_NOFILE)",
       [] {
         const struct rlimit none = {0, 0};
         setrlimit(RLIMIT_NOFILE, &none);
       }},
      {"prlimit(RLIMIT_FSIZE)",
       [] {
         const struct rlimit none = {0, 0};
         prlimit(0, RLIMIT_FSIZE, &none, nullptr);
       }},
  };
  struct sigaction segv_before = {};
  sigaction(SIGSEGV, nullptr, &segv_before);
  struct rlimit files_before = {};
  getrlimit(RLIMIT_NOFILE, &files_before);
  for (const Change& c : changes) ExpectRefusedAndBlamed(c);
  // Nothing was changed, and the next call is clean.
  struct sigaction segv_after = {};
  sigaction(SIGSEGV, nullptr, &segv_after);
  EXPECT_EQ(segv_after.sa_sigaction, segv_before.sa_sigaction);
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  EXPECT_EQ(sigismember(&mask, SIGSEGV), 0);
  EXPECT_EQ(sigismember(&mask, SIGXCPU), 0);
  stack_t altstack = {};
  sigaltstack(nullptr, &altstack);
  EXPECT_EQ(altstack.ss_flags & SS_DISABLE, 0);
  struct rlimit files_after = {};
  getrlimit(RLIMIT_NOFILE, &files_after);
  EXPECT_EQ(files_after.rlim_cur, files_before.rlim_cur);
  EXPECT_FALSE(
      RunContained(call_guard_internal::ThisThread(), [] {}).has_value());
  // Queries inside a call are answered, and are no finding.
  EXPECT_FALSE(RunContained(call_guard_internal::ThisThread(), [] {
                 struct sigaction now = {};
                 sigaction(SIGSEGV, nullptr, &now);
                 sigset_t m;
                 sigprocmask(SIG_BLOCK, nullptr, &m);
                 stack_t st;
                 sigaltstack(nullptr, &st);
                 prlimit(0, RLIMIT_FSIZE, nullptr, nullptr);
               }).has_value());
  // vdsolab's own handler, interrupting a call: not refused.
  EXPECT_FALSE(RunContained(call_guard_internal::ThisThread(), [] {
                 const OwnSignalHandler own;
                 signal(SIGWINCH, SIG_IGN);
                 signal(SIGWINCH, SIG_DFL);
               }).has_value());
}

// An inline `syscall` instruction: what foreign code that bypasses the C
// library makes, and no wrapper of vdsolab's sees.
long InlineSyscall(long nr, long a1 = 0, long a2 = 0, long a3 = 0,
                   long a4 = 0) {
  long ret;
  register long r10 __asm__("r10") = a4;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10)
                   : "rcx", "r11", "memory");
  return ret;
}

// A vvar page's readers' area, for the refused mprotect() of it.
const uint8_t* g_test_page = nullptr;

// The kernel's struct sigaction, for rt_sigaction(2) itself.
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  uint64_t mask;
};

uint64_t Bit(int sig) { return uint64_t{1} << (sig - 1); }

// The same changes made by the system call itself, without the C
// library's wrappers (an inline `syscall`, libc's syscall()): refused and
// blamed through syscall user dispatch (syscall_guard.cc). What merely
// asks, or changes nothing that contains the call, is made, and its
// answer reaches the code.
TEST(CallGuardRefusal, RawSystemCallsAreJudgedAsTheWrappersAre) {
  call_guard_internal::GuardState& g = call_guard_internal::ThisThread();
  auto page = vdso::VvarPage::Create();
  ASSERT_TRUE(page.ok()) << page.status();
  g_test_page = (*page)->data();
  ASSERT_TRUE(call_guard_internal::EnableSyscallDispatch())
      << "this kernel has no syscall user dispatch (Linux 5.11+)";
  const Change changes[] = {
      {"rt_sigaction(SIGSEGV)",
       [] {
         const KernelSigaction dfl = {SIG_DFL, 0, nullptr, 0};
         InlineSyscall(SYS_rt_sigaction, SIGSEGV, reinterpret_cast<long>(&dfl),
                       0, 8);
       }},
      {"rt_sigaction(SIGBUS)",
       [] {
         const KernelSigaction dfl = {SIG_DFL, 0, nullptr, 0};
         syscall(SYS_rt_sigaction, SIGBUS, &dfl, nullptr, 8);
       }},
      {"rt_sigprocmask(SIG_BLOCK)",
       [] {
         const uint64_t segv = Bit(SIGSEGV);
         InlineSyscall(SYS_rt_sigprocmask, SIG_BLOCK,
                       reinterpret_cast<long>(&segv), 0, 8);
       }},
      {"sigaltstack()",
       [] {
         stack_t off = {};
         off.ss_flags = SS_DISABLE;
         InlineSyscall(SYS_sigaltstack, reinterpret_cast<long>(&off));
       }},
      {"prlimit64(RLIMIT_FSIZE)",
       [] {
         const struct rlimit none = {0, 0};
         InlineSyscall(SYS_prlimit64, 0, RLIMIT_FSIZE,
                       reinterpret_cast<long>(&none));
       }},
      {"setrlimit(RLIMIT_NOFILE)",
       [] {
         const struct rlimit none = {0, 0};
         InlineSyscall(SYS_setrlimit, RLIMIT_NOFILE,
                       reinterpret_cast<long>(&none));
       }},
      {"umask()", [] { InlineSyscall(SYS_umask, 0777); }},
      // The host's clocks, not the simulation's (the ABI's fallback() is).
      {"clock_gettime()",
       [] {
         struct timespec ts;
         InlineSyscall(SYS_clock_gettime, CLOCK_MONOTONIC,
                       reinterpret_cast<long>(&ts));
       }},
      {"gettimeofday()",
       [] {
         struct timeval tv;
         syscall(SYS_gettimeofday, &tv, nullptr);
       }},
      {"time()", [] { InlineSyscall(SYS_time, 0); }},
      {"clock_getres()",
       [] {
         struct timespec ts;
         InlineSyscall(SYS_clock_getres, CLOCK_MONOTONIC,
                       reinterpret_cast<long>(&ts));
       }},
      {"kill(SIGTERM)", [] { InlineSyscall(SYS_kill, getpid(), SIGTERM); }},
      {"tgkill(SIGINT)",
       [] { InlineSyscall(SYS_tgkill, getpid(), gettid(), SIGINT); }},
      {"tkill(SIGHUP)", [] { InlineSyscall(SYS_tkill, gettid(), SIGHUP); }},
      {"prctl(PR_SET_SECCOMP)",
       [] { InlineSyscall(SYS_prctl, PR_SET_SECCOMP, 1); }},
      {"prctl(PR_SET_SYSCALL_USER_DISPATCH)",
       [] { InlineSyscall(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, 0); }},
      {"seccomp()", [] { InlineSyscall(SYS_seccomp, 0, 0, 0); }},
      {"arch_prctl(ARCH_SET_FS)",
       [] { InlineSyscall(SYS_arch_prctl, ARCH_SET_FS, 0); }},
      // A path that does not exist: were it made, it would fail and return.
      {"execve()",
       [] {
         const char* argv[] = {"none", nullptr};
         InlineSyscall(SYS_execve,
                       reinterpret_cast<long>("/nonexistent/vdsolab"),
                       reinterpret_cast<long>(argv), 0);
       }},
      {"clone(CLONE_VM|CLONE_VFORK)", [] { InlineSyscall(SYS_vfork); }},
      // Each below is harmless if made (or ends the test, as it should
      // not): the point is that it is refused and named.
      {"ptrace()", [] { InlineSyscall(SYS_ptrace, PTRACE_TRACEME); }},
      {"rt_sigqueueinfo(SIGTERM)",
       [] {
         siginfo_t info = {};
         info.si_code = SI_QUEUE;
         InlineSyscall(SYS_rt_sigqueueinfo, getpid(), SIGTERM,
                       reinterpret_cast<long>(&info));
       }},
      {"pidfd_send_signal(SIGTERM)",
       [] {
         const long fd = InlineSyscall(SYS_pidfd_open, getpid(), 0);
         InlineSyscall(SYS_pidfd_send_signal, fd, SIGTERM, 0, 0);
         if (fd >= 0) close(static_cast<int>(fd));
       }},
      {"setresuid()", [] { InlineSyscall(SYS_setresuid, -1, -1, -1); }},
      {"prctl(PR_SET_TSC)",
       [] { InlineSyscall(SYS_prctl, PR_SET_TSC, PR_TSC_ENABLE); }},
      {"personality()", [] { InlineSyscall(SYS_personality, 0); }},
      {"rt_sigsuspend()",
       [] {
         const uint64_t all = ~uint64_t{0};
         InlineSyscall(SYS_rt_sigsuspend, reinterpret_cast<long>(&all), 8);
       }},
      {"mprotect()",
       [] {
         InlineSyscall(SYS_mprotect, reinterpret_cast<long>(g_test_page), 4096,
                       PROT_READ | PROT_WRITE);
       }},
  };
  struct sigaction segv_before = {};
  sigaction(SIGSEGV, nullptr, &segv_before);
  const mode_t umask_before = umask(022);
  umask(umask_before);
  for (const Change& c : changes) ExpectRefusedAndBlamed(c);
  struct sigaction segv_after = {};
  sigaction(SIGSEGV, nullptr, &segv_after);
  EXPECT_EQ(segv_after.sa_sigaction, segv_before.sa_sigaction);
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  EXPECT_EQ(sigismember(&mask, SIGSEGV), 0);
  stack_t altstack = {};
  sigaltstack(nullptr, &altstack);
  EXPECT_EQ(altstack.ss_flags & SS_DISABLE, 0);
  EXPECT_EQ(umask(022), umask_before);
  umask(umask_before);

  // An exit by the system call ends the call, with its status.
  std::optional<vdso::CallFault> fault =
      RunContained(g, [] { InlineSyscall(SYS_exit_group, 7); });
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->exit_status, 7);
  // A fork by the system call: its child ends at once, and the call is
  // blamed for it.
  long child = 0;
  fault = RunContained(g, [&] { child = InlineSyscall(SYS_fork); });
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(static_cast<pid_t>(child), &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) &&
              WEXITSTATUS(status) == call_guard_internal::kForkedChildStatus)
      << status;
  ASSERT_TRUE(fault.has_value());
  EXPECT_STREQ(fault->called, call_guard_internal::kForked);

  // Asking, unblocking, blocking what is already blocked: made, answered.
  long pid = 0;
  KernelSigaction segv_now = {};
  uint64_t mask_seen = ~uint64_t{0};
  uint64_t mask_inside = 0;
  EXPECT_FALSE(RunContained(g, [&] {
                 pid = InlineSyscall(SYS_getpid);
                 InlineSyscall(SYS_rt_sigaction, SIGSEGV, 0,
                               reinterpret_cast<long>(&segv_now), 8);
                 const uint64_t usr2 = Bit(SIGUSR2);
                 InlineSyscall(SYS_rt_sigprocmask, SIG_UNBLOCK,
                               reinterpret_cast<long>(&usr2),
                               reinterpret_cast<long>(&mask_seen), 8);
                 InlineSyscall(SYS_rt_sigprocmask, SIG_SETMASK,
                               reinterpret_cast<long>(&mask_seen), 0, 8);
                 InlineSyscall(SYS_rt_sigprocmask, SIG_BLOCK, 0,
                               reinterpret_cast<long>(&mask_inside), 8);
               }).has_value());
  EXPECT_EQ(pid, getpid());
  EXPECT_EQ(reinterpret_cast<void*>(segv_now.handler),
            reinterpret_cast<void*>(segv_before.sa_sigaction));
  EXPECT_EQ(mask_seen & Bit(SIGSEGV), 0u);
  EXPECT_EQ(mask_inside, mask_seen);
  // vdsolab's own handler, interrupting a call: its system calls are made.
  EXPECT_FALSE(RunContained(g, [] {
                 const OwnSignalHandler own;
                 const KernelSigaction ign = {SIG_IGN, 0, nullptr, 0};
                 const KernelSigaction dfl = {SIG_DFL, 0, nullptr, 0};
                 InlineSyscall(SYS_rt_sigaction, SIGWINCH,
                               reinterpret_cast<long>(&ign), 0, 8);
                 InlineSyscall(SYS_rt_sigaction, SIGWINCH,
                               reinterpret_cast<long>(&dfl), 0, 8);
               }).has_value());
  // Outside any call nothing is dispatched.
  const uint64_t usr2 = Bit(SIGUSR2);
  EXPECT_EQ(InlineSyscall(SYS_rt_sigprocmask, SIG_BLOCK,
                          reinterpret_cast<long>(&usr2), 0, 8),
            0);
  EXPECT_EQ(InlineSyscall(SYS_rt_sigprocmask, SIG_UNBLOCK,
                          reinterpret_cast<long>(&usr2), 0, 8),
            0);
}

}  // namespace
// A guarded call made inside another's callback (a kernel tree's
// timekeeper stepped from a reader's hook) leaves the outer call guarded:
// its later crash is its fault, not vdsolab's end.
TEST(CallGuard, ANestedCallLeavesTheOuterOneGuarded) {
  call_guard_internal::GuardState& g = call_guard_internal::ThisThread();
  std::optional<vdso::CallFault> inner_ok;
  std::optional<vdso::CallFault> inner_crash;
  const std::optional<vdso::CallFault> outer = RunContained(g, [&] {
    {
      HostCallScope host(g);
      inner_ok = RunContained(g, [] {});
      inner_crash = RunContained(g, [] { raise(SIGFPE); });
    }
    raise(SIGSEGV);
  });
  EXPECT_FALSE(inner_ok.has_value());
  ASSERT_TRUE(inner_crash.has_value());
  EXPECT_EQ(inner_crash->signal, SIGFPE);
  ASSERT_TRUE(outer.has_value());
  EXPECT_EQ(outer->kind, vdso::CallFault::Kind::kCrash);
  EXPECT_EQ(outer->signal, SIGSEGV);
  // And the thread's next call is an ordinary one.
  EXPECT_FALSE(RunContained(g, [] {}).has_value());
}

// A call that returns with the CPU's control state changed (the x86-64
// ABI's callee-saved MXCSR control bits and x87 control word, and DF clear)
// breaks its caller: an unmasked FE_INEXACT made vdsolab's next division a
// SIGFPE, a set DF ran absl's memcpy() backwards. It is the call's fault,
// and vdsolab's own state is back before its code goes on.

// Sets DF and returns with it set, as foreign code's `std` would. Out of
// line, so that nothing of the test's own code runs between the two.
[[gnu::noinline]] void ReturnWithDirectionFlagSet() {
  asm volatile("std" ::: "cc");
}

// Whether the state is vdsolab's (the process's start): all exceptions
// masked, round to nearest, DF clear; and its arithmetic still works.
void ExpectDefaultControl() {
  EXPECT_EQ(fegetexcept(), 0);
  EXPECT_EQ(fegetround(), FE_TONEAREST);
  EXPECT_EQ(__builtin_ia32_readeflags_u64() & (1u << 10), 0u);
  volatile double third = 1.0;
  third = third / 3.0;  // Inexact: a SIGFPE if FE_INEXACT were unmasked.
  EXPECT_GT(third, 0.33);
}

TEST(CallGuardControl, UnmaskedExceptionsAreAFaultAndMaskedAgain) {
  call_guard_internal::GuardState& g = call_guard_internal::ThisThread();
  const std::optional<vdso::CallFault> f =
      RunContained(g, [] { feenableexcept(FE_INEXACT); });
  ExpectDefaultControl();
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->kind, vdso::CallFault::Kind::kCrash);
  EXPECT_TRUE(f->returned);
  ASSERT_NE(f->called, nullptr);
  EXPECT_STREQ(f->called,
               "returned with the floating-point control changed: MXCSR "
               "0x1f80 -> 0xf80, x87 control word 0x37f -> 0x35f");
  EXPECT_EQ(vdso::DescribeFault(*f),
            "returned with the floating-point control changed: MXCSR "
            "0x1f80 -> 0xf80, x87 control word 0x37f -> 0x35f");
  // The thread's next call is an ordinary one.
  EXPECT_FALSE(RunContained(g, [] {}).has_value());
}

TEST(CallGuardControl, AnotherRoundingModeIsAFaultAndPutBack) {
  call_guard_internal::GuardState& g = call_guard_internal::ThisThread();
  const std::optional<vdso::CallFault> f =
      RunContained(g, [] { fesetround(FE_UPWARD); });
  ExpectDefaultControl();
  ASSERT_TRUE(f.has_value());
  ASSERT_NE(f->called, nullptr);
  EXPECT_STREQ(f->called,
               "returned with the floating-point control changed: MXCSR "
               "0x1f80 -> 0x5f80, x87 control word 0x37f -> 0xb7f");
  EXPECT_FALSE(RunContained(g, [] {}).has_value());
}

TEST(CallGuardControl, TheDirectionFlagLeftSetIsAFaultAndCleared) {
  call_guard_internal::GuardState& g = call_guard_internal::ThisThread();
  const std::optional<vdso::CallFault> f =
      RunContained(g, [] { ReturnWithDirectionFlagSet(); });
  ExpectDefaultControl();
  ASSERT_TRUE(f.has_value());
  ASSERT_NE(f->called, nullptr);
  EXPECT_STREQ(f->called, "returned with the direction flag set");
  // Both at once: one fault saying both.
  const std::optional<vdso::CallFault> both = RunContained(g, [] {
    fesetround(FE_TOWARDZERO);
    ReturnWithDirectionFlagSet();
  });
  ExpectDefaultControl();
  ASSERT_TRUE(both.has_value());
  ASSERT_NE(both->called, nullptr);
  EXPECT_STREQ(both->called,
               "returned with the direction flag set and the floating-point "
               "control changed: MXCSR 0x1f80 -> 0x7f80, x87 control word "
               "0x37f -> 0xf7f");
}

// The sticky exception flags (MXCSR bits 0-5, the x87 status word) are
// any arithmetic's to set: not a fault.
TEST(CallGuardControl, RaisedExceptionFlagsAreNotAFault) {
  call_guard_internal::GuardState& g = call_guard_internal::ThisThread();
  feclearexcept(FE_ALL_EXCEPT);
  EXPECT_FALSE(RunContained(g, [] {
                 feraiseexcept(FE_INEXACT | FE_DIVBYZERO);
               }).has_value());
  EXPECT_NE(fetestexcept(FE_INEXACT), 0);
  feclearexcept(FE_ALL_EXCEPT);
}

// A jump out of a call (a crash) leaves the state the signal handler
// started with (MXCSR 0x1f80), or the foreign code's: the state of the
// call's start is put back, here a rounding mode of the caller's own.
TEST(CallGuardControl, AJumpOutOfACallPutsTheCallersStateBack) {
  call_guard_internal::GuardState& g = call_guard_internal::ThisThread();
  ASSERT_EQ(fesetround(FE_DOWNWARD), 0);
  const std::optional<vdso::CallFault> f = RunContained(g, [] {
    feenableexcept(FE_DIVBYZERO);
    // DF set, then a fault at once: no C library code (raise()) may run
    // with DF set.
    asm volatile("std\n\tud2" ::: "cc");
  });
  const int round = fegetround();
  const int traps = fegetexcept();
  fesetround(FE_TONEAREST);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->signal, SIGILL);
  EXPECT_EQ(round, FE_DOWNWARD);
  EXPECT_EQ(traps, 0);
  ExpectDefaultControl();
}

// Nested: each call is checked against its own start, and the inner one's
// fault leaves the outer call guarded and its own state intact.
TEST(CallGuardControl, ANestedCallIsCheckedOnItsOwn) {
  call_guard_internal::GuardState& g = call_guard_internal::ThisThread();
  std::optional<vdso::CallFault> inner;
  const std::optional<vdso::CallFault> outer = RunContained(g, [&] {
    {
      HostCallScope host(g);
      inner = RunContained(g, [] { fesetround(FE_UPWARD); });
    }
    raise(SIGSEGV);
  });
  ExpectDefaultControl();
  ASSERT_TRUE(inner.has_value());
  ASSERT_NE(inner->called, nullptr);
  EXPECT_NE(std::string(inner->called).find("MXCSR 0x1f80 -> 0x5f80"),
            std::string::npos)
      << inner->called;
  ASSERT_TRUE(outer.has_value());
  EXPECT_EQ(outer->signal, SIGSEGV);
  // The outer call changing it after a clean inner one is the outer's.
  std::optional<vdso::CallFault> clean;
  const std::optional<vdso::CallFault> changed = RunContained(g, [&] {
    {
      HostCallScope host(g);
      clean = RunContained(g, [] {});
    }
    ReturnWithDirectionFlagSet();
  });
  ExpectDefaultControl();
  EXPECT_FALSE(clean.has_value());
  ASSERT_TRUE(changed.has_value());
  ASSERT_NE(changed->called, nullptr);
  EXPECT_STREQ(changed->called, "returned with the direction flag set");
}

// Two traps, as a kernel WARN() and BUG() compile on x86: ud2 between two
// additions to EAX, each after a global label naming its address.
extern "C" int vdsolab_test_warn(void);
extern "C" int vdsolab_test_bug(void);
extern "C" const char vdsolab_test_warn_trap[];
extern "C" const char vdsolab_test_bug_trap[];
__asm__(
    "  .text\n"
    "  .globl vdsolab_test_warn\n"
    "  .type vdsolab_test_warn,@function\n"
    "vdsolab_test_warn:\n"
    "  movl $1, %eax\n"
    "  .globl vdsolab_test_warn_trap\n"
    "vdsolab_test_warn_trap:\n"
    "  ud2\n"
    "  addl $1, %eax\n"
    "  ret\n"
    "  .size vdsolab_test_warn, .-vdsolab_test_warn\n"
    "  .globl vdsolab_test_bug\n"
    "  .type vdsolab_test_bug,@function\n"
    "vdsolab_test_bug:\n"
    "  movl $1, %eax\n"
    "  .globl vdsolab_test_bug_trap\n"
    "vdsolab_test_bug_trap:\n"
    "  ud2\n"
    "  addl $1, %eax\n"
    "  ret\n"
    "  .size vdsolab_test_bug, .-vdsolab_test_bug\n");

// A registered WARN trap goes on after the ud2 and is counted, as the
// kernel goes on after a WARN(); an unregistered ud2 (a BUG()) stays a
// crash, and outside a guarded call nothing is resumed.
TEST(CallGuard, ARegisteredWarnTrapGoesOnAndAnyOtherUd2IsACrash) {
  call_guard_internal::GuardState& g = call_guard_internal::ThisThread();
  const uintptr_t warn = reinterpret_cast<uintptr_t>(vdsolab_test_warn_trap);
  RegisterWarnSites({warn});
  const uint64_t before = g.warns.load();
  int r = 0;
  EXPECT_FALSE(RunContained(g, [&] { r = vdsolab_test_warn(); }).has_value());
  EXPECT_EQ(r, 2);  // The instruction after the trap ran.
  EXPECT_EQ(g.warns.load(), before + 1);
  EXPECT_EQ(g.last_warn.load(), warn);

  r = 0;
  const std::optional<vdso::CallFault> bug =
      RunContained(g, [&] { r = vdsolab_test_bug(); });
  ASSERT_TRUE(bug.has_value());
  EXPECT_EQ(bug->kind, vdso::CallFault::Kind::kCrash);
  EXPECT_EQ(bug->signal, SIGILL);
  EXPECT_EQ(r, 0);
  EXPECT_EQ(g.warns.load(), before + 1);
}

// A call that returns after running for a quarter of its bound is a spin
// all the same (RunContained()): stopped at the bound or returned just
// under it, the verdict must be one. A call well under a quarter is not.
TEST(CallGuardThreads, ACallThatReturnsAfterAQuarterOfItsBoundIsASpin) {
  SetCallTimeLimit(0.4);  // A quarter: 100 ms.
  auto burn = [](int64_t ns) {
    const int64_t start = ThreadCpuNs();
    while (ThreadCpuNs() - start < ns) {
    }
  };
  call_guard_internal::GuardState& g = call_guard_internal::ThisThread();
  const std::optional<vdso::CallFault> slow =
      RunContained(g, [&] { burn(300000000); });
  const std::optional<vdso::CallFault> quick =
      RunContained(g, [&] { burn(30000000); });
  SetCallTimeLimit(1.0);
  ASSERT_TRUE(slow.has_value());
  EXPECT_EQ(slow->kind, vdso::CallFault::Kind::kSpin);
  EXPECT_TRUE(slow->returned);
  EXPECT_DOUBLE_EQ(slow->seconds, 0.1);  // The threshold, not the time seen.
  EXPECT_NE(vdso::DescribeFault(*slow).find("ran for over 100 ms"),
            std::string::npos)
      << vdso::DescribeFault(*slow);
  EXPECT_FALSE(quick.has_value()) << vdso::DescribeFault(*quick);
}

}  // namespace vdsolab::variants

namespace vdsolab::variants {

// The same for a call asleep in the kernel: one that slept for a quarter of
// its bound and then answered is a block (a vDSO call never sleeps; one
// that slept 0.6 s and answered right passed, and a scenario of them took
// hours). One asleep well under a quarter is not.
TEST(CallGuardThreads, ACallThatSleptAQuarterOfItsBoundIsABlock) {
  SetCallTimeLimit(0.4);  // A quarter: 100 ms.
  call_guard_internal::GuardState& g = call_guard_internal::ThisThread();
  const std::optional<vdso::CallFault> slept = RunContained(g, [] {
    timespec ts = {0, 300000000};
    while (nanosleep(&ts, &ts) != 0) {
    }
  });
  const std::optional<vdso::CallFault> napped = RunContained(g, [] {
    timespec ts = {0, 5000000};
    while (nanosleep(&ts, &ts) != 0) {
    }
  });
  SetCallTimeLimit(1.0);
  ASSERT_TRUE(slept.has_value());
  EXPECT_EQ(slept->kind, vdso::CallFault::Kind::kSpin);
  EXPECT_TRUE(slept->returned);
  EXPECT_TRUE(slept->blocked);
  EXPECT_DOUBLE_EQ(slept->seconds, 0.1);
  EXPECT_NE(vdso::DescribeFault(*slept).find("blocked for over 100 ms"),
            std::string::npos)
      << vdso::DescribeFault(*slept);
  EXPECT_FALSE(napped.has_value()) << vdso::DescribeFault(*napped);
}

}  // namespace vdsolab::variants
