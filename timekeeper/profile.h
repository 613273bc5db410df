// File: timekeeper/profile.h
//
// Which kernel the timekeeper model behaves as: the era's choices where
// kernel/time/timekeeping.c, clocksource.c and vsyscall.c changed behaviour,
// and defects the kernel once shipped, switched back on for the history
// tests (docs/findings.md). The default profile is the model as it always
// was: mainline 6.15-6.18.

#ifndef VDSOLAB_TIMEKEEPER_PROFILE_H_
#define VDSOLAB_TIMEKEEPER_PROFILE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "timekeeper/ntp.h"

namespace vdsolab::timekeeper {

// How clocksource_delta() tells a counter behind cycle_last (negative
// motion) from a long interval.
enum class NegativeMotion {
  // 4.x-6.12 on x86 (CONFIG_CLOCKSOURCE_VALIDATE_LAST_CYCLE, which 6.12's
  // "timekeeping: Always check for negative motion" made unconditional):
  // a masked delta with the MSB set is negative and reads as 0.
  kMsb,
  // "clocksource: Make negative motion detection more robust" (6.13,
  // Dec 2024): deltas above max_raw_delta (7/8 of the mask) read as 0.
  kMaxRawDelta,
};

// Defects of timekeeping.c, clocksource.c and vsyscall.c the history
// tests switch back on (the NTP ones are NtpQuirks).
struct TimekeepingDefects {
  // 757b000f7b93 "timekeeping: Fix possible inconsistencies in _COARSE
  // clockids" (6.15-rc1, reverted by 324a2219ba38): adjtimex()'s
  // TK_ADV_FREQ forwards the timekeeper to now and zeroes ntp_error before
  // the new mult applies, moving the accumulation period and losing the
  // NTP error (Miroslav Lichvar's regression report).
  bool adjtimex_forwards_and_clears_error = false;
  // Before 6a669ee8a790 "timekeeping: Prevent time going backwards on
  // resume" (2.6.23): suspend does not forward the timekeeper, so resume's
  // re-base of cycle_last to now drops the time since the last tick.
  bool suspend_without_forward = false;
  // Before b99328a60a48 "timekeeping/vsyscall: Prevent math overflow in
  // BOOTTIME update" (5.4): update_vsyscall() adds offs_boot as ns << shift,
  // which wraps in u64 once the total sleep passes 2^64 >> shift ns (about
  // 18 minutes at shift 24).
  bool vsyscall_boottime_shift_overflow = false;
  // A clocksource registered with max_raw_delta 0 (its registration never
  // ran clocksource_update_max_deferment()): with 6.13's clocksource_delta()
  // every delta counts as negative motion and time stands still.
  bool clocksource_max_raw_delta_zero = false;

  friend bool operator==(const TimekeepingDefects&,
                         const TimekeepingDefects&) = default;
};

struct TimekeeperProfile {
  std::string era = "6.18";  // The mainline release it behaves as.
  NegativeMotion negative_motion = NegativeMotion::kMaxRawDelta;
  // 6.10+: timekeeping_forward_now() accumulates in max_cycles chunks, so
  // a long interval cannot overflow delta * mult.
  bool chunked_forward = true;
  // 6.15+: the coarse clocks read coarse_nsec, refreshed only when time is
  // accumulated or set; before, xtime_nsec >> shift at the last update.
  bool coarse_nsec = true;
  // 6.13+ (the shadow timekeeper rework of do_settimeofday64() and
  // timekeeping_inject_offset()): a refused settime or offset injection
  // restores the shadow and changes nothing. Before, the error path still
  // published the forwarded timekeeper with TK_CLEAR_NTP | TK_MIRROR |
  // TK_CLOCK_WAS_SET, so a refused call cleared the NTP state.
  bool set_error_restores_shadow = true;
  // 6.17+: POSIX aux clocks (CLOCK_AUX 16..23) can be enabled.
  bool aux_clocks = true;
  // b7befd6d9120 "timekeeping: Account for monotonicity adjustment in
  // ntp_error" (tip, July 2026; in the stable trees Debian's 6.1 and 6.12
  // sources come from): timekeeping_apply_adjustment() adds the xtime_nsec
  // correction to ntp_error. The model has always had it; false gives
  // timekeeping_apply_adjustment() as mainline 4.19-7.0 released it.
  bool apply_adjustment_ntp_error = true;
  // Before the aux-clock rework of do_adjtimex() (6.16/6.17, which reads
  // the time before taking the lock): the read-back's time is read after
  // ADJ_SETOFFSET's injection, so it includes the offset. Found by
  // conform-model against Debian's 6.1 and 6.12 trees (docs/ktime.md).
  bool adjtimex_time_after_setoffset = false;
  TimekeepingDefects defects;
  NtpQuirks ntp;

  friend bool operator==(const TimekeeperProfile&,
                         const TimekeeperProfile&) = default;
};

// The eras a profile can name, oldest first: "5.3", "6.1", "6.10",
// "6.13", "6.15", "6.18".
const std::vector<std::string>& KnownEras();

// The profile of a mainline release, or InvalidArgument naming the eras.
absl::StatusOr<TimekeeperProfile> ProfileForEra(std::string_view era);

// The defects a profile can switch on, by the names scenario files use.
const std::vector<std::string>& KnownDefects();
// Switches the named defect on; InvalidArgument for an unknown name.
absl::Status EnableDefect(std::string_view name, TimekeeperProfile* profile);

// Later mainline changes a stable tree carries on top of its era (the
// stable trees' backports): "max-raw-delta" is 6.13's "clocksource: Make
// negative motion detection more robust", which Debian's 6.12.117 and
// 6.12.118 have.
const std::vector<std::string>& KnownBackports();
absl::Status ApplyBackport(std::string_view name, TimekeeperProfile* profile);

}  // namespace vdsolab::timekeeper

#endif  // VDSOLAB_TIMEKEEPER_PROFILE_H_
