#include "variants/plugin/call_guard.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

namespace vdsolab::variants {
namespace call_guard_internal {

constinit thread_local GuardState* t_state = nullptr;

namespace {

constexpr int kCrashCode = 1;  // sigsetjmp() codes.
constexpr int kSpinCode = 2;
constexpr int kExitCode = 3;
constexpr int kWatchdogSignal = SIGXCPU;
constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL,
                                 SIGABRT, SIGTRAP, SIGSYS};
constexpr int kMaxThreads = 64;
constexpr uint64_t kWatchdogPeriodMs = 20;

std::atomic<uint64_t> g_limit_ms{1000};

// Threads the watchdog looks after.
struct Slot {
  std::atomic<GuardState*> state{nullptr};
  pthread_t thread{};
  clockid_t cpu_clock{};  // The thread's CPU-time clock.
  // The watchdog's own view (only it touches these).
  uint64_t last_calls = 0;
  uint64_t stalled_ms = 0;    // Wall time the current call has run...
  uint64_t cpu_at_start = 0;  // ...and the thread's CPU time (ns) then.
  uint64_t signalled_for = 0;
};

// A call is stopped after the bound of the thread's own CPU time, so that
// a call waiting for a CPU on a loaded machine is not called a spin; a
// call blocked without running (sleeping in foreign code) is stopped after
// this many times the bound of wall time.
constexpr uint64_t kWallBackstop = 30;

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
  if (sig == SIGABRT || sig == SIGTRAP || sig == kWatchdogSignal) raise(sig);
}

extern "C" void OnSignal(int sig, siginfo_t* info, void* uctx) {
  GuardState* g = t_state;
  if (g != nullptr && g->active.load(std::memory_order_relaxed) != 0) {
    if (sig == kWatchdogSignal) {
      if (g->in_host.load(std::memory_order_relaxed) != 0) {
        g->spin_pending.store(1, std::memory_order_relaxed);
        return;
      }
      siglongjmp(g->env, kSpinCode);
    }
    if (g->in_host.load(std::memory_order_relaxed) == 0) {
      g->signal.store(sig, std::memory_order_relaxed);
      g->address.store(reinterpret_cast<uintptr_t>(info->si_addr),
                       std::memory_order_relaxed);
      siglongjmp(g->env, kCrashCode);
    }
  }
  if (sig == kWatchdogSignal && g_previous[sig].sa_handler == SIG_DFL) {
    return;  // A late watchdog signal: the call has returned since.
  }
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
        continue;
      }
      slot.stalled_ms += kWatchdogPeriodMs;
      const uint64_t cpu_ms =
          (CpuNs(slot.cpu_clock) - slot.cpu_at_start) / 1000000;
      if (limit != 0 && slot.signalled_for != calls &&
          (cpu_ms >= limit || slot.stalled_ms >= kWallBackstop * limit)) {
        slot.signalled_for = calls;
        g->spun_ms.store(std::max(cpu_ms, std::min(slot.stalled_ms, limit)),
                         std::memory_order_relaxed);
        pthread_kill(slot.thread, kWatchdogSignal);
      }
    }
  }
}

void InstallProcessWide() {
  struct sigaction sa = {};
  sa.sa_sigaction = OnSignal;
  // SA_NODEFER: a jump out of the handler leaves no signal blocked (the
  // guard's sigsetjmp does not save the mask); SA_ONSTACK: a stack
  // overflow in foreign code can still be handled.
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : kFaultSignals) sigaction(sig, &sa, &g_previous[sig]);
  sigaction(kWatchdogSignal, &sa, &g_previous[kWatchdogSignal]);
  std::thread(Watchdog).detach();
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
    std::lock_guard<std::mutex> lock(g_slots_mu);
    for (int i = 0; i < kMaxThreads; ++i) {
      if (g_slots[i].state.load() == nullptr) {
        g_slots[i].thread = pthread_self();
        pthread_getcpuclockid(pthread_self(), &g_slots[i].cpu_clock);
        g_slots[i].last_calls = 0;
        g_slots[i].stalled_ms = 0;
        g_slots[i].signalled_for = 0;
        g_slots[i].state.store(&state, std::memory_order_release);
        slot = i;
        break;
      }
    }
    t_state = &state;
  }
  ~ThreadRegistration() {
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

GuardState& RegisterThisThread() {
  thread_local ThreadRegistration registration;
  return registration.state;
}

void Enter(GuardState& g) {
  g.in_host.store(0, std::memory_order_relaxed);
  g.spin_pending.store(0, std::memory_order_relaxed);
  // Only this thread writes `calls` (the watchdog reads it): a load and a
  // store, not a locked read-modify-write, which cost a tenth of a kernel
  // tree's simulated call.
  g.calls.store(g.calls.load(std::memory_order_relaxed) + 1,
                std::memory_order_relaxed);
  g.active.store(1, std::memory_order_relaxed);
}

void Leave(GuardState& g) {
  g.active.store(0, std::memory_order_relaxed);
  g.in_host.store(0, std::memory_order_relaxed);
}

vdso::CallFault FaultFrom(int code, const GuardState& g) {
  vdso::CallFault f;
  if (code == kSpinCode) {
    f.kind = vdso::CallFault::Kind::kSpin;
    f.seconds = static_cast<double>(g.spun_ms.load()) / 1000.0;
    return f;
  }
  f.kind = vdso::CallFault::Kind::kCrash;
  if (code == kExitCode) {
    f.exit_status = g.exit_status.load();
    return f;
  }
  f.signal = g.signal.load();
  f.address = g.address.load();
  return f;
}

void ExitCalled(int status) {
  GuardState* g = t_state;
  if (g == nullptr || g->active.load(std::memory_order_relaxed) == 0 ||
      g->in_host.load(std::memory_order_relaxed) != 0) {
    return;
  }
  g->exit_status.store(status, std::memory_order_relaxed);
  siglongjmp(g->env, kExitCode);
}

void AfterHostCall(GuardState& g) {
  if (g.active.load(std::memory_order_relaxed) != 0) {
    siglongjmp(g.env, kSpinCode);
  }
}

}  // namespace call_guard_internal

void SetCallTimeLimit(double seconds) {
  call_guard_internal::g_limit_ms.store(
      seconds <= 0 ? 0 : static_cast<uint64_t>(seconds * 1000.0));
}

double CallTimeLimit() {
  return static_cast<double>(call_guard_internal::g_limit_ms.load()) / 1000.0;
}

}  // namespace vdsolab::variants
