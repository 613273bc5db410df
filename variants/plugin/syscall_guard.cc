// System calls that foreign code under test makes without the C library's
// wrappers (an inline `syscall`, libc's syscall(), or libc's own internal
// calls), judged as signal_guard.cc's and process_guard.cc's wrappers judge
// theirs. Through Linux's syscall user dispatch (5.11 and later,
// prctl(PR_SET_SYSCALL_USER_DISPATCH)): a thread that makes guarded calls
// has it on, and while foreign code of a call runs its selector
// (t_dispatch) says block, so every system call it makes traps to SIGSYS
// instead of running. call_guard.cc's handler hands that SIGSYS here:
// a change a vDSO call cannot make is refused (-EPERM, and the call's
// finding, as the wrappers do), an exit ends the call, a fork's child ends
// at once, and anything else is made from the handler and its result put
// in the interrupted context. Without dispatch (an older kernel) the
// wrappers alone contain the call. A thread the code under test starts
// does not inherit dispatch (the kernel clears it at clone()): there only
// the wrappers apply (docs/robustness.md).

#include <asm/prctl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "variants/plugin/call_guard.h"
#include "variants/plugin/internal/refuse.h"
#include "vdso/vvar_page.h"

namespace vdsolab::variants::call_guard_internal {
namespace {

namespace r = refuse_internal;
using r::Arg;

// The C library's signal return on x86-64 (glibc's __restore_rt):
// `mov $15, %rax; syscall`. It is the one place dispatch lets a system
// call through whatever the selector says: every signal handler that
// returns into a call, this file's included, returns through it.
constexpr unsigned char kRestoreRt[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00,
                                        0x00, 0x00, 0x0f, 0x05};
// Not in glibc's headers (the kernel's uapi siginfo.h and signal.h).
constexpr unsigned long kSaRestorer = 0x04000000;
constexpr int kSysUserDispatch = 2;  // SIGSYS's si_code: SYS_USER_DISPATCH.

// The kernel's struct sigaction (not glibc's): rt_sigaction(2).
struct KernelSigaction {
  void* handler;
  unsigned long flags;
  void* restorer;
  uint64_t mask;
};

// A system call made here, never dispatched: `syscall` inline, its result
// the kernel's (-errno on failure).
VDSOLAB_UNCHECKED inline long Raw(long nr, long a1 = 0, long a2 = 0,
                                  long a3 = 0, long a4 = 0, long a5 = 0,
                                  long a6 = 0) {
  long ret;
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8),
                     "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}

// Where SIGSYS returns through (call_guard.cc installed its handler with
// the C library's sigaction()), if that is the code dispatch must let
// through; else 0, and no dispatch.
uintptr_t FindSignalReturn() {
  KernelSigaction k = {};
  if (Raw(SYS_rt_sigaction, SIGSYS, 0, reinterpret_cast<long>(&k),
          sizeof k.mask) != 0) {
    return 0;
  }
  if ((k.flags & kSaRestorer) == 0 || k.restorer == nullptr ||
      std::memcmp(k.restorer, kRestoreRt, sizeof kRestoreRt) != 0) {
    return 0;
  }
  return reinterpret_cast<uintptr_t>(k.restorer);
}

// The mask after rt_sigprocmask(how, set) from `before`.
uint64_t MaskAfter(uint64_t before, long how, uint64_t set) {
  uint64_t after = set;
  if (how == SIG_BLOCK) after = before | set;
  if (how == SIG_UNBLOCK) after = before & ~set;
  // SIGKILL and SIGSTOP cannot be blocked (the kernel drops them).
  return after &
         ~((uint64_t{1} << (SIGKILL - 1)) | (uint64_t{1} << (SIGSTOP - 1)));
}

// rt_sigprocmask(how, set, oldset, size), made on the interrupted
// context's mask, which the kernel puts back when the handler returns (a
// change made from the handler itself would be undone). Refused only if
// it blocks a signal that was not blocked: what the C library does
// inside its own functions (abort() unblocks SIGABRT; siglongjmp() puts a
// saved mask back) is no change to what contains the call.
long SigProcMask(const long* a, ucontext_t* uc) {
  if (a[3] != static_cast<long>(sizeof(uint64_t))) return -EINVAL;
  if (a[1] != 0 && a[0] != SIG_BLOCK && a[0] != SIG_UNBLOCK &&
      a[0] != SIG_SETMASK) {
    return -EINVAL;
  }
  uint64_t before;
  std::memcpy(&before, &uc->uc_sigmask, sizeof before);
  uint64_t after = before;
  if (a[1] != 0) {
    uint64_t set;
    std::memcpy(&set, reinterpret_cast<const void*>(a[1]), sizeof set);
    after = MaskAfter(before, a[0], set);
    if ((after & ~before) != 0 &&
        r::Refuse("rt_sigprocmask", Arg::kHow, static_cast<int>(a[0]), false)) {
      return -EPERM;
    }
  }
  if (a[2] != 0) {
    std::memcpy(reinterpret_cast<void*>(a[2]), &before, sizeof before);
  }
  std::memcpy(&uc->uc_sigmask, &after, sizeof after);
  return 0;
}

// sigaltstack(ss, oss) for the interrupted context, whose stack the kernel
// puts back when the handler returns.
long SigAltStack(const long* a, ucontext_t* uc) {
  if (a[0] != 0 && r::Refuse("sigaltstack", Arg::kNone, 0, false)) {
    return -EPERM;
  }
  if (a[1] != 0) {
    std::memcpy(reinterpret_cast<void*>(a[1]), &uc->uc_stack,
                sizeof uc->uc_stack);
  }
  if (a[0] != 0) {
    std::memcpy(&uc->uc_stack, reinterpret_cast<const void*>(a[0]),
                sizeof uc->uc_stack);
  }
  return 0;
}

// clone(), clone3(), fork(): a child that shares this memory (a thread, or
// vfork()'s) would start in this handler and cannot be made from here;
// its C library's ways (pthread_create(), interposed, makes the call
// itself) are not dispatched. A fork's child is vdsolab in mid-call and
// ends at once, as call_guard.cc's pthread_atfork handler ends it.
long Clone(long nr, const long* a, uint64_t flags) {
  if ((flags & (CLONE_VM | CLONE_VFORK)) != 0) {
    r::Refuse("clone", Arg::kCloneFlags, static_cast<int>(flags), true);
    return -EPERM;
  }
  const long pid = Raw(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
  if (pid == 0) Raw(SYS_exit_group, kForkedChildStatus);
  if (pid > 0) NoteForkInCall();
  return pid;
}

bool ThisProcessId(long pid) { return pid == 0 || pid == getpid(); }

// System calls a vDSO call has no business making, refused whatever their
// arguments: they change who the process is (its credentials, root,
// namespaces, process group, execution domain) or trace it, and vdsolab's
// own work after the call depends on none of that changing (a plugin that
// dropped root left vdsolab unable to write its replay files).
struct Named {
  long nr;
  const char* name;
};
constexpr Named kRefusedAlways[] = {
    {SYS_ptrace, "ptrace"},         {SYS_setuid, "setuid"},
    {SYS_setgid, "setgid"},         {SYS_setreuid, "setreuid"},
    {SYS_setregid, "setregid"},     {SYS_setresuid, "setresuid"},
    {SYS_setresgid, "setresgid"},   {SYS_setfsuid, "setfsuid"},
    {SYS_setfsgid, "setfsgid"},     {SYS_setgroups, "setgroups"},
    {SYS_capset, "capset"},         {SYS_chroot, "chroot"},
    {SYS_pivot_root, "pivot_root"}, {SYS_unshare, "unshare"},
    {SYS_setns, "setns"},           {SYS_setpgid, "setpgid"},
    {SYS_setsid, "setsid"},         {SYS_set_tid_address, "set_tid_address"},
};

// The clock system calls themselves for the clocks the simulated kernel
// keeps, made by the code under test during a call (an inline `syscall`
// copied from the kernel's clock_gettime_fallback()): they ask this
// machine's kernel, not the simulated one, whose answer the ABI's
// fallback() (the rewritten syscall sites of compiled code) gives. Refused,
// so that the finding names them rather than an answer that matches no
// simulated time. CPU-time clocks (the code timing itself) are made.
bool SimulatedClockSyscall(long nr, const long* a) {
  if (nr == SYS_gettimeofday || nr == SYS_time) return true;
  if (nr != SYS_clock_gettime && nr != SYS_clock_getres) return false;
  switch (a[0]) {
    case CLOCK_REALTIME:
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME:
    case CLOCK_REALTIME_ALARM:
    case CLOCK_BOOTTIME_ALARM:
    case CLOCK_TAI:
      return true;
    default:
      return false;
  }
}

const char* ClockSyscallName(long nr) {
  return nr == SYS_clock_gettime  ? "clock_gettime"
         : nr == SYS_gettimeofday ? "gettimeofday"
         : nr == SYS_time         ? "time"
                                  : "clock_getres";
}

// A mask a system call installs while it waits (rt_sigsuspend(), ppoll(),
// pselect6(), epoll_pwait()): refused, like rt_sigprocmask(), if it
// blocks a signal the interrupted context does not (SIGXCPU: the watchdog
// could no longer stop the wait).
bool RefusesWaitMask(const char* fn, long mask, long size, ucontext_t* uc) {
  if (mask == 0 || size != static_cast<long>(sizeof(uint64_t))) return false;
  uint64_t before;
  std::memcpy(&before, &uc->uc_sigmask, sizeof before);
  uint64_t set;
  std::memcpy(&set, reinterpret_cast<const void*>(mask), sizeof set);
  return (MaskAfter(before, SIG_SETMASK, set) & ~before) != 0 &&
         r::Refuse(fn, Arg::kNone, 0, false);
}

// Whether [addr, addr + len) reaches a vvar area or its guards: the
// readers' view is read-only, as user space's of the kernel's vvar pages.
bool TouchesVvar(long addr, long len) {
  const auto lo = static_cast<uintptr_t>(addr);
  const uintptr_t hi = lo + static_cast<uintptr_t>(len > 0 ? len : 1);
  return vdso::VvarPage::OverlapsGuardedArea(lo, hi);
}

// The system call `nr`, judged and, unless refused, made: its result.
long Judge(long nr, const long* a, ucontext_t* uc) {
  switch (nr) {
    case SYS_rt_sigaction:
      if (a[1] != 0 && r::Refuse("rt_sigaction", Arg::kSignal,
                                 static_cast<int>(a[0]), true)) {
        return -EPERM;
      }
      break;
    case SYS_rt_sigprocmask:
      return SigProcMask(a, uc);
    case SYS_sigaltstack:
      return SigAltStack(a, uc);
    case SYS_setrlimit:
      if (r::Refuse("setrlimit", Arg::kResource, static_cast<int>(a[0]),
                    true)) {
        return -EPERM;
      }
      break;
    case SYS_prlimit64:
      if (a[2] != 0 && ThisProcessId(a[0]) &&
          r::Refuse("prlimit64", Arg::kResource, static_cast<int>(a[1]),
                    true)) {
        return -EPERM;
      }
      break;
    case SYS_execve:
    case SYS_execveat:
      r::Refuse(nr == SYS_execve ? "execve" : "execveat", Arg::kNone, 0, true);
      return -EPERM;
    case SYS_vfork:
      return Clone(nr, a, CLONE_VM | CLONE_VFORK);
    case SYS_fork:
      return Clone(nr, a, 0);
    case SYS_clone:
      return Clone(nr, a, static_cast<uint64_t>(a[0]));
    case SYS_clone3: {
      uint64_t flags = 0;  // struct clone_args begins with its flags.
      if (a[0] != 0) std::memcpy(&flags, reinterpret_cast<void*>(a[0]), 8);
      return Clone(nr, a, flags);
    }
    case SYS_umask:
      // A refused call has nothing to answer but the mask now.
      if (r::Refuse("umask", Arg::kNone, 0, true)) {
        const long now = Raw(SYS_umask, 022);
        Raw(SYS_umask, now);
        return now;
      }
      break;
    case SYS_kill:
      if (r::StopsOrEnds(static_cast<int>(a[1])) &&
          r::ReachesThisProcess(static_cast<pid_t>(a[0])) &&
          r::Refuse("kill", Arg::kSignal, static_cast<int>(a[1]), true)) {
        return -EPERM;
      }
      break;
    case SYS_tgkill:
      if (r::StopsOrEnds(static_cast<int>(a[2])) && a[0] == getpid() &&
          r::Refuse("tgkill", Arg::kSignal, static_cast<int>(a[2]), true)) {
        return -EPERM;
      }
      break;
    case SYS_tkill:
      // Signal 0 to (this process, tid): whether tid is one of its threads.
      if (r::StopsOrEnds(static_cast<int>(a[1])) &&
          Raw(SYS_tgkill, getpid(), a[0], 0) == 0 &&
          r::Refuse("tkill", Arg::kSignal, static_cast<int>(a[1]), true)) {
        return -EPERM;
      }
      break;
    case SYS_prctl:
      if (r::RefusedPrctl(a[0]) &&
          r::Refuse("prctl", Arg::kPrctl, static_cast<int>(a[0]), true)) {
        return -EPERM;
      }
      break;
    case SYS_rt_sigqueueinfo:
      if (r::StopsOrEnds(static_cast<int>(a[1])) && ThisProcessId(a[0]) &&
          r::Refuse("rt_sigqueueinfo", Arg::kSignal, static_cast<int>(a[1]),
                    true)) {
        return -EPERM;
      }
      break;
    case SYS_rt_tgsigqueueinfo:
      if (r::StopsOrEnds(static_cast<int>(a[2])) && a[0] == getpid() &&
          r::Refuse("rt_tgsigqueueinfo", Arg::kSignal, static_cast<int>(a[2]),
                    true)) {
        return -EPERM;
      }
      break;
    case SYS_pidfd_send_signal:
      // Whichever process the descriptor names: a vDSO call stops none.
      if (r::StopsOrEnds(static_cast<int>(a[1])) &&
          r::Refuse("pidfd_send_signal", Arg::kSignal, static_cast<int>(a[1]),
                    true)) {
        return -EPERM;
      }
      break;
    case SYS_rt_sigsuspend:
      if (RefusesWaitMask("rt_sigsuspend", a[0], a[1], uc)) return -EPERM;
      break;
    case SYS_ppoll:
      if (RefusesWaitMask("ppoll", a[3], a[4], uc)) return -EPERM;
      break;
    case SYS_epoll_pwait:
    case SYS_epoll_pwait2:
      if (RefusesWaitMask("epoll_pwait", a[4], a[5], uc)) return -EPERM;
      break;
    case SYS_pselect6:
      // Its sixth argument points to {const sigset_t* ss; size_t ss_len}.
      if (a[5] != 0) {
        long pair[2];
        std::memcpy(pair, reinterpret_cast<const void*>(a[5]), sizeof pair);
        if (RefusesWaitMask("pselect6", pair[0], pair[1], uc)) return -EPERM;
      }
      break;
    case SYS_personality:
      // 0xffffffff asks without changing.
      if (static_cast<uint32_t>(a[0]) != 0xffffffffu &&
          r::Refuse("personality", Arg::kNone, 0, true)) {
        return -EPERM;
      }
      break;
    case SYS_mprotect:
    case SYS_pkey_mprotect:
    case SYS_munmap:
    case SYS_madvise:
    case SYS_mremap:
      if (TouchesVvar(a[0], a[1]) &&
          r::Refuse(nr == SYS_mprotect        ? "mprotect"
                    : nr == SYS_pkey_mprotect ? "pkey_mprotect"
                    : nr == SYS_munmap        ? "munmap"
                    : nr == SYS_madvise       ? "madvise"
                                              : "mremap",
                    Arg::kNone, 0, true)) {
        return -EPERM;
      }
      break;
    case SYS_mmap:
      if ((a[3] & (MAP_FIXED | MAP_FIXED_NOREPLACE)) != 0 &&
          TouchesVvar(a[0], a[1]) && r::Refuse("mmap", Arg::kNone, 0, true)) {
        return -EPERM;
      }
      break;
    case SYS_seccomp:
      if (r::Refuse("seccomp", Arg::kNone, 0, true)) return -EPERM;
      break;
    case SYS_arch_prctl:
      // The thread pointer: vdsolab's thread-local state, its own included.
      if ((a[0] == ARCH_SET_FS || a[0] == ARCH_SET_GS) &&
          r::Refuse("arch_prctl", Arg::kArchPrctl, static_cast<int>(a[0]),
                    false)) {
        return -EPERM;
      }
      break;
    case SYS_rt_sigreturn:
      // Not the C library's (that one is let through): made from here it
      // would return from this handler's frame instead.
      r::Refuse("rt_sigreturn", Arg::kNone, 0, false);
      return -EPERM;
    case SYS_exit_group:
      ExitCalled(static_cast<int>(a[0]));  // Inside a call: does not return.
      break;
    case SYS_exit:
      ThreadExitCalled();  // The same.
      break;
    default:
      for (const Named& n : kRefusedAlways) {
        if (n.nr == nr && r::Refuse(n.name, Arg::kNone, 0, true)) {
          return -EPERM;
        }
      }
      // In a call only: a thread the code started may read the clock.
      if (SimulatedClockSyscall(nr, a) &&
          r::Refuse(ClockSyscallName(nr), Arg::kNone, 0, false)) {
        return -EPERM;
      }
      break;
  }
  return Raw(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

// Valgrind runs the program on its own CPU and passes the prctl() to the
// kernel, which then traps valgrind's own system calls: the process dies
// of SIGSYS. Its preload library in LD_PRELOAD says it is there.
bool UnderValgrind() {
  const char* preload = std::getenv("LD_PRELOAD");
  return preload != nullptr && std::strstr(preload, "vgpreload") != nullptr;
}

}  // namespace

bool EnableSyscallDispatch() {
  static const uintptr_t signal_return =
      UnderValgrind() ? 0 : FindSignalReturn();
  if (signal_return == 0) return false;
  t_dispatch = kDispatchAllow;
  // The kernel compares the address after the `syscall` instruction.
  return Raw(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
             static_cast<long>(signal_return), sizeof kRestoreRt + 1,
             reinterpret_cast<long>(&t_dispatch)) == 0;
}

void DisableSyscallDispatch() {
  Raw(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
  t_dispatch = kDispatchAllow;
}

bool OnDispatchedSyscall(siginfo_t* info, void* uctx) {
  if (info->si_code != kSysUserDispatch) return false;
  // From here this thread's system calls are made, not dispatched; until
  // the return, which the kernel lets through (FindSignalReturn()).
  t_dispatch = kDispatchAllow;
  auto* uc = static_cast<ucontext_t*>(uctx);
  greg_t* regs = uc->uc_mcontext.gregs;
  const long a[6] = {regs[REG_RDI], regs[REG_RSI], regs[REG_RDX],
                     regs[REG_R10], regs[REG_R8],  regs[REG_R9]};
  regs[REG_RAX] = Judge(info->si_syscall, a, uc);
  // Dispatch traps only while the selector blocks: it did before.
  t_dispatch = kDispatchBlock;
  return true;
}

}  // namespace vdsolab::variants::call_guard_internal
