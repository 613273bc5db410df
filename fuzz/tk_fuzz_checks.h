// File: fuzz/tk_fuzz_checks.h
//
// The invariants the timekeeper fuzzer holds the model to after every
// operation, stated from the kernel's contracts rather than from the
// model's code:
//   - MONOTONIC and MONOTONIC_RAW never go backwards, whatever happened
//     (settime, offset injection, leap seconds, suspend, clocksource
//     changes);
//   - REALTIME + wall_to_monotonic = MONOTONIC; BOOTTIME is MONOTONIC plus
//     a sleep time that never goes negative; TAI is REALTIME plus
//     tai_offset seconds;
//   - the NTP state stays in the ranges ntp.c keeps it in (time_freq within
//     +-MAXFREQ, tick_usec within 10%, time_constant 0..MAXTC, maxerror and
//     esterror 0..NTP_PHASE_LIMIT, time_state a TIME_* state, the phase
//     still to slew at most MAXPHASE);
//   - an enabled aux clock never goes backwards until it is set.
// A violation aborts with the operations so far.

#ifndef VDSOLAB_FUZZ_TK_FUZZ_CHECKS_H_
#define VDSOLAB_FUZZ_TK_FUZZ_CHECKS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "common/timespec.h"
#include "timekeeper/ntp.h"
#include "timekeeper/timekeeper.h"
#include "timekeeper/timekeeping.h"

namespace vdsolab::fuzz {

[[noreturn]] void FuzzFail(const std::string& history, const std::string& what);

// What a refused call must leave alone: the NTP state and the clocks'
// offsets and accumulated time.
struct TkState {
  timekeeper::NtpData ntp;
  uint64_t xtime_sec = 0;
  uint64_t xtime_nsec = 0;
  Timespec64 wall_to_monotonic;
  Ktime offs_boot = 0;
  int32_t tai_offset = 0;
  Ktime offs_aux = 0;
  bool clock_valid = true;

  friend bool operator==(const TkState&, const TkState&) = default;
};
TkState CoreState(const timekeeper::Timekeeping& t);
TkState AuxState(const timekeeper::Timekeeping& t, int index);

// The NTP ranges above; `which` names the clock in the message.
void CheckNtpRanges(const timekeeper::NtpData& n, const std::string& which,
                    const std::string& history);

class TkWatch {
 public:
  explicit TkWatch(const std::string* history) : history_(history) {}

  // Reads every clock at counter `now` and checks the invariants against
  // the previous reads.
  void Check(const timekeeper::Timekeeping& t, uint64_t now);
  // The aux clock was set (or enabled): its next read starts afresh.
  void ResetAux(int index) {
    last_aux_[static_cast<size_t>(index)].reset();
    beyond_settod_[static_cast<size_t>(index)] = false;
  }
  // ADJ_SETOFFSET moved the aux clock past the latest time clock_settime()
  // accepts (TIME_SETTOD_SEC_MAX). The kernel bounds that offset only
  // below, so the clock may run into KTIME_MAX and wrap to negative: known
  // behaviour (docs/findings.md), not checked until the clock is set again.
  void AuxBeyondSettod(int index) {
    beyond_settod_[static_cast<size_t>(index)] = true;
  }

 private:
  const std::string* history_;
  std::optional<Timespec64> last_mono_;
  std::optional<Timespec64> last_raw_;
  std::array<std::optional<Ktime>, timekeeper::kMaxAuxTimekeepers> last_aux_;
  std::array<bool, timekeeper::kMaxAuxTimekeepers> beyond_settod_{};
};

}  // namespace vdsolab::fuzz

#endif  // VDSOLAB_FUZZ_TK_FUZZ_CHECKS_H_
