#include "vdso/access.h"

#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "vdso/datapage.h"

namespace vdsolab::vdso {

ClockResult NativeAccess::Fallback(ClockId clock) const {
  struct timespec ts;
  long ret = syscall(SYS_clock_gettime, clock, &ts);
  if (ret != 0) return ClockResult::Error(-errno);
  return ClockResult::Ok(Timespec64{ts.tv_sec, ts.tv_nsec});
}

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? absl::StrFormat("SIG%s", abbrev)
                           : absl::StrFormat("signal %d", signal);
}

std::string FaultPlace(const CallFault& fault) {
  if (!fault.has_address) return "";
  if (fault.object != nullptr) {
    std::string place =
        absl::StrFormat("%s%c%#x", fault.object,
                        fault.address_below ? '-' : '+', fault.address);
    // A page of the vvar area the kernel leaves unmapped: say which, as the
    // kernel's answer there is SIGBUS rather than this process's SIGSEGV.
    if (std::string_view(fault.object) == "vvar" && !fault.address_below) {
      if (const char* what = VvarUnreadablePage(fault.address)) {
        absl::StrAppendFormat(&place, ", %s (the kernel: SIGBUS on a load)",
                              what);
      }
    }
    return place;
  }
  return absl::StrFormat("%#x", fault.address);
}

std::string FaultCause(const CallFault& fault) {
  if (fault.called != nullptr) return fault.called;
  if (fault.exit_status >= 0) {
    return absl::StrFormat("exit(%d)", fault.exit_status);
  }
  return SignalName(fault.signal);
}

std::string DescribeFault(const CallFault& fault) {
  if (fault.kind == CallFault::Kind::kSpin) {
    if (fault.returned && fault.blocked) {
      return absl::StrFormat(
          "blocked for over %.0f ms before it returned: asleep in the kernel "
          "(a quarter of the call's time bound)",
          fault.seconds * 1000);
    }
    if (fault.returned) {
      return absl::StrFormat(
          "ran for over %.0f ms before it returned: a spin (a quarter of "
          "the call's time bound)",
          fault.seconds * 1000);
    }
    return absl::StrFormat("%s for %.1f s: stopped by the watchdog",
                           fault.blocked ? "blocked" : "spun", fault.seconds);
  }
  if (fault.called != nullptr) {
    const std::string place = FaultPlace(fault);
    return absl::StrCat(fault.returned ? "" : "called ", fault.called,
                        place.empty() ? "" : " at address ", place);
  }
  if (fault.exit_status >= 0) {
    return absl::StrFormat("called exit(%d)", fault.exit_status);
  }
  const std::string place = FaultPlace(fault);
  if (place.empty())
    return absl::StrCat("crashed (", SignalName(fault.signal), ")");
  return absl::StrCat("crashed (", SignalName(fault.signal), " at ", place,
                      ")");
}

}  // namespace vdsolab::vdso
