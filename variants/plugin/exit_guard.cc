// exit(), _exit() and _Exit() for the whole process, so that foreign code
// under test that calls one of them inside a guarded call ends that call
// as a fault (call_guard.h) instead of ending vdsolab with the status it
// chose: a plugin calling exit(0) would otherwise pass every check. The
// linker exports these from the executable (BUILD: --export-dynamic-symbol)
// so that a plugin's references bind here, not to libc; outside a guarded
// call each forwards to libc's.

#include <dlfcn.h>

#include <cstdlib>

#include "variants/plugin/call_guard.h"

namespace {

using ExitFn = void (*)(int);

[[noreturn]] void Forward(const char* name, int status) {
  // RTLD_NEXT: the definition after this object's, libc's.
  auto real = reinterpret_cast<ExitFn>(dlsym(RTLD_NEXT, name));
  if (real != nullptr) real(status);
  __builtin_trap();  // No libc exit: nothing sane is left to do.
}

}  // namespace

extern "C" {

[[noreturn]] void exit(int status) noexcept {
  vdsolab::variants::call_guard_internal::ExitCalled(status);
  Forward("exit", status);
}

[[noreturn]] void _exit(int status) noexcept {
  vdsolab::variants::call_guard_internal::ExitCalled(status);
  Forward("_exit", status);
}

[[noreturn]] void _Exit(int status) noexcept {
  vdsolab::variants::call_guard_internal::ExitCalled(status);
  Forward("_Exit", status);
}

}  // extern "C"
