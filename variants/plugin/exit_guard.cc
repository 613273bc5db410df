// exit(), _exit(), _Exit(), quick_exit(), pthread_exit() and pthread_create()
// for the whole
// process, so that foreign code
// under test that calls one of them inside a guarded call ends that call
// as a fault (call_guard.h) instead of ending vdsolab with the status it
// chose: a plugin calling exit(0) would otherwise pass every check. The
// linker exports these from the executable (BUILD: --export-dynamic-symbol)
// so that a plugin's references bind here, not to libc; outside a guarded
// call each forwards to libc's.

#include <dlfcn.h>
#include <pthread.h>

#include <cerrno>
#include <cstdlib>
#include <new>

#include "variants/plugin/call_guard.h"

namespace {

using ExitFn = void (*)(int);

[[noreturn]] void Forward(const char* name, int status) {
  // RTLD_NEXT: the definition after this object's, libc's.
  auto real = reinterpret_cast<ExitFn>(dlsym(RTLD_NEXT, name));
  if (real != nullptr) real(status);
  __builtin_trap();  // No libc exit: nothing sane is left to do.
}

// A thread the code under test starts in a guarded call: marked first
// (call_guard_internal::MarkForeignThread()), then the plugin's routine.
struct ForeignStart {
  void* (*routine)(void*);
  void* arg;
};
void* StartForeign(void* p) {
  const ForeignStart start = *static_cast<ForeignStart*>(p);
  delete static_cast<ForeignStart*>(p);
  vdsolab::variants::call_guard_internal::MarkForeignThread();
  return start.routine(start.arg);
}

}  // namespace

// The definitions repeat libc's declarations exactly (clang refuses any
// difference): noreturn comes from the first declaration, in the headers;
// noexcept where glibc's __THROW puts it (not on _exit() or
// pthread_exit()).
extern "C" {

void exit(int status) noexcept {
  vdsolab::variants::call_guard_internal::ExitCalled(status);
  Forward("exit", status);
}

void _exit(int status) {
  vdsolab::variants::call_guard_internal::ExitCalled(status);
  Forward("_exit", status);
}

void _Exit(int status) noexcept {
  vdsolab::variants::call_guard_internal::ExitCalled(status);
  Forward("_Exit", status);
}

// libc's quick_exit() reaches _exit() inside libc, past the interposed one.
void quick_exit(int status) noexcept {
  vdsolab::variants::call_guard_internal::ExitCalled(status);
  Forward("quick_exit", status);
}

// vdsolab's own threads (std::thread) pass straight through.
int pthread_create(pthread_t* __restrict thread,
                   const pthread_attr_t* __restrict attr,
                   void* (*routine)(void*), void* __restrict arg) noexcept {
  using CreateFn =
      int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const auto real =
      reinterpret_cast<CreateFn>(dlsym(RTLD_NEXT, "pthread_create"));
  if (real == nullptr) return EAGAIN;
  namespace cg = vdsolab::variants::call_guard_internal;
  // The clone() a thread's start makes cannot be made from a signal
  // handler (the new thread would start there, on its own stack): made
  // here, not dispatched. The thread itself runs without dispatch.
  const char dispatch = cg::t_dispatch;
  cg::t_dispatch = cg::kDispatchAllow;
  int r;
  if (!cg::StartedInForeignCall()) {
    r = real(thread, attr, routine, arg);
  } else if (auto* start = new (std::nothrow) ForeignStart{routine, arg}) {
    r = real(thread, attr, StartForeign, start);
    if (r != 0) delete start;
  } else {
    r = EAGAIN;
  }
  cg::t_dispatch = dispatch;
  return r;
}

void pthread_exit(void* value) {
  vdsolab::variants::call_guard_internal::ThreadExitCalled();
  using ThreadExitFn = void (*)(void*);
  auto real = reinterpret_cast<ThreadExitFn>(dlsym(RTLD_NEXT, "pthread_exit"));
  if (real != nullptr) real(value);
  __builtin_trap();
}

}  // extern "C"
