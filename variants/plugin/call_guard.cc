#include "variants/plugin/call_guard.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define VDSOLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VDSOLAB_ASAN 1
#endif
#endif
#if defined(VDSOLAB_ASAN)
#include <sanitizer/asan_interface.h>
#endif

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "vdso/vvar_page.h"

namespace vdsolab::variants {
namespace call_guard_internal {

constinit thread_local GuardState* t_state = nullptr;
constinit thread_local int t_own_handler = 0;
constinit thread_local char t_dispatch = kDispatchAllow;

namespace {

constexpr int kCrashCode = 1;  // sigsetjmp() codes.
constexpr int kSpinCode = 2;
constexpr int kExitCode = 3;
constexpr int kThreadExitCode = 4;
constexpr uint64_t kNoAddress = ~0ull;
constexpr int kWatchdogSignal = SIGXCPU;
constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL,
                                 SIGABRT, SIGTRAP, SIGSYS};
// Signals that are not faults but whose default action ends the process
// (terminate or core): a call that raises one, or makes the kernel send
// one (a write to a pipe nobody reads: SIGPIPE; a timer it set: SIGALRM),
// would end vdsolab. Not SIGINT, SIGTERM, SIGHUP or SIGQUIT, the user's
// ways to stop vdsolab, nor glibc's own real-time signals below SIGRTMIN.
// Real-time signals SIGRTMIN..SIGRTMAX end the process too (EndsProcess()).
constexpr int kEndingSignals[] = {SIGUSR1,   SIGUSR2, SIGPIPE, SIGALRM,
                                  SIGVTALRM, SIGPROF, SIGIO,   SIGPWR,
                                  SIGSTKFLT, SIGXFSZ};
bool EndsProcess(int sig) {
  for (int s : kEndingSignals) {
    if (s == sig) return true;
  }
  return sig >= SIGRTMIN && sig <= SIGRTMAX;
}
constexpr int kMaxThreads = 64;
constexpr uint64_t kWatchdogPeriodMs = 20;
// Wall time a signalled call gets to take the watchdog's jump (or 10 times
// the bound, if longer) before it is signalled again, then given up on.
constexpr uint64_t kSignalWaitMs = 5000;
// Why a refused change is a finding (RefuseChange()).
constexpr char kRefusedWhy[] =
    "vdsolab refused it: a vDSO call changes nothing the process shares "
    "(signal handlers and mask, the alternate signal stack, resource "
    "limits, the file mode mask, seccomp, the thread pointer), starts no "
    "program or thread and stops no process, and vdsolab's containment of the "
    "call and its own work "
    "depend on that";
// Why a clock system call is (syscall_guard.cc's SimulatedClockSyscall()).
constexpr char kClockSyscallWhy[] =
    "vdsolab refused it: it asks this machine's kernel, not the simulated "
    "one; a vDSO's own clock_gettime system call is its fallback, which "
    "the plugin ABI's fallback() makes";

bool IsClockSyscall(std::string_view did) {
  for (std::string_view fn :
       {"clock_gettime(", "gettimeofday(", "time(", "clock_getres("}) {
    if (did.starts_with(fn)) return true;
  }
  return false;
}

std::atomic<uint64_t> g_limit_ms{1000};

// Threads the watchdog looks after.
struct Slot {
  std::atomic<GuardState*> state{nullptr};
  pthread_t thread{};
  clockid_t cpu_clock{};  // The thread's CPU-time clock.
  pid_t tid = 0;          // For its scheduler state in /proc.
  // The watchdog's own view (only it touches these).
  uint64_t last_calls = 0;
  uint64_t stalled_ms = 0;    // Wall time the current call has run...
  uint64_t cpu_at_start = 0;  // ...and the thread's CPU time (ns) then.
  // Watchdog periods of the current call in which its thread was seen
  // asleep in foreign code, in ms.
  uint64_t blocked_ms = 0;
  // Signals sent for the current call, and the call's CPU and wall time at
  // the last one: a call that runs on for another bound after a signal
  // ignores or blocks it.
  int signals = 0;
  uint64_t cpu_at_signal = 0;
  uint64_t stalled_at_signal = 0;
};

// A call is stopped after the bound of the thread's own CPU time, so that
// a call waiting for a CPU on a loaded machine is not called a spin, or
// after the bound of watchdog periods in which its thread was seen asleep
// in foreign code (a vDSO call never sleeps or waits). A call that neither
// runs nor is seen asleep (stopped by a debugger, or starved of CPU) is
// stopped after this many times the bound of wall time.
constexpr uint64_t kWallBackstop = 30;

// Whether thread `tid` of this process is asleep in the kernel (state S,
// interruptible, or D, uninterruptible: a sleep, a futex or I/O wait), by
// /proc/self/task/TID/stat. Not R (running or waiting for a CPU), nor T/t
// (stopped, or held by a debugger). Read only for a call that has run
// across a whole watchdog period, so not on any fast path.
bool AsleepInKernel(pid_t tid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", static_cast<int>(tid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  // "TID (COMM) STATE ...": COMM may hold spaces and parentheses, so the
  // state follows the last ')'.
  const char* paren = strrchr(buf, ')');
  if (paren == nullptr || paren[1] != ' ') return false;
  return paren[2] == 'S' || paren[2] == 'D';
}

uint64_t CpuNs(clockid_t clock) {
  struct timespec ts;
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}
std::array<Slot, kMaxThreads> g_slots;
std::mutex g_slots_mu;

// The handlers vdsolab replaced: a fault that is not in a guarded call goes
// to them (the default action, or a sanitizer's handler).
struct sigaction g_previous[65];
// vdsolab's own, for the watchdog to install again.
struct sigaction g_handler;
// InstallProcessWide() has run: calls may be guarded from now on. A plain
// int read with a builtin (RefusesChange()), not std::atomic, whose load is
// an instrumented function call under AddressSanitizer.
int g_installed = 0;

void Chain(int sig, siginfo_t* info, void* uctx) {
  const struct sigaction& old = g_previous[sig];
  if ((old.sa_flags & SA_SIGINFO) != 0 && old.sa_sigaction != nullptr) {
    old.sa_sigaction(sig, info, uctx);
    return;
  }
  if (old.sa_handler == SIG_IGN) return;
  if (old.sa_handler != SIG_DFL && old.sa_handler != nullptr) {
    old.sa_handler(sig);
    return;
  }
  // The default action: returning re-runs the faulting instruction (or,
  // for a raised signal, abort() raises it again) without our handler.
  signal(sig, SIG_DFL);
  if (sig == SIGABRT || sig == SIGTRAP || sig == kWatchdogSignal ||
      EndsProcess(sig)) {
    raise(sig);
  }
}

// An ending signal (EndsProcess()) is the call's to answer for only when
// it would have ended the process (no handler was there before vdsolab's)
// and came from this process or the kernel on its behalf: one another
// process sends (kill -USR1 from a shell) ends vdsolab as it would have.
bool CallsOwnEndingSignal(int sig, const siginfo_t* info) {
  const struct sigaction& old = g_previous[sig];
  if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) {
    return false;
  }
  return info->si_code == SI_KERNEL || info->si_code > 0 ||
         info->si_pid == getpid();
}

// One line on stderr by write() alone: the callers run where vdsolab's
// threads may hold any lock (a signal handler, the watchdog, a thread of
// the code under test), and vsnprintf() of integers and strings does not
// allocate in glibc.
[[gnu::format(printf, 1, 2)]] void SayOnStderr(const char* format, ...) {
  char msg[320];
  va_list ap;
  va_start(ap, format);
  const int n = vsnprintf(msg, sizeof msg, format, ap);
  va_end(ap);
  if (n > 0) {
    [[maybe_unused]] ssize_t w =
        write(2, msg, std::min(static_cast<size_t>(n), sizeof msg - 1));
  }
}

// A thread the code under test started inside a guarded call (its
// constructors' and dlopen()'s included): pthread_create() is interposed
// (exit_guard.cc) and marks it. Only such a thread's fault is
// ForeignThreadFault(); vdsolab's own threads (the main one, the
// watchdog, a benchmark's, a test's) keep the signal's own action.
constinit thread_local bool t_foreign_thread = false;

// A fault on a thread the code under test started (t_foreign_thread),
// outside any call (in its own code, or calling through a table it kept
// from a call). Nothing can be contained there, and the default action
// would end vdsolab by the signal, mid-run and without a report: a check
// failed (exit 1), said in one line; write() and exit_group only, as
// vdsolab's threads may hold any lock (SayOnStderr()).
[[noreturn]] void ForeignThreadFault(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  SayOnStderr(
      "vdsolab: a thread the code under test started crashed (SIG%s) "
      "outside any call: vdsolab cannot contain it. Exiting with status "
      "1.\n",
      abbrev != nullptr ? abbrev : "?");
  syscall(SYS_exit_group, 1);
  __builtin_trap();
}

// The registered WARN traps (RegisterWarnSites()): a sorted array,
// replaced whole on registration; every one made is kept (g_warn_sites_all)
// so that a signal handler can go on reading the one it loaded.
struct WarnSites {
  std::vector<uintptr_t> sorted;
};
std::atomic<const WarnSites*> g_warn_sites{nullptr};
std::mutex g_warn_sites_mu;
std::vector<std::unique_ptr<WarnSites>>* g_warn_sites_all = nullptr;

// A SIGILL at a registered WARN's ud2 (0f 0b): the interrupted context goes
// on after it, as the kernel's handler makes it. Async-signal-safe.
bool ResumeWarn(GuardState& g, void* uctx) {
#if defined(__x86_64__)
  const WarnSites* w = g_warn_sites.load(std::memory_order_acquire);
  if (w == nullptr || uctx == nullptr) return false;
  auto* uc = static_cast<ucontext_t*>(uctx);
  greg_t& rip = uc->uc_mcontext.gregs[REG_RIP];
  const uintptr_t pc = static_cast<uintptr_t>(rip);
  if (!std::binary_search(w->sorted.begin(), w->sorted.end(), pc)) {
    return false;
  }
  const auto* insn = reinterpret_cast<const uint8_t*>(pc);
  if (insn[0] != 0x0f || insn[1] != 0x0b) return false;
  rip += 2;
  g.warns.store(g.warns.load(std::memory_order_relaxed) + 1,
                std::memory_order_relaxed);
  g.last_warn.store(pc, std::memory_order_relaxed);
  if (g.first_warn.load(std::memory_order_relaxed) == 0) {
    g.first_warn.store(pc, std::memory_order_relaxed);
  }
  return true;
#else
  (void)g;
  (void)uctx;
  return false;
#endif
}

extern "C" void OnSignal(int sig, siginfo_t* info, void* uctx) {
  if (sig == SIGSYS && OnDispatchedSyscall(info, uctx)) return;
  GuardState* g = t_state;
  if (g != nullptr && g->active.load(std::memory_order_relaxed) != 0) {
    if (sig == SIGILL && g->in_host.load(std::memory_order_relaxed) == 0 &&
        ResumeWarn(*g, uctx)) {
      return;
    }
    if (sig == kWatchdogSignal) {
      if (g->in_host.load(std::memory_order_relaxed) != 0) {
        g->spin_pending.store(1, std::memory_order_relaxed);
        return;
      }
      siglongjmp(g->env, kSpinCode);
    }
    const bool ending = EndsProcess(sig);
    if (g->in_host.load(std::memory_order_relaxed) == 0 &&
        (!ending || CallsOwnEndingSignal(sig, info))) {
      g->signal.store(sig, std::memory_order_relaxed);
      // si_addr only for a signal the kernel sent for a fault (si_code >
      // 0); a raised one (abort(): SI_TKILL) carries the sender's pid
      // there instead, and an ending signal has no faulting address.
      g->address.store(info->si_code > 0 && !ending
                           ? reinterpret_cast<uintptr_t>(info->si_addr)
                           : kNoAddress,
                       std::memory_order_relaxed);
      siglongjmp(g->env, kCrashCode);
    }
  }
  if (sig == kWatchdogSignal && g_previous[sig].sa_handler == SIG_DFL) {
    return;  // A late watchdog signal: the call has returned since.
  }
  if (t_foreign_thread && (g == nullptr || g->active.load() == 0) &&
      !EndsProcess(sig) && sig != kWatchdogSignal) {
    ForeignThreadFault(sig);
  }
  // Chain()'s signal(sig, SIG_DFL) is vdsolab's, whatever it interrupted.
  // Not around the jumps above, which would leave the mark set.
  const OwnSignalHandler own;
  Chain(sig, info, uctx);
}

void Watchdog() {
  for (;;) {
    struct timespec ts = {0, static_cast<long>(kWatchdogPeriodMs * 1000000)};
    nanosleep(&ts, nullptr);
    const uint64_t process_limit = g_limit_ms.load(std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(g_slots_mu);
    for (Slot& slot : g_slots) {
      GuardState* g = slot.state.load(std::memory_order_acquire);
      if (g == nullptr) continue;
      const uint64_t limit =
          process_limit == 0
              ? 0
              : std::max(process_limit,
                         g->min_limit_ms.load(std::memory_order_relaxed));
      const uint64_t calls = g->calls.load(std::memory_order_relaxed);
      if (g->active.load(std::memory_order_relaxed) == 0 ||
          calls != slot.last_calls) {
        slot.last_calls = calls;
        slot.stalled_ms = 0;
        slot.cpu_at_start = CpuNs(slot.cpu_clock);
        slot.blocked_ms = 0;
        slot.signals = 0;
        continue;
      }
      slot.stalled_ms += kWatchdogPeriodMs;
      const uint64_t cpu_ns = CpuNs(slot.cpu_clock);
      const uint64_t cpu_ms = (cpu_ns - slot.cpu_at_start) / 1000000;
      if (limit == 0) continue;
      // Slow: a spin if it returns (RunContained()); not while loading
      // (its own bound). Stored with the call's number, so that a call
      // that has just ended is not taken for the next one.
      const uint64_t slow = std::max(2 * kWatchdogPeriodMs, limit / 4);
      if (g->min_limit_ms.load(std::memory_order_relaxed) == 0 &&
          cpu_ms >= slow) {
        // The threshold, not the time seen: a report must not depend on
        // when the watchdog looked.
        g->slow_blocked.store(0, std::memory_order_relaxed);
        g->slow_ms.store(slow, std::memory_order_relaxed);
        g->slow_call.store(calls, std::memory_order_relaxed);
      }
      if (slot.signals == 0) {
        // Asleep in vdsolab's own callback (a write to a full pipe) is not
        // the foreign code's.
        if (g->in_host.load(std::memory_order_relaxed) == 0 &&
            AsleepInKernel(slot.tid)) {
          slot.blocked_ms += kWatchdogPeriodMs;
          // Asleep for a quarter of the bound: a block if it returns, as
          // a spin is (a call that slept 0.6 s and answered right passed,
          // and a scenario of them took hours). Not while loading.
          if (g->min_limit_ms.load(std::memory_order_relaxed) == 0 &&
              slot.blocked_ms >= slow &&
              g->slow_call.load(std::memory_order_relaxed) != calls) {
            g->slow_blocked.store(1, std::memory_order_relaxed);
            g->slow_ms.store(slow, std::memory_order_relaxed);
            g->slow_call.store(calls, std::memory_order_relaxed);
          }
        }
        // Two periods at least: one sample in D may be a page fault.
        const bool blocked =
            cpu_ms < limit &&
            slot.blocked_ms >= std::max(limit, 2 * kWatchdogPeriodMs);
        if (cpu_ms < limit && !blocked &&
            slot.stalled_ms < kWallBackstop * limit) {
          continue;
        }
        g->blocked.store(blocked ? 1 : 0, std::memory_order_relaxed);
        g->spun_ms.store(
            blocked ? slot.blocked_ms
                    : std::max(cpu_ms, std::min(slot.stalled_ms, limit)),
            std::memory_order_relaxed);
      } else if ((cpu_ns - slot.cpu_at_signal) / 1000000 < limit &&
                 slot.stalled_ms - slot.stalled_at_signal <
                     std::max(10 * limit, kSignalWaitMs)) {
        // The last signal's jump may still be on its way: a thread that
        // runs takes it at once, a blocked one is woken by it, one that is
        // waiting for a CPU takes it when it gets one.
        continue;
      } else if (slot.signals == 1) {
        // Ignored: foreign code replaced the handler or set SIG_IGN. The
        // disposition is the process's, so install ours again.
        sigaction(kWatchdogSignal, &g_handler, nullptr);
      } else {
        // Blocked in the thread's mask, or the jump was taken but the
        // thread is stuck in vdsolab's callback on a lock the foreign code
        // held when it was stopped (a spin inside malloc()): nothing can
        // stop the call, and waiting would hang vdsolab. A check failed
        // (exit 1); write() and exit_group only, as the stuck thread may
        // hold any lock.
        SayOnStderr(
            "vdsolab: a call into the code under test has run %llu ms "
            "past its bound (--call-timeout) and does not stop: it blocks "
            "SIGXCPU, the signal that stops it, or was stopped inside the C "
            "library holding a lock vdsolab now waits for. Exiting with "
            "status 1.\n",
            static_cast<unsigned long long>(
                std::max((cpu_ns - slot.cpu_at_signal) / 1000000,
                         slot.stalled_ms - slot.stalled_at_signal)));
        syscall(SYS_exit_group, 1);
      }
      ++slot.signals;
      slot.cpu_at_signal = cpu_ns;
      slot.stalled_at_signal = slot.stalled_ms;
      pthread_kill(slot.thread, kWatchdogSignal);
    }
  }
}

// This thread's state while it runs foreign code in a guarded call (not
// one of vdsolab's callbacks), else nullptr.
GuardState* InForeignCall() {
  GuardState* g = t_state;
  return g != nullptr && g->active.load(std::memory_order_relaxed) != 0 &&
                 g->in_host.load(std::memory_order_relaxed) == 0
             ? g
             : nullptr;
}

// fork() inside a guarded call (pthread_atfork): the child is vdsolab in
// the middle of a simulated call. Let return, it would run the rest of
// the run, its reports and replay files, and fork again at the same call
// of every copy; so it ends here, before fork() returns. The parent's call
// is a finding when it returns (RunContained()). vdsolab's own forks (the
// host variant's child, outside any guarded call) are untouched.
void ParentAfterFork() { NoteForkInCall(); }
void ChildAfterFork() {
  // The system call itself: exit()'s handlers and stdio buffers are the
  // parent's.
  if (InForeignCall() != nullptr) syscall(SYS_exit_group, kForkedChildStatus);
}

void InstallProcessWide() {
  struct sigaction sa = {};
  sa.sa_sigaction = OnSignal;
  // SA_NODEFER: a jump out of the handler leaves no signal blocked (the
  // guard's sigsetjmp does not save the mask); SA_ONSTACK: a stack
  // overflow in foreign code can still be handled.
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  g_handler = sa;
  pthread_atfork(nullptr, ParentAfterFork, ChildAfterFork);
  for (int sig : kFaultSignals) sigaction(sig, &sa, &g_previous[sig]);
  // An ending signal the process ignores stays ignored: the kernel drops
  // it, as before.
  for (int sig = 1; sig < 65; ++sig) {
    if (!EndsProcess(sig)) continue;
    sigaction(sig, &sa, &g_previous[sig]);
    if ((g_previous[sig].sa_flags & SA_SIGINFO) == 0 &&
        g_previous[sig].sa_handler == SIG_IGN) {
      sigaction(sig, &g_previous[sig], nullptr);
    }
  }
  sigaction(kWatchdogSignal, &sa, &g_previous[kWatchdogSignal]);
  std::thread(Watchdog).detach();
  // Release: pairs with RefusesChange()'s acquire load.
  __atomic_store_n(&g_installed, 1, __ATOMIC_RELEASE);
}

// Registers the thread with the watchdog for its lifetime, and gives it an
// alternate signal stack.
struct ThreadRegistration {
  GuardState state;
  std::unique_ptr<char[]> altstack;
  int slot = -1;

  ThreadRegistration() {
    static std::once_flag once;
    std::call_once(once, InstallProcessWide);
    constexpr size_t kStack = 64 * 1024;
    altstack.reset(new char[kStack]);
    stack_t ss = {};
    ss.ss_sp = altstack.get();
    ss.ss_size = kStack;
    sigaltstack(&ss, nullptr);
    EnableSyscallDispatch();
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* lo = nullptr;
      size_t size = 0;
      if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
        state.stack_lo = reinterpret_cast<uintptr_t>(lo);
      }
      pthread_attr_destroy(&attr);
    }
    std::lock_guard<std::mutex> lock(g_slots_mu);
    for (int i = 0; i < kMaxThreads; ++i) {
      if (g_slots[i].state.load() == nullptr) {
        g_slots[i].thread = pthread_self();
        pthread_getcpuclockid(pthread_self(), &g_slots[i].cpu_clock);
        g_slots[i].tid = static_cast<pid_t>(syscall(SYS_gettid));
        g_slots[i].last_calls = 0;
        g_slots[i].stalled_ms = 0;
        g_slots[i].blocked_ms = 0;
        g_slots[i].signals = 0;
        g_slots[i].state.store(&state, std::memory_order_release);
        slot = i;
        break;
      }
    }
    t_state = &state;
  }
  ~ThreadRegistration() {
    DisableSyscallDispatch();
    t_state = nullptr;
    if (slot >= 0) {
      std::lock_guard<std::mutex> lock(g_slots_mu);
      g_slots[slot].state.store(nullptr);
    }
    stack_t ss = {};
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
  }
};

}  // namespace

const char kForked[] = "fork()";

// Few: one per distinct misbehaviour.
const char* Interned(const std::string& s) {
  static std::mutex mu;
  static auto* kept = new std::set<std::string>;
  std::lock_guard<std::mutex> lock(mu);
  return kept->insert(s).first->c_str();
}

GuardState& RegisterThisThread() {
  thread_local ThreadRegistration registration;
  return registration.state;
}

namespace {
// Before a fault, or a return with the control state changed: a refused
// change the call made explains what followed (a fault handler it meant
// to install, a mask it meant to set), so it is the finding; a fork is
// not (what followed is). `did` is cleared either way.
std::optional<vdso::CallFault> RefusedFirst(GuardState& g) {
  const char* did = g.did.load(std::memory_order_relaxed);
  if (did != nullptr && did != kForked) return DidFault(g);
  g.did.store(nullptr, std::memory_order_relaxed);
  return std::nullopt;
}
}  // namespace

vdso::CallFault FaultFrom(int code, GuardState& g) {
  if (std::optional<vdso::CallFault> refused = RefusedFirst(g)) {
    return *refused;
  }
  vdso::CallFault f;
  if (code == kSpinCode) {
    f.kind = vdso::CallFault::Kind::kSpin;
    f.seconds = static_cast<double>(g.spun_ms.load()) / 1000.0;
    f.blocked = g.blocked.load() != 0;
    return f;
  }
  f.kind = vdso::CallFault::Kind::kCrash;
  if (code == kThreadExitCode) {
    f.called = "pthread_exit()";
    return f;
  }
  if (code == kExitCode) {
    f.exit_status = g.exit_status.load();
    return f;
  }
  f.signal = g.signal.load();
  const uint64_t address = g.address.load();
  if (address < vdso::kFixedAddresses) {
    f.has_address = true;
    f.address = address;
  } else if (const std::optional<int64_t> off =
                 address == kNoAddress
                     ? std::nullopt
                     : vdso::VvarPage::OffsetInGuardedArea(address)) {
    // Past the vvar area, or a store to it: its offset from the area's
    // start is the same in every run.
    f.has_address = true;
    f.object = "vvar";
    f.address_below = *off < 0;
    f.address = static_cast<uint64_t>(*off < 0 ? -*off : *off);
  } else if (address != kNoAddress && g.min_limit_ms.load() == 0) {
    // In a loaded object: its offset there is the same in every run. Not
    // while loading (RunContainedAtLeast()): a jump out of dlopen() may
    // have left the loader's lock held, which dladdr() takes.
    Dl_info in;
    if (dladdr(reinterpret_cast<void*>(address), &in) != 0 &&
        in.dli_fname != nullptr && in.dli_fbase != nullptr) {
      const char* slash = strrchr(in.dli_fname, '/');
      f.has_address = true;
      f.object = slash != nullptr ? slash + 1 : in.dli_fname;
      f.address = address - reinterpret_cast<uintptr_t>(in.dli_fbase);
    }
  }
  return f;
}

[[gnu::noinline]] void AfterJump(GuardState& g) {
#if defined(VDSOLAB_ASAN)
  const auto top = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (g.stack_lo != 0 && g.stack_lo < top) {
    __asan_unpoison_memory_region(reinterpret_cast<void*>(g.stack_lo),
                                  top - g.stack_lo);
  }
#else
  (void)g;
#endif
}

vdso::CallFault SlowFault(GuardState& g) {
  vdso::CallFault f;
  f.kind = vdso::CallFault::Kind::kSpin;
  f.returned = true;
  f.seconds = static_cast<double>(g.slow_ms.load()) / 1000.0;
  f.blocked = g.slow_blocked.load() != 0;
  return f;
}

vdso::CallFault ControlFault(GuardState& g, const CpuControl& at_start) {
  // Read what the call left before putting vdsolab's state back.
  CpuControl left;
  SaveControl(left);
  bool df = false;
#if defined(__x86_64__)
  df = (__builtin_ia32_readeflags_u64() & kDirectionFlag) != 0;
#endif
  RestoreControl(at_start);
  if (std::optional<vdso::CallFault> refused = RefusedFirst(g)) {
    return *refused;
  }
  // The control bits only (the flags vary with what the call computed): the
  // same text in every run, and in the replay.
  const uint32_t from = at_start.mxcsr & kMxcsrControl;
  const uint32_t to = left.mxcsr & kMxcsrControl;
  std::string fp;
  if (from != to) fp = absl::StrFormat("MXCSR %#x -> %#x", from, to);
  if (left.x87 != at_start.x87) {
    absl::StrAppendFormat(&fp, "%sx87 control word %#x -> %#x",
                          fp.empty() ? "" : ", ", at_start.x87, left.x87);
  }
  std::string what = "returned with ";
  if (df) absl::StrAppend(&what, "the direction flag set");
  if (!fp.empty()) {
    absl::StrAppend(&what, df ? " and " : "",
                    "the floating-point control changed: ", fp);
  }
  vdso::CallFault f;
  f.kind = vdso::CallFault::Kind::kCrash;
  f.called = Interned(what);
  f.returned = true;
  f.why =
      "a vDSO call leaves its caller's MXCSR, x87 control word and "
      "direction flag as it found them; vdsolab put its own back";
  return f;
}

vdso::CallFault DidFault(GuardState& g) {
  const char* did = g.did.exchange(nullptr, std::memory_order_relaxed);
  vdso::CallFault f;
  f.kind = vdso::CallFault::Kind::kCrash;
  f.called = did;
  if (did != kForked) {
    f.why =
        did != nullptr && IsClockSyscall(did) ? kClockSyscallWhy : kRefusedWhy;
  }
  return f;
}

namespace {
bool RefusesOnceInstalled(bool process_wide) {
  if (t_own_handler != 0) return false;
  return InForeignCall() != nullptr || (process_wide && t_foreign_thread);
}
}  // namespace

// Not instrumented by AddressSanitizer, and nothing but a builtin load
// before the guard is installed: its runtime calls here (signal_guard.cc's
// setrlimit()) while it starts, before its shadow memory exists. Before
// then no call is guarded and no thread is foreign.
__attribute__((no_sanitize_address)) bool RefusesChange(bool process_wide) {
  // Acquire: pairs with InstallProcessWide()'s release store.
  if (__atomic_load_n(&g_installed, __ATOMIC_ACQUIRE) == 0) return false;
  return RefusesOnceInstalled(process_wide);
}

void ChangeRefused(const char* what) {
  if (GuardState* g = InForeignCall()) {
    // The first change is the finding; a fork before it is not.
    if (const char* did = g->did.load(std::memory_order_relaxed);
        did == nullptr || did == kForked) {
      g->did.store(Interned(what), std::memory_order_relaxed);
    }
    return;
  }
  // A thread the code under test started, outside any call: no call to
  // blame, and the change would undo the containment of every later call.
  // Said once; write() only, as vdsolab's threads may hold any lock.
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) {
    SayOnStderr(
        "vdsolab: a thread the code under test started called %s outside "
        "any call: refused (what the whole process shares contains the "
        "calls and vdsolab's own work); further such calls are refused "
        "silently.\n",
        what);
  }
}

bool StartedInForeignCall() { return InForeignCall() != nullptr; }

void NoteForkInCall() {
  if (GuardState* g = InForeignCall()) {
    // A refused change before it stays the finding.
    if (g->did.load(std::memory_order_relaxed) == nullptr) {
      g->did.store(kForked, std::memory_order_relaxed);
    }
  }
}

void MarkForeignThread() {
  t_foreign_thread = true;
  // Its own alternate signal stack, so that a stack overflow there is
  // ForeignThreadFault() too; kept for the thread's life (a few per
  // misbehaving plugin). Unless it has one: AddressSanitizer gives every
  // thread its own, and unmaps whatever stack is installed when the
  // thread ends (ours, from the heap: its check failed).
  stack_t now = {};
  if (sigaltstack(nullptr, &now) == 0 && (now.ss_flags & SS_DISABLE) == 0) {
    return;
  }
  constexpr size_t kStack = 64 * 1024;
  stack_t ss = {};
  ss.ss_sp = new (std::nothrow) char[kStack];
  if (ss.ss_sp == nullptr) return;
  ss.ss_size = kStack;
  sigaltstack(&ss, nullptr);
}

void ExitCalled(int status) {
  GuardState* g = InForeignCall();
  if (g == nullptr) {
    // vdsolab's own code never calls exit() but from its main thread
    // (main()'s return, cli/main.cc's _exit()). Another thread calling it
    // outside a guarded call is one the code under test started: it would
    // end vdsolab, mid-run and without a report, with the status it chose
    // (0: a pass). A check failed (exit 1), said in one line; write() and
    // exit_group only, as vdsolab's threads may hold any lock.
    if (syscall(SYS_gettid) != getpid()) {
      SayOnStderr(
          "vdsolab: a thread the code under test started called exit(%d) "
          "(or _exit(), quick_exit()) outside any call: that would end "
          "vdsolab with the status it chose, mid-run. Exiting with status "
          "1.\n",
          status);
      syscall(SYS_exit_group, 1);
    }
    return;
  }
  g->exit_status.store(status, std::memory_order_relaxed);
  siglongjmp(g->env, kExitCode);
}

void ThreadExitCalled() {
  GuardState* g = InForeignCall();
  if (g == nullptr) return;
  siglongjmp(g->env, kThreadExitCode);
}

void AfterHostCall(GuardState& g) {
  if (g.active.load(std::memory_order_relaxed) != 0) {
    siglongjmp(g.env, kSpinCode);
  }
}

}  // namespace call_guard_internal

void SetCallTimeLimit(double seconds) {
  // At least 1 ms: a bound below it must not round to 0, which means no
  // bound at all (the watchdog samples every 20 ms anyway).
  call_guard_internal::g_limit_ms.store(
      seconds <= 0
          ? 0
          : std::max<uint64_t>(1, static_cast<uint64_t>(seconds * 1000.0)));
}

double CallTimeLimit() {
  return static_cast<double>(call_guard_internal::g_limit_ms.load()) / 1000.0;
}

void RegisterWarnSites(const std::vector<uintptr_t>& sites) {
  if (sites.empty()) return;
  namespace in = call_guard_internal;
  std::lock_guard<std::mutex> lock(in::g_warn_sites_mu);
  if (in::g_warn_sites_all == nullptr) {
    in::g_warn_sites_all = new std::vector<std::unique_ptr<in::WarnSites>>;
  }
  auto* next =
      in::g_warn_sites_all->emplace_back(std::make_unique<in::WarnSites>())
          .get();
  if (const in::WarnSites* old =
          in::g_warn_sites.load(std::memory_order_acquire)) {
    next->sorted = old->sorted;  // The old one stays: a handler may read it.
  }
  next->sorted.insert(next->sorted.end(), sites.begin(), sites.end());
  std::sort(next->sorted.begin(), next->sorted.end());
  next->sorted.erase(std::unique(next->sorted.begin(), next->sorted.end()),
                     next->sorted.end());
  // Release: pairs with ResumeWarn()'s acquire load, which then sees the
  // array filled.
  in::g_warn_sites.store(next, std::memory_order_release);
}

}  // namespace vdsolab::variants
