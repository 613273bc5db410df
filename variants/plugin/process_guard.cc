// The process-level calls a vDSO call cannot make, for the whole process
// (call_guard.h; signal_guard.cc does signals and limits): replacing the
// process image (the execve() family: vdsolab ended with the new
// program's status, `execl("/bin/true")` a silent exit 0), starting
// another (posix_spawn(), system(), popen(), vfork(), whose child shares
// vdsolab's memory: its _exit() jumped back into the parent's frames),
// stopping or ending this one by a signal the user's (raise(SIGSTOP): a
// hang; raise(SIGTERM): reported as the user's interrupt), changing the
// file mode mask (the replay file was written mode 0000) or entering a
// seccomp mode (every later system call of vdsolab's ended it). Inside a
// guarded call each is refused (-1/EPERM) and the call is a finding when
// it returns; outside one, and for vdsolab's own code, they pass through.

#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "variants/plugin/internal/refuse.h"

namespace r = ::vdsolab::variants::refuse_internal;
using r::Arg;

namespace {

// The argument list of execl() and its kin, up to its NULL.
std::vector<char*> ArgList(const char* arg0, va_list ap) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(arg0));
  while (argv.back() != nullptr) argv.push_back(va_arg(ap, char*));
  return argv;
}

}  // namespace

// The definitions repeat glibc's declarations exactly.
extern "C" {

VDSOLAB_UNCHECKED int execve(const char* path, char* const argv[],
                             char* const envp[]) noexcept {
  if (r::Refuse("execve", Arg::kNone, 0, true)) return -1;
  return static_cast<int>(syscall(SYS_execve, path, argv, envp));
}

VDSOLAB_UNCHECKED int execv(const char* path, char* const argv[]) noexcept {
  if (r::Refuse("execv", Arg::kNone, 0, true)) return -1;
  return static_cast<int>(syscall(SYS_execve, path, argv, environ));
}

int execvp(const char* file, char* const argv[]) noexcept {
  if (r::Refuse("execvp", Arg::kNone, 0, true)) return -1;
  using Fn = int (*)(const char*, char* const[]);
  static const Fn next = r::Next<Fn>("execvp");
  return next(file, argv);
}

int execvpe(const char* file, char* const argv[], char* const envp[]) noexcept {
  if (r::Refuse("execvpe", Arg::kNone, 0, true)) return -1;
  using Fn = int (*)(const char*, char* const[], char* const[]);
  static const Fn next = r::Next<Fn>("execvpe");
  return next(file, argv, envp);
}

int execl(const char* path, const char* arg, ...) noexcept {
  if (r::Refuse("execl", Arg::kNone, 0, true)) return -1;
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = ArgList(arg, ap);
  va_end(ap);
  return static_cast<int>(syscall(SYS_execve, path, argv.data(), environ));
}

int execlp(const char* file, const char* arg, ...) noexcept {
  if (r::Refuse("execlp", Arg::kNone, 0, true)) return -1;
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = ArgList(arg, ap);
  va_end(ap);
  using Fn = int (*)(const char*, char* const[]);
  static const Fn next = r::Next<Fn>("execvp");
  return next(file, argv.data());
}

int execle(const char* path, const char* arg, ...) noexcept {
  if (r::Refuse("execle", Arg::kNone, 0, true)) return -1;
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = ArgList(arg, ap);
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  return static_cast<int>(syscall(SYS_execve, path, argv.data(), envp));
}

int fexecve(int fd, char* const argv[], char* const envp[]) noexcept {
  if (r::Refuse("fexecve", Arg::kNone, 0, true)) return -1;
  using Fn = int (*)(int, char* const[], char* const[]);
  static const Fn next = r::Next<Fn>("fexecve");
  return next(fd, argv, envp);
}

int posix_spawn(pid_t* __restrict pid, const char* __restrict path,
                const posix_spawn_file_actions_t* file_actions,
                const posix_spawnattr_t* __restrict attrp,
                char* const argv[__restrict_arr],
                char* const envp[__restrict_arr]) {
  if (r::Refuse("posix_spawn", Arg::kNone, 0, true)) return EPERM;
  using Fn = int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*,
                     const posix_spawnattr_t*, char* const[], char* const[]);
  static const Fn next = r::Next<Fn>("posix_spawn");
  return next(pid, path, file_actions, attrp, argv, envp);
}

int posix_spawnp(pid_t* pid, const char* file,
                 const posix_spawn_file_actions_t* file_actions,
                 const posix_spawnattr_t* attrp, char* const argv[],
                 char* const envp[]) {
  if (r::Refuse("posix_spawnp", Arg::kNone, 0, true)) return EPERM;
  using Fn = int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*,
                     const posix_spawnattr_t*, char* const[], char* const[]);
  static const Fn next = r::Next<Fn>("posix_spawnp");
  return next(pid, file, file_actions, attrp, argv, envp);
}

int system(const char* command) {
  if (r::Refuse("system", Arg::kNone, 0, true)) return -1;
  using Fn = int (*)(const char*);
  static const Fn next = r::Next<Fn>("system");
  return next(command);
}

FILE* popen(const char* command, const char* modes) {
  if (r::Refuse("popen", Arg::kNone, 0, true)) return nullptr;
  using Fn = FILE* (*)(const char*, const char*);
  static const Fn next = r::Next<Fn>("popen");
  return next(command, modes);
}

// A vfork() wrapper cannot return into its caller's frame in the child,
// so outside a guarded call it is fork(), which POSIX allows.
pid_t vfork() noexcept {
  if (r::Refuse("vfork", Arg::kNone, 0, true)) return -1;
  return fork();
}

VDSOLAB_UNCHECKED mode_t umask(mode_t mask) noexcept {
  // A call that is refused has nothing to answer but the mask now.
  if (r::Refuse("umask", Arg::kNone, 0, true)) {
    const auto now = static_cast<mode_t>(syscall(SYS_umask, 022));
    syscall(SYS_umask, now);
    return now;
  }
  return static_cast<mode_t>(syscall(SYS_umask, mask));
}

VDSOLAB_UNCHECKED int raise(int sig) noexcept {
  if (r::StopsOrEnds(sig) && r::Refuse("raise", Arg::kSignal, sig, true)) {
    return -1;
  }
  return static_cast<int>(syscall(SYS_tgkill, getpid(), gettid(), sig));
}

VDSOLAB_UNCHECKED int kill(__pid_t pid, int sig) noexcept {
  if (r::StopsOrEnds(sig) && r::ReachesThisProcess(pid) &&
      r::Refuse("kill", Arg::kSignal, sig, true)) {
    return -1;
  }
  return static_cast<int>(syscall(SYS_kill, pid, sig));
}

VDSOLAB_UNCHECKED int killpg(__pid_t pgrp, int sig) noexcept {
  if (r::StopsOrEnds(sig) && (pgrp == 0 || pgrp == getpgrp()) &&
      r::Refuse("killpg", Arg::kSignal, sig, true)) {
    return -1;
  }
  if (pgrp < 0) {
    errno = EINVAL;
    return -1;
  }
  return static_cast<int>(syscall(SYS_kill, -pgrp, sig));
}

int pthread_kill(pthread_t thread, int sig) noexcept {
  if (r::StopsOrEnds(sig) &&
      r::Refuse("pthread_kill", Arg::kSignal, sig, true)) {
    return EPERM;
  }
  using Fn = int (*)(pthread_t, int);
  static const Fn next = r::Next<Fn>("pthread_kill");
  return next(thread, sig);
}

// seccomp's strict and filter modes (every later system call of vdsolab's
// outside the filter ended it: SIGKILL, not a finding), and the other
// options refuse.h's RefusedPrctl() names.
VDSOLAB_UNCHECKED int prctl(int option, ...) noexcept {
  va_list ap;
  va_start(ap, option);
  const unsigned long a2 = va_arg(ap, unsigned long);
  const unsigned long a3 = va_arg(ap, unsigned long);
  const unsigned long a4 = va_arg(ap, unsigned long);
  const unsigned long a5 = va_arg(ap, unsigned long);
  va_end(ap);
  if (r::RefusedPrctl(option) &&
      r::Refuse("prctl", Arg::kPrctl, option, true)) {
    return -1;
  }
  return static_cast<int>(syscall(SYS_prctl, option, a2, a3, a4, a5));
}

}  // extern "C"
