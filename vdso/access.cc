#include "vdso/access.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace vdsolab::vdso {

ClockResult NativeAccess::Fallback(ClockId clock) const {
  struct timespec ts;
  long ret = syscall(SYS_clock_gettime, clock, &ts);
  if (ret != 0) return ClockResult::Error(-errno);
  return ClockResult::Ok(Timespec64{ts.tv_sec, ts.tv_nsec});
}

}  // namespace vdsolab::vdso
