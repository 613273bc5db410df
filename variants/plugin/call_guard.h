// File: variants/plugin/call_guard.h
//
// Containment for foreign code under test (plugins, compiled kernel code):
// a call that crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP,
// SIGSYS), raises or draws a signal whose default action ends the process
// (SIGUSR1, SIGPIPE, SIGALRM, ...: call_guard.cc's kEndingSignals; only if
// it would have ended it, and not one another process sent), or spins past
// a time bound is abandoned and reported as a CallFault, so a misbehaving
// variant is a finding, never a crash or a hang of vdsolab.
//
// How: the call runs after sigsetjmp(); the signal handlers siglongjmp()
// back when the fault happened inside the call on this thread (not inside
// vdsolab's own callbacks, which are marked with HostCallScope). A watchdog
// thread notices a call that has run for the bound of its thread's CPU
// time (so a loaded machine does not turn a slow call into a spin), that
// its thread was seen asleep in the kernel for the bound (a sleep, a futex
// or I/O wait: a vDSO call never blocks), or 30 times the bound of wall
// time (neither running nor asleep: stopped, or starved of CPU), and
// signals its thread (SIGXCPU); if that thread is inside a callback, the
// jump waits until the callback returns. Handlers run on an alternate
// stack, so runaway recursion is caught too.
//
// exit(), _exit(), _Exit(), quick_exit() and pthread_exit() are
// interposed (exit_guard.cc): called from inside a guarded call they end
// the call, not vdsolab or its thread, and are a crash finding. So are
// sigaction(), signal(), sigset(), sigaltstack(), sigprocmask(),
// pthread_sigmask(), setrlimit() and prlimit() (signal_guard.cc): a change
// made inside a call is refused (the handlers, mask and stack are what
// contain the call; a lowered limit would end vdsolab later) and the call
// is a finding. fork() inside a
// guarded call ends the child at once (a pthread_atfork handler: the child is
// vdsolab in mid-call, and going on it would run the rest of the run, forking
// again at the same call) and is a finding when the call returns. Foreign code
// that ignores or blocks the watchdog's signal: the watchdog installs its
// handler again and signals once more, then ends vdsolab (exit 1, one line)
// rather than hang. The same system calls made without the C library's
// wrappers (an inline `syscall`) are judged the same way through syscall
// user dispatch (syscall_guard.cc), where the kernel has it. What cannot
// be contained in-process: foreign code that corrupts vdsolab's memory
// before it faults, or makes those system calls from a thread it started
// (no dispatch there) or on a kernel without dispatch. A call
// that returns with the CPU's control state changed (MXCSR's control bits, the
// x87 control word, the direction flag: callee-saved in the ABI) is a crash
// finding, and vdsolab's state is put back, as it is after any jump out of a
// call. docs/robustness.md says what is caught where.

#ifndef VDSOLAB_VARIANTS_PLUGIN_CALL_GUARD_H_
#define VDSOLAB_VARIANTS_PLUGIN_CALL_GUARD_H_

#include <setjmp.h>
#include <signal.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "vdso/access.h"

namespace vdsolab::variants {

// The time bound of one call (default 1 s of the thread's CPU time); 0
// disables the watchdog.
void SetCallTimeLimit(double seconds);
double CallTimeLimit();

namespace call_guard_internal {

// This thread's guard state. The flags are lock-free atomics: read by the
// thread's own signal handlers and by the watchdog thread.
struct GuardState {
  sigjmp_buf env;
  std::atomic<int> active{0};   // Inside a guarded call.
  std::atomic<int> in_host{0};  // Inside a vdsolab callback.
  std::atomic<int> spin_pending{0};
  std::atomic<uint64_t> calls{0};  // Calls started (the watchdog's clock).
  std::atomic<int> signal{0};
  std::atomic<uint64_t> address{0};
  std::atomic<uint64_t> spun_ms{0};  // How long the stopped call ran...
  // ...or was asleep (1: stopped for sleeping, not for running).
  std::atomic<int> blocked{0};
  std::atomic<int> exit_status{0};  // What the call passed to exit().
  // What the call did that a vDSO call cannot, found when it returns:
  // kForked (fork(); its child ended at once), or a change to the
  // process's signal handling or resource limits that was refused
  // (signal_guard.cc: "sigaction(SIGSEGV)"). Cleared when it is reported.
  std::atomic<const char*> did{nullptr};
  // The bound of the call running now, if it has its own (RunContained's
  // min_seconds); 0: the process-wide one.
  std::atomic<uint64_t> min_limit_ms{0};
  // A call the watchdog saw run for a quarter of its bound (RunContained()):
  // its number (`calls` then) and that threshold, in ms.
  std::atomic<uint64_t> slow_call{0};
  std::atomic<uint64_t> slow_ms{0};
  // 1: that call was seen asleep in the kernel that long, not running.
  std::atomic<int> slow_blocked{0};
  // WARN() traps resumed on this thread (RegisterWarnSites()), the
  // address of the last, and of the first since the caller last set
  // first_warn to 0: read by the caller after its calls.
  std::atomic<uint64_t> warns{0};
  std::atomic<uint64_t> last_warn{0};
  std::atomic<uint64_t> first_warn{0};
  // The lowest address of the thread's stack (AfterJump()); 0: unknown.
  uintptr_t stack_lo = 0;
};

// This thread's state once registered (RegisterThisThread()), else
// nullptr. constinit: read inline with one %fs-relative load on every
// guarded call, without a TLS wrapper call.
extern constinit thread_local GuardState* t_state;
// How deep this thread is in vdsolab's own signal handlers
// (OwnSignalHandler).
extern constinit thread_local int t_own_handler;
// This thread's syscall user dispatch selector (syscall_guard.cc):
// kDispatchBlock while a guarded call runs, so that a system call the
// code under test makes without the C library's wrapper (an inline
// `syscall`, or libc's own internal one) traps to SIGSYS and is judged as
// the wrappers are. The kernel reads it at each system call of this
// thread: program order on the one thread is the only ordering needed.
extern constinit thread_local char t_dispatch;
inline constexpr char kDispatchAllow = 0;  // SYSCALL_DISPATCH_FILTER_ALLOW
inline constexpr char kDispatchBlock = 1;  // SYSCALL_DISPATCH_FILTER_BLOCK
// Turns dispatch on for the calling thread, once its signal handlers are
// installed; false where the kernel has none (before 5.11) or the C
// library's signal return cannot be found: the wrappers alone then.
bool EnableSyscallDispatch();
// Turns it off for the calling thread (a thread's registration ends, or
// a test of the backstops that dispatch would pre-empt).
void DisableSyscallDispatch();
// A SIGSYS that dispatch raised: the system call judged, and made or
// refused, its result in the interrupted context. False for any other
// SIGSYS (a seccomp filter's, a raised one): a fault as before.
bool OnDispatchedSyscall(siginfo_t* info, void* uctx);
// What a child forked inside a guarded call ends with, at once.
inline constexpr int kForkedChildStatus = 127;
// A fork made inside a guarded call on this thread, seen in the parent:
// the call's finding (kForked) unless a refused change came first.
void NoteForkInCall();
// Registers the calling thread (its state, alternate stack and watchdog
// slot) on its first call.
GuardState& RegisterThisThread();
inline GuardState& ThisThread() {
  if (GuardState* g = t_state) [[likely]] {
    return *g;
  }
  return RegisterThisThread();
}
// Marks a call as started (ThisThread() installed the handlers, the
// alternate stack and the watchdog). Inline: on every guarded call.
inline void Enter(GuardState& g) {
  g.in_host.store(0, std::memory_order_relaxed);
  g.spin_pending.store(0, std::memory_order_relaxed);
  g.blocked.store(0, std::memory_order_relaxed);
  // Only this thread writes `calls` (the watchdog reads it): a load and a
  // store, not a locked read-modify-write, which cost a tenth of a kernel
  // tree's simulated call.
  g.calls.store(g.calls.load(std::memory_order_relaxed) + 1,
                std::memory_order_relaxed);
  g.active.store(1, std::memory_order_relaxed);
  t_dispatch = kDispatchBlock;
}
// Marks the call as ended.
inline void Leave(GuardState& g) {
  t_dispatch = kDispatchAllow;
  g.active.store(0, std::memory_order_relaxed);
  g.in_host.store(0, std::memory_order_relaxed);
}
// The CPU's control state a vDSO call must leave as it found it (the
// x86-64 ABI's callee-saved control bits): a call that returns with it
// changed breaks its caller (an unmasked FE_INEXACT makes the caller's next
// division a SIGFPE; another rounding mode, FTZ or DAZ changes its
// arithmetic; a set direction flag runs its memcpy() backwards).
// No initialisers: SaveControl() writes both, and zeroing them first cost
// a store on every call.
struct CpuControl {
  uint32_t mxcsr;  // Control bits and all (stmxcsr).
  uint16_t x87;    // The x87 control word (fnstcw).
};
// MXCSR's control bits: rounding, FTZ, DAZ and the exception masks. Bits
// 0-5 are the sticky exception flags, which any arithmetic sets.
inline constexpr uint32_t kMxcsrControl = 0xffc0;
inline constexpr uint64_t kDirectionFlag = 1u << 10;  // EFLAGS.DF.
// The state at a call's start. No DF: the ABI has it clear at every call,
// and the compiler's own code (memcpy() inlined as rep movsb) relies on it.
// Two stores, no syscall: on every guarded call. The memory clobbers keep
// the compiler from moving the reads across the foreign code it inlined (a
// test's lambda), which it could for asm that touches no memory it knows.
// Into the caller's object, not returned: a returned one was copied.
inline void SaveControl(CpuControl& c) {
#if defined(__x86_64__)
  asm volatile("stmxcsr %0\n\tfnstcw %1"
               : "=m"(c.mxcsr), "=m"(c.x87)
               :
               : "memory");
#else
  c = CpuControl{0, 0};
#endif
}
// Whether the call changed it: MXCSR's control bits, the x87 control word,
// or DF left set. A handful of instructions and one branch.
inline bool ControlChanged(const CpuControl& at_start) {
#if defined(__x86_64__)
  CpuControl now;
  SaveControl(now);
  // The builtin, not pushfq in asm: the compiler knows it moves the stack
  // pointer (inline asm pushing there would overwrite the red zone).
  const uint64_t flags = __builtin_ia32_readeflags_u64();
  return (((now.mxcsr ^ at_start.mxcsr) & kMxcsrControl) |
          static_cast<uint32_t>(now.x87 ^ at_start.x87) |
          (flags & kDirectionFlag)) != 0;
#else
  (void)at_start;
  return false;
#endif
}
// Puts back the state of the call's start (and clears DF), before any of
// vdsolab's code runs: after a jump out of the call (a crash, a spin, an
// exit()), whose foreign code or signal handler's fresh state is what is
// left; and in ControlFault().
inline void RestoreControl(const CpuControl& at_start) {
#if defined(__x86_64__)
  // fnclex before fldcw: an x87 exception the call left pending and
  // unmasked would otherwise be raised at the fldcw, in vdsolab.
  asm volatile("cld\n\tfnclex\n\tldmxcsr %0\n\tfldcw %1" ::"m"(at_start.mxcsr),
               "m"(at_start.x87)
               : "memory", "cc");
#else
  (void)at_start;
#endif
}
// The fault of a call that returned with the control state changed
// (ControlChanged()): puts vdsolab's back first. Out of line: rare.
vdso::CallFault ControlFault(GuardState& g, const CpuControl& at_start);
vdso::CallFault FaultFrom(int code, GuardState& g);
// First thing after a jump out of a call. Under AddressSanitizer, the
// jump comes from a handler on the alternate stack, where
// __asan_handle_no_return() cannot tell which stack to unpoison, so the
// abandoned frames' redzones stay poisoned and the next frames' locals
// land on them (a false report): unpoisons the thread's stack below here.
// Nothing otherwise.
void AfterJump(GuardState& g);
// The fault of a call that returned after the watchdog saw it run for a
// quarter of its bound (slow_call).
vdso::CallFault SlowFault(GuardState& g);
// GuardState::did for fork().
extern const char kForked[];
// The fault of a call that returned after doing what `did` says.
vdso::CallFault DidFault(GuardState& g);
// After a callback: jump out now if the watchdog asked while inside it.
void AfterHostCall(GuardState& g);
// exit(status) called on this thread: inside a guarded call (and not in a
// callback), the call ends here as a fault; from a thread other than the
// main one outside any call (one the code under test started), vdsolab
// ends with status 1 and one line; otherwise returns and the process
// exits as asked.
void ExitCalled(int status);
// pthread_create() (interposed): whether the calling thread is in foreign
// code of a guarded call, and, first thing in a thread started so,
// MarkForeignThread(): a fault there outside any call ends vdsolab with
// exit 1 and one line (docs/robustness.md).
bool StartedInForeignCall();
void MarkForeignThread();
// pthread_exit() called on this thread: the same. Left to end the thread
// in a guarded call, it would leave the run waiting for it for good.
void ThreadExitCalled();
// A change to what the whole process shares ("sigaction(SIGSEGV)",
// "setrlimit(RLIMIT_FSIZE)"), or to this thread's signal mask or alternate
// stack (`process_wide` false), asked for by the calling thread
// (signal_guard.cc): whether to refuse it. Refused inside a guarded call
// (the call is then a finding when it returns, DidFault()), and, for a
// process-wide change, on a thread the code under test started (said once
// on stderr). vdsolab's own code, its callbacks included, is never refused.
// Not while one of vdsolab's own signal handlers runs (OwnSignalHandler),
// which may have interrupted foreign code. RefusesChange() is loads only
// (async-signal-safe: a handler may ask);
// ChangeRefused() records a refused change (inside a call, the call's
// finding; on such a thread, one line on stderr).
bool RefusesChange(bool process_wide);
void ChangeRefused(const char* what);
// A refused change's text, kept for the process (CallFault::called).
const char* Interned(const std::string& s);

}  // namespace call_guard_internal

// Marks one of vdsolab's own signal handlers while it runs (call_guard's,
// cli's Ctrl-C handler): it may interrupt a plugin's call, and the
// sigaction() or sigprocmask() it makes to end the process by the signal
// is vdsolab's, not the plugin's to be refused. Async-signal-safe.
// Its system calls are made, not dispatched (t_dispatch).
class OwnSignalHandler {
 public:
  OwnSignalHandler() : dispatch_(call_guard_internal::t_dispatch) {
    call_guard_internal::t_dispatch = call_guard_internal::kDispatchAllow;
    ++call_guard_internal::t_own_handler;
  }
  ~OwnSignalHandler() {
    --call_guard_internal::t_own_handler;
    call_guard_internal::t_dispatch = dispatch_;
  }
  OwnSignalHandler(const OwnSignalHandler&) = delete;
  OwnSignalHandler& operator=(const OwnSignalHandler&) = delete;

 private:
  char dispatch_;
};

// Kernel code compiled into user space (ktime/) traps at a WARN(): x86's
// ud2, with a __bug_table entry flagged BUGFLAG_WARNING, where the
// kernel's trap handler reports the warning and goes on after the ud2
// (report_bug(): a WARN is not a BUG). The loader of such code registers
// the addresses of its WARN traps here; inside a guarded call a SIGILL at
// one of them resumes after it and is counted in the thread's
// GuardState::warns, as the kernel would log it. Any other ud2 stays a
// crash. Addresses are never unregistered (the code stays loaded).
void RegisterWarnSites(const std::vector<uintptr_t>& sites);

// Runs `fn` (which calls into foreign code) contained; nullopt when it
// returned normally, else the fault. A call that returned after running
// for a quarter of its bound of CPU time (at least two watchdog periods) is
// a spin fault too (CallFault::returned): whether such a call would have
// been stopped or returns just under the bound depends on the machine's
// speed, and a replay must reach the run's verdict. A vDSO call takes
// microseconds; 250 ms at the default bound is 10^5 times that. `fn` must not
// hold resources across the foreign call that a jump past it would leak.
template <class Fn>
std::optional<vdso::CallFault> RunContained(call_guard_internal::GuardState& g,
                                            Fn&& fn);

template <class Fn>
std::optional<vdso::CallFault> RunContained(Fn&& fn) {
  return RunContained(call_guard_internal::ThisThread(), fn);
}

template <class Fn>
std::optional<vdso::CallFault> RunNested(call_guard_internal::GuardState& g,
                                         Fn& fn);

// The same with this thread's guard state already at hand (ThisThread()),
// for callers that also hand it to their callbacks' HostCallScope.
template <class Fn>
std::optional<vdso::CallFault> RunContained(call_guard_internal::GuardState& g,
                                            Fn&& fn) {
  if (g.active.load(std::memory_order_relaxed) != 0) [[unlikely]] {
    return RunNested(g, fn);
  }
  // Written before sigsetjmp() and never after it: still valid after
  // the jump back (a local changed between the two would not be). A nested
  // call keeps its own, so the outer call is checked against its start.
  call_guard_internal::CpuControl at_start;
  call_guard_internal::SaveControl(at_start);
  // savemask 0: no sigprocmask syscall per call; the handlers are
  // SA_NODEFER, so a jump out of one leaves no signal blocked.
  const int code = sigsetjmp(g.env, 0);
  if (code == 0) {
    call_guard_internal::Enter(g);
    fn();
    call_guard_internal::Leave(g);
    // First: whatever else the call did, vdsolab's own code must not run
    // in the state it left.
    if (call_guard_internal::ControlChanged(at_start)) [[unlikely]] {
      return call_guard_internal::ControlFault(g, at_start);
    }
    if (g.did.load(std::memory_order_relaxed) != nullptr) [[unlikely]] {
      return call_guard_internal::DidFault(g);
    }
    if (g.slow_call.load(std::memory_order_relaxed) ==
        g.calls.load(std::memory_order_relaxed)) [[unlikely]] {
      return call_guard_internal::SlowFault(g);
    }
    return std::nullopt;
  }
  // Neither the jump nor the kernel's signal frame puts vdsolab's state
  // back: siglongjmp() does not save it, and a handler starts with a fresh
  // one (MXCSR 0x1f80) that the jump keeps.
  call_guard_internal::AfterJump(g);
  call_guard_internal::RestoreControl(at_start);
  call_guard_internal::Leave(g);
  return call_guard_internal::FaultFrom(code, g);
}

// A guarded call made inside another's callback (a kernel tree's
// timekeeper stepped from a reader's load hook, ktime/tree_timekeeping.cc):
// the outer call's jump buffer and marks are saved and put back, so that
// it is still guarded when the inner one returns (left as the inner call
// leaves them, a crash of the outer call's code afterwards would end
// vdsolab). Out of line: rare.
template <class Fn>
[[gnu::noinline]] std::optional<vdso::CallFault> RunNested(
    call_guard_internal::GuardState& g, Fn& fn) {
  sigjmp_buf outer;
  std::memcpy(&outer, &g.env, sizeof outer);
  const int in_host = g.in_host.load(std::memory_order_relaxed);
  const int spin_pending = g.spin_pending.load(std::memory_order_relaxed);
  const bool outer_slow = g.slow_call.load(std::memory_order_relaxed) ==
                          g.calls.load(std::memory_order_relaxed);
  g.active.store(0, std::memory_order_relaxed);
  std::optional<vdso::CallFault> fault = RunContained(g, fn);
  // The rest of the outer call under a number of its own: the watchdog's
  // count starts over there (the inner call's CPU time is not the outer
  // one's), and a slowness it saw before stays the outer call's.
  const uint64_t rest = g.calls.load(std::memory_order_relaxed) + 1;
  g.calls.store(rest, std::memory_order_relaxed);
  if (outer_slow) g.slow_call.store(rest, std::memory_order_relaxed);
  std::memcpy(&g.env, &outer, sizeof outer);
  g.spin_pending.store(spin_pending, std::memory_order_relaxed);
  g.in_host.store(in_host, std::memory_order_relaxed);
  g.active.store(1, std::memory_order_relaxed);
  // The inner call's Leave() let system calls through; the outer call's
  // code runs on.
  call_guard_internal::t_dispatch = call_guard_internal::kDispatchBlock;
  return fault;
}

// The same with a bound of at least `min_seconds` for this call: loading a
// plugin (dlopen(), its constructors, reading its record) is not one of
// its clock_gettime() calls. dlopen() allocates, and an allocation may
// pay for the host's earlier frees (malloc_consolidate()): stopping it
// there, after a per-call bound of a few ms, would leave the allocator's
// lock held.
template <class Fn>
std::optional<vdso::CallFault> RunContainedAtLeast(double min_seconds,
                                                   Fn&& fn) {
  call_guard_internal::GuardState& g = call_guard_internal::ThisThread();
  g.min_limit_ms.store(static_cast<uint64_t>(min_seconds * 1000.0));
  std::optional<vdso::CallFault> fault = RunContained(g, fn);
  g.min_limit_ms.store(0);
  return fault;
}

// Marks vdsolab's own code running on behalf of foreign code (the plugin
// ABI's callbacks): a fault here is vdsolab's, and the watchdog's jump
// waits until the callback returns.
class HostCallScope {
 public:
  HostCallScope() : HostCallScope(call_guard_internal::ThisThread()) {}
  // With the calling thread's state at hand: no thread-local lookup.
  explicit HostCallScope(call_guard_internal::GuardState& g) : g_(g) {
    g_.in_host.store(1, std::memory_order_relaxed);
  }
  ~HostCallScope() {
    g_.in_host.store(0, std::memory_order_relaxed);
    if (g_.spin_pending.load(std::memory_order_relaxed) != 0) {
      call_guard_internal::AfterHostCall(g_);
    }
  }
  HostCallScope(const HostCallScope&) = delete;
  HostCallScope& operator=(const HostCallScope&) = delete;

 private:
  call_guard_internal::GuardState& g_;
};

}  // namespace vdsolab::variants

#endif  // VDSOLAB_VARIANTS_PLUGIN_CALL_GUARD_H_
