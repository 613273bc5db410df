// File: kselftest/sim_host.h
//
// A machine for running tools/testing/selftests/timers in simulated time:
// a TSC that is an exact function of true time, the timekeeper model ticking
// at HZ, its updates published to a vvar page, clock_gettime() through the
// upstream vDSO reader (falling back to the syscall model), and the
// syscalls the selftests make: adjtimex(), clock_adjtime(),
// settimeofday(), sleeping, suspend, and absolute CLOCK_REALTIME timers the
// way the hrtimer code expires them. Nothing here needs root, and a
// minute of the selftests' time takes milliseconds.

#ifndef VDSOLAB_KSELFTEST_SIM_HOST_H_
#define VDSOLAB_KSELFTEST_SIM_HOST_H_

#include <array>
#include <cstdint>
#include <memory>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/timespec.h"
#include "timekeeper/profile.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/vsyscall.h"
#include "vdso/vvar_page.h"

namespace vdsolab::kselftest {

struct SimHostOptions {
  uint64_t tsc_hz = 2600000000;  // The TSC's true frequency.
  uint32_t tsc_khz = 2600000;    // What the kernel registers.
  int hz = 250;                  // CONFIG_HZ
  Timespec64 boot_realtime{1764460800, 0};
  timekeeper::TimekeeperProfile profile;
  bool nonstop_tsc = false;        // Counts through suspend.
  uint64_t read_cost_ns = 30;      // One vDSO clock_gettime().
  uint64_t syscall_cost_ns = 400;  // One adjtimex() or settimeofday().
  // The hrtimer code applies the leap second's offset early (4.2+).
  bool hrtimer_leap_adjust = true;
};

class SimHost {
 public:
  explicit SimHost(const SimHostOptions& options = {});
  // Adds now_ns() to the process's simulated total, which the test binary
  // prints at exit (docs/kselftest-map.md's simulated-time column).
  ~SimHost();
  SimHost(const SimHost&) = delete;
  SimHost& operator=(const SimHost&) = delete;

  uint64_t now_ns() const { return now_ns_; }
  // The TSC at the current true time.
  uint64_t Counter() const { return CounterAt(now_ns_); }
  uint64_t CounterAt(uint64_t t_ns) const;

  // Lets true time pass, ticking at HZ (sleep(), usleep(), nanosleep()).
  void Sleep(uint64_t ns);

  // clock_gettime() as user space calls it: the vDSO, which falls back to
  // the syscall for clocks it does not serve. Takes read_cost_ns.
  ClockResult Gettime(ClockId clock);
  // adjtimex(): 0..5 or -errno. Takes syscall_cost_ns.
  int Adjtimex(timekeeper::Timex* txc);
  // clock_adjtime(): CLOCK_REALTIME (as adjtimex()) or an aux clock.
  int ClockAdjtime(ClockId clock, timekeeper::Timex* txc);
  int Settimeofday(const Timespec64& ts);
  // Suspend to RAM for `ns` of true time, then resume.
  void Suspend(uint64_t ns, Timespec64 persistent_now = {});

  // timer_settime(CLOCK_REALTIME, TIMER_ABSTIME, deadline) from now: runs
  // time forward to the true time the hrtimer code expires it (the clock
  // event programmed in MONOTONIC from the cached offsets, each interrupt
  // re-reading them with ktime_get_update_offsets_now()) and returns with
  // now_ns() there. Gives up after `limit_ns` (returns false).
  bool SleepUntilRealtimeTimer(const Timespec64& deadline, uint64_t limit_ns);

  timekeeper::Timekeeping& tk() { return *tk_; }
  const SimHostOptions& options() const { return options_; }

 private:
  void RunTo(uint64_t t_ns);  // Ticks up to true time t.

  SimHostOptions options_;
  uint64_t counter_start_ = uint64_t{1} << 36;
  uint64_t tick_ns_;
  uint64_t next_tick_ = 1;
  uint64_t now_ns_ = 0;
  std::unique_ptr<vdso::VvarPage> page_;
  std::unique_ptr<timekeeper::VvarPublisher> publisher_;
  std::unique_ptr<timekeeper::Timekeeping> tk_;
  std::array<timekeeper::Timekeeper, kMaxAuxClocks> aux_;
};

}  // namespace vdsolab::kselftest

#endif  // VDSOLAB_KSELFTEST_SIM_HOST_H_
