// 5.3's update_vsyscall() added offs_boot as ns << shift, which wraps in
// u64 once the total sleep passes 2^64 >> shift ns (1099.5 s at shift 24);
// b99328a60a48 (5.4) publishes monotonic_to_boot instead
// (docs/findings.md). After a 20-minute suspend the vDSO's CLOCK_BOOTTIME
// disagrees with the syscall's, and goes back across the suspend.

#include <gtest/gtest.h>

#include "absl/strings/str_format.h"
#include "history/history.h"
#include "timekeeper/posix_clocks.h"

namespace vdsolab::history {
namespace {

bool BoottimeWrong(kselftest::SimHost& host, std::string* what) {
  host.Sleep(2000000000);
  const ClockResult before = host.Gettime(kClockBoottime);
  host.Suspend(uint64_t{1200} * 1000000000);  // 20 minutes asleep.
  host.Sleep(1000000);
  const ClockResult vdso = host.Gettime(kClockBoottime);
  timekeeper::SyscallContext ctx;
  ctx.cycles = host.Counter();
  const ClockResult sys =
      timekeeper::SysClockGettime(host.tk().timekeeper(), kClockBoottime, ctx);
  *what =
      absl::StrFormat("BOOTTIME before suspend %s, after: vDSO %s, syscall %s",
                      FormatTimespec(before.ts), FormatTimespec(vdso.ts),
                      FormatTimespec(sys.ts));
  return !(vdso == sys) || TimespecLess(vdso.ts, before.ts);
}

TEST(BoottimeShift, The53ArithmeticWrapsAfterALongSuspend) {
  kselftest::SimHostOptions on;
  on.nonstop_tsc = true;
  on.profile.defects.vsyscall_boottime_shift_overflow = true;
  const Verdict v_on = RunCheck(on, BoottimeWrong);
  Print("5.3 BOOTTIME << shift", "on", v_on);
  kselftest::SimHostOptions off;
  off.nonstop_tsc = true;
  const Verdict v_off = RunCheck(off, BoottimeWrong);
  Print("5.3 BOOTTIME << shift", "off", v_off);
  EXPECT_TRUE(v_on.caught);
  EXPECT_FALSE(v_off.caught) << v_off.what;
}

}  // namespace
}  // namespace vdsolab::history
