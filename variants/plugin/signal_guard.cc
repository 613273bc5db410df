// sigaction(), signal(), sigset(), sigaltstack(), sigprocmask(),
// pthread_sigmask(), setrlimit() and prlimit() for the whole process, so
// that foreign code under test cannot undo what contains it
// (call_guard.h): a plugin that set SIGSEGV back to SIG_DFL, disabled the
// thread's alternate stack or blocked SIGSEGV, and then faulted, ended
// vdsolab by the signal; one that lowered RLIMIT_FSIZE ended it at the
// replay file's write. Inside a guarded call a change is refused
// (-1/EPERM, SIG_ERR) and the call is a finding when it returns
// (call_guard_internal::RefusesChange()); a query (no new value) is
// answered. Exported from the executable like exit_guard.cc's, so a
// plugin's references bind here; everyone else's calls (vdsolab's own,
// its libraries', a sanitizer runtime's) pass through. The C library's own
// internal calls do not come here, nor does a system call made without
// its wrapper (docs/robustness.md).

#include <asm/prctl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "variants/plugin/internal/refuse.h"

// The C library's other names for the same functions, which nothing
// interposes: forwarding without dlsym(), as a sanitizer runtime calls
// these while it starts and vdsolab's signal handlers call them (dlsym()
// is neither safe that early nor async-signal-safe).
extern "C" int __sigaction(int, const struct sigaction*, struct sigaction*);
extern "C" sighandler_t bsd_signal(int, sighandler_t) noexcept;

namespace vdsolab::variants::refuse_internal {
namespace {

std::string SignalText(int sig) {
  const char* abbrev = sig > 0 && sig < 65 ? sigabbrev_np(sig) : nullptr;
  if (abbrev != nullptr) return std::string("SIG") + abbrev;
  return std::to_string(sig);
}

// getrlimit(2)'s names.
std::string ResourceText(int resource) {
  static constexpr const char* kNames[] = {
      "CPU",      "FSIZE",  "DATA",    "STACK", "CORE",  "RSS",
      "NPROC",    "NOFILE", "MEMLOCK", "AS",    "LOCKS", "SIGPENDING",
      "MSGQUEUE", "NICE",   "RTPRIO",  "RTTIME"};
  if (resource >= 0 &&
      resource < static_cast<int>(sizeof kNames / sizeof kNames[0])) {
    return std::string("RLIMIT_") + kNames[resource];
  }
  return std::to_string(resource);
}

std::string HowText(int how) {
  switch (how) {
    case SIG_BLOCK:
      return "SIG_BLOCK";
    case SIG_UNBLOCK:
      return "SIG_UNBLOCK";
    case SIG_SETMASK:
      return "SIG_SETMASK";
    default:
      return std::to_string(how);
  }
}

// glibc's own signals (cancellation, setxid), which its sigprocmask() and
// pthread_sigmask() never let a caller block: the same here.
constexpr int kLibcSignals[] = {32, 33};

std::string CloneText(uint64_t flags) {
  static constexpr struct {
    uint64_t flag;
    const char* name;
  } kNames[] = {{CLONE_VM, "CLONE_VM"},
                {CLONE_VFORK, "CLONE_VFORK"},
                {CLONE_THREAD, "CLONE_THREAD"}};
  std::string text;
  for (const auto& n : kNames) {
    if ((flags & n.flag) == 0) continue;
    text += (text.empty() ? "" : "|") + std::string(n.name);
  }
  return text;
}

std::string PrctlText(int option) {
  switch (option) {
    case PR_SET_SECCOMP:
      return "PR_SET_SECCOMP";
    case PR_SET_SYSCALL_USER_DISPATCH:
      return "PR_SET_SYSCALL_USER_DISPATCH";
    case PR_SET_TSC:
      return "PR_SET_TSC";
    case PR_SET_DUMPABLE:
      return "PR_SET_DUMPABLE";
    case PR_SET_PDEATHSIG:
      return "PR_SET_PDEATHSIG";
    case PR_SET_NO_NEW_PRIVS:
      return "PR_SET_NO_NEW_PRIVS";
    case PR_SET_MM:
      return "PR_SET_MM";
    default:
      return std::to_string(option);
  }
}

std::string ArchPrctlText(int code) {
  switch (code) {
    case ARCH_SET_FS:
      return "ARCH_SET_FS";
    case ARCH_SET_GS:
      return "ARCH_SET_GS";
    default:
      return std::to_string(code);
  }
}

VDSOLAB_UNCHECKED int SetMask(int how, const sigset_t* set, sigset_t* old) {
  sigset_t kept;
  if (set != nullptr && how != SIG_UNBLOCK) {
    kept = *set;
    for (int sig : kLibcSignals) sigdelset(&kept, sig);
    set = &kept;
  }
  // The kernel's sigset_t is 8 bytes, glibc's first 8.
  return static_cast<int>(syscall(SYS_rt_sigprocmask, how, set, old, 8));
}

VDSOLAB_UNCHECKED int PrLimit(pid_t pid, int resource, const void* new_limit,
                              void* old_limit) {
  return static_cast<int>(
      syscall(SYS_prlimit64, pid, resource, new_limit, old_limit));
}

VDSOLAB_UNCHECKED bool ForThisProcess(pid_t pid) {
  return pid == 0 || pid == getpid();
}

}  // namespace

void Refused(const char* fn, Arg kind, int arg) {
  std::string text;
  switch (kind) {
    case Arg::kNone:
      break;
    case Arg::kSignal:
      text = SignalText(arg);
      break;
    case Arg::kResource:
      text = ResourceText(arg);
      break;
    case Arg::kHow:
      text = HowText(arg);
      break;
    case Arg::kCloneFlags:
      text = CloneText(static_cast<uint32_t>(arg));
      break;
    case Arg::kPrctl:
      text = PrctlText(arg);
      break;
    case Arg::kArchPrctl:
      text = ArchPrctlText(arg);
      break;
  }
  call_guard_internal::ChangeRefused(
      (std::string(fn) + "(" + text + ")").c_str());
  errno = EPERM;
}

}  // namespace vdsolab::variants::refuse_internal

namespace r = ::vdsolab::variants::refuse_internal;
using r::Arg;

// The definitions repeat glibc's declarations exactly (noexcept where its
// __THROW puts it).
extern "C" {

VDSOLAB_UNCHECKED int sigaction(int sig, const struct sigaction* __restrict act,
                                struct sigaction* __restrict oact) noexcept {
  if (act != nullptr && r::Refuse("sigaction", Arg::kSignal, sig, true)) {
    return -1;
  }
  return __sigaction(sig, act, oact);
}

VDSOLAB_UNCHECKED sighandler_t signal(int sig, sighandler_t handler) noexcept {
  if (r::Refuse("signal", Arg::kSignal, sig, true)) return SIG_ERR;
  return bsd_signal(sig, handler);
}

// What signal() is in a plugin built with a strict -std=c99 or -std=c11
// (no _DEFAULT_SOURCE): the headers redirect it here.
VDSOLAB_UNCHECKED sighandler_t __sysv_signal(int sig,
                                             sighandler_t handler) noexcept {
  if (r::Refuse("signal", Arg::kSignal, sig, true)) return SIG_ERR;
  return sysv_signal(sig, handler);
}

// System V's: only a plugin calls it, so it may forward through dlsym().
VDSOLAB_UNCHECKED sighandler_t sigset(int sig, sighandler_t disp) noexcept {
  if (r::Refuse("sigset", Arg::kSignal, sig, true)) return SIG_ERR;
  using Fn = sighandler_t (*)(int, sighandler_t);
  static const Fn next = r::Next<Fn>("sigset");
  return next(sig, disp);
}

VDSOLAB_UNCHECKED int sigaltstack(const stack_t* __restrict ss,
                                  stack_t* __restrict oss) noexcept {
  if (ss != nullptr && r::Refuse("sigaltstack", Arg::kNone, 0, false)) {
    return -1;
  }
  return static_cast<int>(syscall(SYS_sigaltstack, ss, oss));
}

VDSOLAB_UNCHECKED int sigprocmask(int how, const sigset_t* __restrict set,
                                  sigset_t* __restrict oset) noexcept {
  if (set != nullptr && r::Refuse("sigprocmask", Arg::kHow, how, false)) {
    return -1;
  }
  return r::SetMask(how, set, oset);
}

// pthread_sigmask() answers an error number, not -1 and errno.
VDSOLAB_UNCHECKED int pthread_sigmask(int how,
                                      const __sigset_t* __restrict newmask,
                                      __sigset_t* __restrict oldmask) noexcept {
  if (newmask != nullptr &&
      r::Refuse("pthread_sigmask", Arg::kHow, how, false)) {
    return EPERM;
  }
  return r::SetMask(how, newmask, oldmask) == 0 ? 0 : errno;
}

VDSOLAB_UNCHECKED int setrlimit(__rlimit_resource_t resource,
                                const struct rlimit* rlimits) noexcept {
  if (r::Refuse("setrlimit", Arg::kResource, resource, true)) return -1;
  return r::PrLimit(0, resource, rlimits, nullptr);
}

VDSOLAB_UNCHECKED int setrlimit64(__rlimit_resource_t resource,
                                  const struct rlimit64* rlimits) noexcept {
  if (r::Refuse("setrlimit", Arg::kResource, resource, true)) return -1;
  return r::PrLimit(0, resource, rlimits, nullptr);
}

VDSOLAB_UNCHECKED int prlimit(__pid_t pid, enum __rlimit_resource resource,
                              const struct rlimit* new_limit,
                              struct rlimit* old_limit) noexcept {
  if (new_limit != nullptr && r::ForThisProcess(pid) &&
      r::Refuse("prlimit", Arg::kResource, resource, true)) {
    return -1;
  }
  return r::PrLimit(pid, resource, new_limit, old_limit);
}

VDSOLAB_UNCHECKED int prlimit64(__pid_t pid, enum __rlimit_resource resource,
                                const struct rlimit64* new_limit,
                                struct rlimit64* old_limit) noexcept {
  if (new_limit != nullptr && r::ForThisProcess(pid) &&
      r::Refuse("prlimit", Arg::kResource, resource, true)) {
    return -1;
  }
  return r::PrLimit(pid, resource, new_limit, old_limit);
}

}  // extern "C"
