// File: timekeeper/timekeeping.h
//
// A model of kernel/time/timekeeping.c (mainline 6.15-6.18 by default; older
// eras through TimekeeperProfile): per timekeeper a shadow that writers
// change and then publish, with tk_setup_internals(), timekeeping_advance()
// and its logarithmic accumulation, the NTP mult steering of
// timekeeping_adjust(), settime and ADJ_SETOFFSET, the TAI offset, leap
// seconds, suspend and resume with sleep time, clocksource changes, the 6.17+
// aux clocks, and the syscall-path readers that serve clock_gettime(). Each
// function names the kernel function it models. docs/timekeeper.md lists
// the deviations.
//
// The counter is never read here: every operation that reads the clocksource
// in the kernel takes the counter value `now` (or `cycles`) from the caller.
//
// Files: timekeeping.cc (setup, accumulation, publishing), timekeeping_set.cc
// (settime, offset injection, TAI, adjtimex), timekeeping_suspend.cc
// (suspend, resume, clocksource changes), aux_clocks.cc (the aux clocks).
//
// Example:
//   auto tsc = MakeTscClocksource(2600000);
//   Timekeeping tk(*tsc, /*hz=*/250, &sink);
//   tk.Init(/*now=*/0, /*wall_time=*/{1700000000, 0}, /*boot_offset=*/{});
//   tk.Advance(AdvanceMode::kTick, 10400000);        // one tick at HZ=250
//   Timespec64 mono = tk.GetTs64(10400123);          // ktime_get_ts64()

#ifndef VDSOLAB_TIMEKEEPER_TIMEKEEPING_H_
#define VDSOLAB_TIMEKEEPER_TIMEKEEPING_H_

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/timespec.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/ntp.h"
#include "timekeeper/profile.h"
#include "timekeeper/readers.h"
#include "timekeeper/timekeeper.h"

namespace vdsolab::timekeeper {

// Receives update_vsyscall(tk), which the kernel calls with the shadow
// timekeeper from timekeeping_update_from_shadow(), before the shadow is
// copied to the real timekeeper, and (6.17+) vdso_time_update_aux() for an
// aux clock's timekeeper. The sink decides when its stores become visible.
class VsyscallSink {
 public:
  virtual ~VsyscallSink() = default;
  virtual void UpdateVsyscall(const Timekeeper& tk) = 0;
  virtual void UpdateAux(const Timekeeper& /*aux_tk*/) {}
};

// enum timekeeping_adv_mode.
enum class AdvanceMode {
  kTick,  // TK_ADV_TICK: a tick has passed (update_wall_time()).
  kFreq,  // TK_ADV_FREQ: adjtimex() changed the frequency; apply it now.
};

// clocksource_delta() (Dec 2024+): deltas above max_delta count as negative
// motion and yield 0.
constexpr uint64_t ClocksourceDelta(uint64_t now, uint64_t last, uint64_t mask,
                                    uint64_t max_delta) {
  const uint64_t ret = (now - last) & mask;
  return ret > max_delta ? 0 : ret;
}

// clocksource_delta() before Dec 2024 with CONFIG_CLOCKSOURCE_VALIDATE_LAST_
// CYCLE (x86): a masked delta with the MSB set yields 0.
constexpr uint64_t ClocksourceDeltaMsb(uint64_t now, uint64_t last,
                                       uint64_t mask) {
  const uint64_t ret = (now - last) & mask;
  return (ret & ~(mask >> 1)) != 0 ? 0 : ret;
}

// Where resume finds the time the machine slept (timekeeping_resume()).
struct ResumeInput {
  uint64_t now = 0;  // The clocksource's counter at resume.
  // read_persistent_clock64() at resume: the RTC's whole seconds, or {0, 0}
  // on a machine without a persistent clock.
  Timespec64 persistent;
};

class Timekeeping {
 public:
  // The clocksource is the one timekeeping runs on from Init() on; the
  // kernel boots on jiffies and switches later (not modelled). `hz` is
  // CONFIG_HZ; `sink` (not owned, may be null) receives update_vsyscall().
  Timekeeping(const Clocksource& clock, int hz, VsyscallSink* sink,
              const TimekeeperProfile& profile = TimekeeperProfile{});
  Timekeeping(const Timekeeping&) = delete;
  Timekeeping& operator=(const Timekeeping&) = delete;

  // The ntp_tick_adj= boot parameter (ntp_tick_adj_setup()): a constant
  // frequency correction in ns per second every tick length includes.
  // Like the kernel's __setup handlers it runs before timekeeping_init():
  // call it before Init(), or it has no effect until the next Init().
  void NtpTickAdjSetup(int64_t ns_per_s);

  // timekeeping_init(): read_persistent_wall_and_boot_offset() gave
  // `wall_time` and `boot_offset` (MONOTONIC at this point); `now` is the
  // counter when tk_setup_internals() reads it.
  void Init(uint64_t now, const Timespec64& wall_time,
            const Timespec64& boot_offset);

  // update_wall_time(): timekeeping_advance() of the core timekeeper, then
  // tk_aux_advance() (every enabled aux clock) at the same counter.
  // Returns true when the clock was set (a leap second).
  bool Advance(AdvanceMode mode, uint64_t now);

  // do_adjtimex() at counter `now`: validation, ADJ_SETOFFSET, the NTP
  // modes, a TAI change, then TK_ADV_FREQ for ADJ_FREQUENCY/ADJ_TICK.
  // *txc is read back as the kernel fills it. Returns the syscall's value:
  // a TIME_* state or -EINVAL.
  int Adjtimex(Timex* txc, uint64_t now);
  // The same without the read-back (the request is copied).
  absl::StatusOr<int> Adjtimex(const Timex& txc, uint64_t now);

  // do_settimeofday64() at counter `now`: 0 or -EINVAL.
  int SetTimeOfDay(const Timespec64& ts, uint64_t now);

  // timekeeping_inject_offset(): step REALTIME (and BOOTTIME, TAI) by a
  // signed `offset` (tv_nsec in [0, 1e9)); 0 or -EINVAL.
  int InjectOffset(const Timespec64& offset, uint64_t now);

  // timekeeping_suspend() at counter `now`; `persistent` is what
  // read_persistent_clock64() returns ({0, 0}: no persistent clock).
  void Suspend(uint64_t now, const Timespec64& persistent);
  // timekeeping_resume(): the sleep from the clocksource if it keeps
  // running in suspend, else from the persistent clock; returns the sleep
  // time injected ({0, 0}: none, left to the RTC driver).
  Timespec64 Resume(const ResumeInput& in);
  // timekeeping_inject_sleeptime64(): the RTC driver's sleep injection
  // after a resume that found no sleep time.
  void InjectSleeptime64(const Timespec64& delta, uint64_t now);
  bool suspended() const { return suspended_; }

  // change_clocksource(): forward on the old clocksource (counter
  // `now_old`), switch to `next` (its counter `now_new`), publish with
  // TK_UPDATE_ALL (NTP cleared), then tk_aux_update_clocksource().
  void ChangeClocksource(const Clocksource& next, uint64_t now_old,
                         uint64_t now_new);

  // The POSIX aux clocks (6.17+; profile().aux_clocks), `index` 0..7 for
  // CLOCK_AUX + index. Enable: aux_clock_enable() at counter `now`;
  // disable: aux_clock_disable(). Both are idempotent as the sysfs file is.
  void EnableAux(int index, uint64_t now);
  void DisableAux(int index);
  bool AuxEnabled(int index) const;
  // aux_clock_set(): 0, -EINVAL (invalid time) or -ENODEV (not enabled).
  int AuxSetTime(int index, const Timespec64& ts, uint64_t now);
  // aux_clock_adj(): clock_adjtime() on an aux clock; -ENODEV when not
  // enabled.
  int AuxAdjtimex(int index, Timex* txc, uint64_t now);
  // The aux clock's published timekeeper and NTP state (enabled or not).
  const Timekeeper& aux_timekeeper(int index) const;
  const Ntp& aux_ntp(int index) const;

  // The syscall-path readers (timekeeper/readers.h) on the published
  // timekeeper, at counter value `cycles`.
  Timespec64 GetRealTs64(uint64_t cycles) const {
    return KtimeGetRealTs64(core_.timekeeper, cycles);
  }
  Timespec64 GetTs64(uint64_t cycles) const {
    return KtimeGetTs64(core_.timekeeper, cycles);
  }
  Timespec64 GetRawTs64(uint64_t cycles) const {
    return KtimeGetRawTs64(core_.timekeeper, cycles);
  }
  Ktime GetWithOffset(TkOffset offs, uint64_t cycles) const {
    return KtimeGetWithOffset(core_.timekeeper, offs, cycles);
  }
  Timespec64 GetBoottimeTs64(uint64_t cycles) const {
    return KtimeGetBoottimeTs64(core_.timekeeper, cycles);
  }
  Timespec64 GetClocktaiTs64(uint64_t cycles) const {
    return KtimeGetClocktaiTs64(core_.timekeeper, cycles);
  }
  Timespec64 GetCoarseRealTs64() const {
    return KtimeGetCoarseRealTs64(core_.timekeeper);
  }
  Timespec64 GetCoarseTs64() const {
    return KtimeGetCoarseTs64(core_.timekeeper);
  }

  // The published timekeeper (tk_core.timekeeper).
  const Timekeeper& timekeeper() const { return core_.timekeeper; }
  // The clocksource timekeeping runs on now.
  const Clocksource& clocksource() const {
    return *core_.timekeeper.tkr_mono.clock;
  }
  const Ntp& ntp() const { return core_.ntp; }
  const TimekeeperProfile& profile() const { return profile_; }
  int hz() const { return hz_; }
  // printk_once()/WARN messages the model emitted, oldest first.
  const std::vector<std::string>& log() const { return log_; }
  // How many of them were the kernel's WARN()s (a trap the kernel reports
  // and goes on after, not a printk), the ones log() no longer keeps
  // included.
  uint64_t warned() const { return warned_; }
  // The model loop that ran past tk_internal::kMaxLoopIterations (a defect
  // that would hang the kernel), or nullptr. Once set, every guarded loop
  // stops at once, so a run reports it (sim: livelock) instead of hanging.
  const char* stalled_loop() const { return stalled_loop_; }

 private:
  // struct tk_data: a timekeeper's published and shadow states, and (the
  // model keeps it here, the kernel in ntp.c's tk_ntp_data[]) its NTP.
  struct TkData {
    Timekeeper timekeeper;         // What readers see.
    Timekeeper shadow_timekeeper;  // What writers change.
    Ntp ntp;
  };

  const Clocksource* Register(const Clocksource& clock);
  uint64_t Delta(const TkReadBase& tkr, uint64_t now) const;
  void SetupInternals(Timekeeper& tk, const Clocksource* clock, uint64_t now);
  void ForwardNow(Timekeeper& tk, uint64_t now);  // timekeeping_forward_now()
  void ForwardTo(Timekeeper& tk, uint64_t now);   // timekeeping_forward()
  void UpdateFromShadow(TkData& tkd, unsigned action);
  static void RestoreShadow(TkData& tkd) {
    tkd.shadow_timekeeper = tkd.timekeeper;  // timekeeping_restore_shadow()
  }
  static void UpdateLeapStateAll(TkData& tkd);  // tk_update_leap_state_all()
  bool AdvanceTkd(TkData& tkd, AdvanceMode mode, uint64_t now);
  uint64_t LogarithmicAccumulation(TkData& tkd, uint64_t offset, uint32_t shift,
                                   unsigned* clock_set);
  unsigned AccumulateNsecsToSecs(TkData& tkd);  // accumulate_nsecs_to_secs()
  void Adjust(TkData& tkd, int64_t offset);     // timekeeping_adjust()
  void ApplyAdjustment(Timekeeper& tk, int64_t offset, int32_t mult_adj);
  void SetError(TkData& tkd);
  int InjectOffsetTkd(TkData& tkd, const Timespec64& offset, uint64_t now);
  int DoAdjtimex(TkData& tkd, Timex* txc, uint64_t now);
  void InjectSleeptime(Timekeeper& tk, const Timespec64& delta);
  void SetupAux();
  TkData* Aux(int index);  // nullptr outside 0..7.
  const TkData* Aux(int index) const;
  void Log(std::string message);
  // Log() of what the kernel raises with WARN()/WARN_ONCE().
  void Warn(std::string message);

  int hz_;
  VsyscallSink* sink_;
  TimekeeperProfile profile_;
  int64_t ntp_tick_adj_ = 0;  // ntp_tick_adj, as ntp_tick_adj_setup() left it.
  // Every clocksource ever used: Timekeeper copies (the simulation keeps
  // many) point into it, so entries never move or go away.
  std::deque<Clocksource> clocksources_;
  TkData core_;
  std::array<std::optional<TkData>, kMaxAuxTimekeepers> aux_;
  bool warned_maxadj_ = false;
  uint64_t warned_ = 0;
  std::vector<std::string> log_;
  const char* stalled_loop_ = nullptr;
  // Suspend and resume (timekeeping_suspend()'s statics and globals).
  bool suspended_ = false;
  bool persistent_clock_exists_ = false;
  Timespec64 suspend_time_;  // timekeeping_suspend_time
  Timespec64 old_delta_;     // System minus persistent clock, last suspend.
  std::optional<uint64_t> suspend_start_;  // Nonstop clocksource's count.
};

}  // namespace vdsolab::timekeeper

#endif  // VDSOLAB_TIMEKEEPER_TIMEKEEPING_H_
