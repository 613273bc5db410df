#include "vdso/access.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cerrno>

namespace vdsolab::vdso {

uint64_t NativeAccess::ReadTsc() const {
  // rdtsc_ordered() picks rdtscp where the CPU has it; it waits for earlier
  // loads (the seq and page loads before it) to complete.
  unsigned int aux;
  return __rdtscp(&aux);
}

uint64_t NativeAccess::ReadTscp() const {
  unsigned int aux;
  return __rdtscp(&aux);
}

uint64_t NativeAccess::ReadTscPlain() const { return __rdtsc(); }

ClockResult NativeAccess::Fallback(ClockId clock) const {
  struct timespec ts;
  long ret = syscall(SYS_clock_gettime, clock, &ts);
  if (ret != 0) return ClockResult::Error(-errno);
  return ClockResult::Ok(Timespec64{ts.tv_sec, ts.tv_nsec});
}

}  // namespace vdsolab::vdso
