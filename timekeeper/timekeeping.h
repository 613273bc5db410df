// File: timekeeper/timekeeping.h
//
// A model of the core timekeeper in kernel/time/timekeeping.c (mainline as of
// 6.18): a shadow timekeeper that is updated and then published, with
// tk_setup_internals(), timekeeping_advance() and its logarithmic
// accumulation, the NTP mult steering of timekeeping_adjust(), settime, and
// the syscall-path readers that serve clock_gettime(). Each function names
// the kernel function it models. docs/timekeeper.md lists the deviations.
//
// The counter is never read here: every operation that reads the clocksource
// in the kernel takes the counter value `now` (or `cycles`) from the caller.
//
// Example:
//   auto tsc = MakeTscClocksource(2600000);
//   Timekeeping tk(*tsc, /*hz=*/250, &sink);
//   tk.Init(/*now=*/0, /*wall_time=*/{1700000000, 0}, /*boot_offset=*/{});
//   tk.Advance(AdvanceMode::kTick, 10400000);        // one tick at HZ=250
//   Timespec64 mono = tk.GetTs64(10400123);          // ktime_get_ts64()

#ifndef VDSOLAB_TIMEKEEPER_TIMEKEEPING_H_
#define VDSOLAB_TIMEKEEPER_TIMEKEEPING_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/timespec.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/ntp.h"
#include "timekeeper/readers.h"
#include "timekeeper/timekeeper.h"

namespace vdsolab::timekeeper {

// Receives update_vsyscall(tk), which the kernel calls with the shadow
// timekeeper from timekeeping_update(), before the shadow is copied to the
// real timekeeper. The sink decides when its stores become visible.
class VsyscallSink {
 public:
  virtual ~VsyscallSink() = default;
  virtual void UpdateVsyscall(const Timekeeper& tk) = 0;
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

class Timekeeping {
 public:
  // The clocksource is the one timekeeping runs on from Init() on; the
  // kernel boots on jiffies and switches later (not modelled). `hz` is
  // CONFIG_HZ; `sink` (not owned, may be null) receives update_vsyscall().
  Timekeeping(const Clocksource& clock, int hz, VsyscallSink* sink);
  Timekeeping(const Timekeeping&) = delete;
  Timekeeping& operator=(const Timekeeping&) = delete;

  // timekeeping_init(): read_persistent_wall_and_boot_offset() gave
  // `wall_time` and `boot_offset` (MONOTONIC at this point); `now` is the
  // counter when tk_setup_internals() reads it.
  void Init(uint64_t now, const Timespec64& wall_time,
            const Timespec64& boot_offset);

  // timekeeping_advance(): accumulate whole NTP intervals up to `now` and
  // steer mult. Returns true when the clock was set (a leap second).
  bool Advance(AdvanceMode mode, uint64_t now);

  // do_adjtimex() for the modelled modes: NTP state under the timekeeper
  // lock, then timekeeping_advance(TK_ADV_FREQ) at `now` if ADJ_FREQUENCY or
  // ADJ_TICK was given. Returns the syscall's return value.
  absl::StatusOr<int> Adjtimex(const Timex& txc, uint64_t now);

  // do_settimeofday64() at counter `now`: 0 or -EINVAL.
  int SetTimeOfDay(const Timespec64& ts, uint64_t now);

  // The syscall-path readers (timekeeper/readers.h) on the published
  // timekeeper, at counter value `cycles`.
  Timespec64 GetRealTs64(uint64_t cycles) const {
    return KtimeGetRealTs64(real_, cycles);
  }
  Timespec64 GetTs64(uint64_t cycles) const {
    return KtimeGetTs64(real_, cycles);
  }
  Timespec64 GetRawTs64(uint64_t cycles) const {
    return KtimeGetRawTs64(real_, cycles);
  }
  Ktime GetWithOffset(TkOffset offs, uint64_t cycles) const {
    return KtimeGetWithOffset(real_, offs, cycles);
  }
  Timespec64 GetBoottimeTs64(uint64_t cycles) const {
    return KtimeGetBoottimeTs64(real_, cycles);
  }
  Timespec64 GetClocktaiTs64(uint64_t cycles) const {
    return KtimeGetClocktaiTs64(real_, cycles);
  }
  Timespec64 GetCoarseRealTs64() const { return KtimeGetCoarseRealTs64(real_); }
  Timespec64 GetCoarseTs64() const { return KtimeGetCoarseTs64(real_); }

  // The published timekeeper (tk_core.timekeeper).
  const Timekeeper& timekeeper() const { return real_; }
  const Clocksource& clocksource() const { return *clock_; }
  const Ntp& ntp() const { return ntp_; }
  int hz() const { return hz_; }
  // printk_once()/WARN messages the model emitted, oldest first.
  const std::vector<std::string>& log() const { return log_; }

 private:
  void SetupInternals(uint64_t now);              // tk_setup_internals()
  void ForwardNow(Timekeeper& tk, uint64_t now);  // timekeeping_forward_now()
  void UpdateFromShadow(unsigned action);    // timekeeping_update_from_shadow()
  void RestoreShadow() { shadow_ = real_; }  // timekeeping_restore_shadow()
  uint64_t LogarithmicAccumulation(Timekeeper& tk, uint64_t offset,
                                   uint32_t shift, unsigned* clock_set);
  unsigned AccumulateNsecsToSecs(Timekeeper& tk);  // accumulate_nsecs_to_secs()
  void Adjust(Timekeeper& tk, int64_t offset);     // timekeeping_adjust()
  void ApplyAdjustment(Timekeeper& tk, int64_t offset, int32_t mult_adj);
  void Log(std::string message);

  std::shared_ptr<const Clocksource> clock_;
  int hz_;
  VsyscallSink* sink_;
  Ntp ntp_;
  Timekeeper real_;    // tk_core.timekeeper: what readers see.
  Timekeeper shadow_;  // tk_core.shadow_timekeeper: what writers change.
  bool warned_maxadj_ = false;
  std::vector<std::string> log_;
};

}  // namespace vdsolab::timekeeper

#endif  // VDSOLAB_TIMEKEEPER_TIMEKEEPING_H_
