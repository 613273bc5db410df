// File: variants/plugin/internal/refuse.h
//
// What signal_guard.cc's and process_guard.cc's interposed functions share:
// whether a call is refused (call_guard_internal::RefusesChange()), its
// record ("sigaction(SIGSEGV)", "execve()") when it is, and libc's
// definition to forward to.

#ifndef VDSOLAB_VARIANTS_PLUGIN_INTERNAL_REFUSE_H_
#define VDSOLAB_VARIANTS_PLUGIN_INTERNAL_REFUSE_H_

#include <dlfcn.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "variants/plugin/call_guard.h"

// The interposed functions are not instrumented by AddressSanitizer: its
// runtime calls setrlimit() and sigaction() while it starts, before its
// shadow memory exists, and an instrumented frame writes there.
#define VDSOLAB_UNCHECKED __attribute__((no_sanitize_address))

namespace vdsolab::variants::refuse_internal {

// How a refused call's argument is named: "SIGSEGV", "RLIMIT_FSIZE",
// "SIG_BLOCK", or nothing ("execve()").
// "CLONE_VM|CLONE_VFORK", "PR_SET_SECCOMP", "ARCH_SET_FS".
enum class Arg {
  kNone,
  kSignal,
  kResource,
  kHow,
  kCloneFlags,
  kPrctl,
  kArchPrctl
};

// libc's definition of `name` (RTLD_NEXT: the one after the executable's),
// for the functions nothing calls while a sanitizer runtime starts or in
// a signal handler, where dlsym() is not safe. Looked up at each caller's
// first use.
template <class Fn>
Fn Next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// Signals that stop the process (the whole of vdsolab waits for ever) or
// end it the way its user does (SIGINT, SIGTERM, SIGHUP, SIGQUIT: a
// report would say the user interrupted it; SIGKILL: no report).
VDSOLAB_UNCHECKED inline bool StopsOrEnds(int sig) {
  switch (sig) {
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
    case SIGKILL:
    case SIGTERM:
    case SIGINT:
    case SIGHUP:
    case SIGQUIT:
      return true;
    default:
      return false;
  }
}

// Whether kill(pid, ...) reaches this process: itself, its group, or
// every process it may signal.
VDSOLAB_UNCHECKED inline bool ReachesThisProcess(pid_t pid) {
  return pid == 0 || pid == -1 || pid == getpid() || pid == -getpgrp();
}

// prctl() options that change the process or thread in a way vdsolab's own
// work can feel (the interposed prctl() and syscall_guard.cc ask) (PR_SET_TSC
// makes its rdtsc fault; PR_SET_SECCOMP and PR_SET_SYSCALL_USER_DISPATCH would
// undo this file's containment); the rest (the PR_GET_ queries, PR_SET_NAME)
// are made.
VDSOLAB_UNCHECKED inline bool RefusedPrctl(long option) {
  switch (option) {
    case PR_SET_PDEATHSIG:
    case PR_SET_DUMPABLE:
    case PR_SET_UNALIGN:
    case PR_SET_KEEPCAPS:
    case PR_SET_FPEMU:
    case PR_SET_FPEXC:
    case PR_SET_TIMING:
    case PR_SET_ENDIAN:
    case PR_SET_SECCOMP:
    case PR_CAPBSET_DROP:
    case PR_SET_TSC:
    case PR_SET_SECUREBITS:
    case PR_SET_TIMERSLACK:
    case PR_SET_MM:
    case PR_SET_CHILD_SUBREAPER:
    case PR_SET_NO_NEW_PRIVS:
    case PR_SET_THP_DISABLE:
    case PR_SET_FP_MODE:
    case PR_CAP_AMBIENT:
    case PR_SET_SPECULATION_CTRL:
    case PR_SET_SYSCALL_USER_DISPATCH:
      return true;
    default:
      return false;
  }
}

// Records `fn(arg)` as refused (the call's finding, or one line for a
// thread the code under test started); errno EPERM. Out of line: rare, and
// only after the guard is installed.
void Refused(const char* fn, Arg kind, int arg);

// Whether to refuse `fn(arg)`, then recorded. Loads only when it is not:
// vdsolab's own signal handlers call these (marked with OwnSignalHandler,
// so that one interrupting a plugin's call is not taken for the plugin).
// Who is calling is not told by the return address: a plugin's function
// that ends in a tail call of signal() returns to its own caller, ld.so
// for a constructor or vdsolab for a call.
[[gnu::always_inline]] inline bool Refuse(const char* fn, Arg kind, int arg,
                                          bool process_wide) {
  if (!call_guard_internal::RefusesChange(process_wide)) [[likely]] {
    return false;
  }
  Refused(fn, kind, arg);
  return true;
}

}  // namespace vdsolab::variants::refuse_internal

#endif  // VDSOLAB_VARIANTS_PLUGIN_INTERNAL_REFUSE_H_
