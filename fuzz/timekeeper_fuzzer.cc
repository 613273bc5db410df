// File: fuzz/timekeeper_fuzzer.cc
//
// Sequences of timekeeper operations, each at a counter that only moves
// forward (fuzz/tk_fuzz_machine.h), with the invariants of
// fuzz/tk_fuzz_checks.h held after every one.
//
// The first byte picks the clocksource (low two bits) and the operation
// set. Below 0x80 (the classic set, which the older corpus files use):
// ticks after any gap up to half the counter's safe range, idle stretches
// past max_cycles, adjtimex() of the frequency and tick, settimeofday() to
// any time, reads between ticks. From 0x80: a kernel era and machine
// (nonstop TSC, an RTC) from the next byte, and besides those operations
// adjtimex() with any modes and fields, an NTP daemon's PLL updates, a
// leap second inserted or deleted at a midnight, suspend and resume (sleep
// measured by a nonstop counter, the RTC, or injected by the RTC driver),
// clocksource changes among the TSC, kvm-clock, HPET and ACPI PM, and the
// aux clocks (enable, disable, set, adjtimex).
//
// Every adjtimex() is also held to timekeeping_validate_timex()'s input
// domain: a request the kernel refuses must return -EINVAL and change
// nothing; one it accepts must not be refused (ADJ_SETOFFSET may still be
// refused when the result is not a valid time).

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/timespec.h"
#include "fuzz/tk_fuzz_checks.h"
#include "fuzz/tk_fuzz_machine.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/ntp.h"
#include "timekeeper/profile.h"
#include "timekeeper/readers.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/timex.h"

namespace {

using vdsolab::Timespec64;
using vdsolab::fuzz::FuzzFail;
using vdsolab::fuzz::FuzzMachine;
using vdsolab::fuzz::TkWatch;
namespace tk = vdsolab::timekeeper;

constexpr int64_t kNsPerSec = 1000000000;
// TIME_SETTOD_SEC_MAX: KTIME_SEC_MAX less TIME_UPTIME_SEC_MAX (30 years).
constexpr int64_t kSettodSecMax =
    vdsolab::kKtimeSecMax - int64_t{30} * 365 * 86400;

// Reads the input a field at a time; zeros past its end.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint64_t Take(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) {
      v |= static_cast<uint64_t>(pos_ < size_ ? data_[pos_] : 0) << (8 * i);
      ++pos_;
    }
    return v;
  }
  int64_t Signed(int n) { return static_cast<int64_t>(Take(n)); }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// The mode bits timekeeping_validate_timex() and __do_adjtimex() know.
constexpr uint32_t kKnownModes =
    tk::kAdjOffset | tk::kAdjFrequency | tk::kAdjMaxerror | tk::kAdjEsterror |
    tk::kAdjStatus | tk::kAdjTimeconst | tk::kAdjTai | tk::kAdjSetoffset |
    tk::kAdjMicro | tk::kAdjNano | tk::kAdjTick | tk::kAdjAdjtime;

// An adjtimex() request: any modes, each field either anywhere in its type
// or near the edges of what the kernel accepts.
tk::Timex DrawTimex(Bytes& in) {
  tk::Timex txc;
  const uint64_t shape = in.Take(2);  // Which fields stay near their range.
  txc.modes = static_cast<uint32_t>(in.Take(2));
  if ((shape & 1) != 0) txc.modes &= kKnownModes;
  if ((shape & 2) != 0) txc.modes |= static_cast<uint32_t>(in.Take(2)) << 16;
  txc.offset = in.Signed(8);
  if ((shape & 4) != 0) txc.offset %= 2000000;
  txc.freq = in.Signed(8);
  if ((shape & 8) != 0) txc.freq %= int64_t{600} << 16;
  txc.maxerror = in.Signed(8);
  if ((shape & 16) != 0) txc.maxerror %= 2 * tk::kNtpPhaseLimit;
  txc.esterror = in.Signed(8);
  if ((shape & 32) != 0) txc.esterror %= 2 * tk::kNtpPhaseLimit;
  txc.status = static_cast<int32_t>(in.Take(2));
  txc.constant = in.Signed(8);
  if ((shape & 64) != 0) txc.constant %= 100002;
  txc.time.tv_sec = in.Signed(8);
  if ((shape & 128) != 0) txc.time.tv_sec %= 100000;
  txc.time.tv_usec = in.Signed(4);
  if ((shape & 256) != 0) txc.time.tv_usec %= 1000000001;
  txc.tick = in.Signed(4);
  if ((shape & 512) != 0) txc.tick = 8900 + txc.tick % 2300;
  return txc;
}

// timekeeping_validate_timex()'s refusals, restated from the kernel.
bool MustRefuse(const tk::Timex& txc, bool aux) {
  const uint32_t m = txc.modes;
  if ((m & tk::kAdjAdjtime) == 0 && (m & tk::kAdjTick) != 0 &&
      (txc.tick < 9000 || txc.tick > 11000)) {
    return true;
  }
  if ((m & tk::kAdjSetoffset) != 0 &&
      (txc.time.tv_usec < 0 ||
       txc.time.tv_usec >= ((m & tk::kAdjNano) != 0 ? 1000000000 : 1000000))) {
    return true;
  }
  if ((m & tk::kAdjFrequency) != 0 && (txc.freq < INT64_MIN / tk::kPpmScale ||
                                       txc.freq > INT64_MAX / tk::kPpmScale)) {
    return true;
  }
  if (aux && (m & tk::kAdjTai) != 0) return true;
  if (aux && (m & tk::kAdjStatus) != 0 &&
      (txc.status &
       (tk::kStaIns | tk::kStaDel | tk::kStaPpsfreq | tk::kStaPpstime)) != 0) {
    return true;
  }
  return false;
}

// The fuzzer's state: the machine, the timekeeper and what was done.
class Run {
 public:
  Run(Bytes& in, FuzzMachine& m, tk::Timekeeping& t, std::string& history,
      int64_t rtc_at_boot, bool rtc_driver)
      : in_(in),
        m_(m),
        t_(t),
        history_(history),
        watch_(&history),
        rtc_at_boot_(rtc_at_boot),
        rtc_driver_(rtc_driver) {}

  void Classic(uint64_t code);
  void Extended(uint64_t code);
  void Check() { watch_.Check(t_, m_.Counter()); }

 private:
  // Cycles the counter may still move before the next tick: half of what
  // the timekeeper can tell from a wrap (max_raw_delta); beyond it a
  // counter jump is a violated precondition, not a model defect.
  uint64_t Room() const {
    const uint64_t pending =
        (m_.Counter() - t_.timekeeper().tkr_mono.cycle_last) & m_.source().mask;
    const uint64_t max_step = m_.source().max_raw_delta / 2;
    return pending < max_step ? max_step - pending : 0;
  }
  uint64_t Interval() const { return t_.timekeeper().cycle_interval; }
  void Tick(uint64_t cycles);
  void Adjtimex(tk::Timex txc, int aux);  // aux -1: the core clock.
  void NtpDaemon();
  void LeapSecond();
  void SuspendResume();
  void ChangeClocksource();
  void AuxOp();
  Timespec64 Rtc() const {
    if (rtc_at_boot_ <= 0) return Timespec64{};
    return Timespec64{
        rtc_at_boot_ + static_cast<int64_t>(m_.elapsed_ns()) / kNsPerSec, 0};
  }

  Bytes& in_;
  FuzzMachine& m_;
  tk::Timekeeping& t_;
  std::string& history_;
  TkWatch watch_;
  int64_t rtc_at_boot_;  // The RTC's seconds at Init(); 0: no RTC.
  bool rtc_driver_;
};

void Run::Tick(uint64_t cycles) {
  m_.AdvanceCycles(std::min(Room(), cycles));
  t_.Advance(tk::AdvanceMode::kTick, m_.Counter());
  absl::StrAppendFormat(&history_, "tick at %#x\n", m_.Counter());
}

// The operations of the first fuzzer, byte for byte as it read them.
void Run::Classic(uint64_t code) {
  const tk::Clocksource& cs = m_.source();
  const uint64_t max_step = cs.max_raw_delta / 2;
  const uint64_t interval = Interval();
  switch (code % 6) {
    case 0:
    case 1: {  // A tick, a little early or late.
      m_.AdvanceCycles(
          std::min<uint64_t>(max_step, interval / 2 + in_.Take(2) % interval));
      t_.Advance(tk::AdvanceMode::kTick, m_.Counter());
      absl::StrAppendFormat(&history_, "tick at %#x\n", m_.Counter());
      break;
    }
    case 2: {  // Idle: no tick for a while, up to past max_cycles.
      const uint64_t gap =
          std::min<uint64_t>(max_step, in_.Take(5) % (2 * cs.max_cycles + 1));
      m_.AdvanceCycles(gap);
      t_.Advance(tk::AdvanceMode::kTick, m_.Counter());
      absl::StrAppendFormat(&history_, "idle %#x cycles, tick at %#x\n", gap,
                            m_.Counter());
      break;
    }
    case 3: {  // adjtimex(): frequency and/or tick, any values.
      tk::Timex txc;
      txc.modes = (in_.Take(1) & 1 ? tk::kAdjFrequency : 0) |
                  (in_.Take(1) & 1 ? tk::kAdjTick : 0);
      txc.freq = in_.Signed(8);
      if ((code & 0x80) != 0) txc.freq %= (600ll << 16);  // Near the range.
      txc.tick = in_.Signed(4) % 20000;
      Adjtimex(txc, -1);
      break;
    }
    case 4: {  // settimeofday() to any time.
      const Timespec64 ts{in_.Signed(8), static_cast<int64_t>(in_.Take(4))};
      const int ret = t_.SetTimeOfDay(ts, m_.Counter());
      absl::StrAppendFormat(&history_, "settimeofday %d.%d at %#x: %d\n",
                            ts.tv_sec, ts.tv_nsec, m_.Counter(), ret);
      break;
    }
    case 5: {  // A read a little later, between ticks.
      m_.AdvanceCycles(std::min<uint64_t>(max_step, in_.Take(3) % interval));
      absl::StrAppendFormat(&history_, "read at %#x\n", m_.Counter());
      break;
    }
  }
}

void Run::Extended(uint64_t code) {
  switch (code % 12) {
    case 0:
    case 1:
      Tick(Interval() / 2 + in_.Take(2) % Interval());
      break;
    case 2:  // Idle, up to past max_cycles.
      Tick(in_.Take(5) % (2 * m_.source().max_cycles + 1));
      break;
    case 3: {  // A read between ticks.
      m_.AdvanceCycles(std::min(Room(), in_.Take(3) % Interval()));
      absl::StrAppendFormat(&history_, "read at %#x\n", m_.Counter());
      break;
    }
    case 4: {
      const Timespec64 ts{in_.Signed(8), in_.Signed(4)};
      const vdsolab::fuzz::TkState before = vdsolab::fuzz::CoreState(t_);
      const int ret = t_.SetTimeOfDay(ts, m_.Counter());
      absl::StrAppendFormat(&history_, "settimeofday %d.%d: %d\n", ts.tv_sec,
                            ts.tv_nsec, ret);
      if (ret < 0 && t_.profile().set_error_restores_shadow &&
          !(vdsolab::fuzz::CoreState(t_) == before)) {
        FuzzFail(history_, "a refused settimeofday() changed state");
      }
      break;
    }
    case 5:
    case 6:
      Adjtimex(DrawTimex(in_), -1);
      break;
    case 7:
      NtpDaemon();
      break;
    case 8:
      LeapSecond();
      break;
    case 9:
      SuspendResume();
      break;
    case 10:
      ChangeClocksource();
      break;
    case 11:
      AuxOp();
      break;
  }
}

void Run::Adjtimex(tk::Timex txc, int aux) {
  const uint64_t now = m_.Counter();
  const bool on_aux = aux >= 0;
  const vdsolab::fuzz::TkState before =
      on_aux ? vdsolab::fuzz::AuxState(t_, aux) : vdsolab::fuzz::CoreState(t_);
  const bool enabled = !on_aux || t_.AuxEnabled(aux);
  const tk::Timex request = txc;
  const int ret =
      on_aux ? t_.AuxAdjtimex(aux, &txc, now) : t_.Adjtimex(&txc, now);
  absl::StrAppendFormat(
      &history_,
      "adjtimex%s modes %#x offset %d freq %d maxerror %d esterror %d "
      "status %#x constant %d time %d.%d tick %d: %d\n",
      on_aux ? absl::StrFormat(" AUX+%d", aux) : "", request.modes,
      request.offset, request.freq, request.maxerror, request.esterror,
      request.status, request.constant, request.time.tv_sec,
      request.time.tv_usec, request.tick, ret);
  const vdsolab::fuzz::TkState after =
      on_aux ? vdsolab::fuzz::AuxState(t_, aux) : vdsolab::fuzz::CoreState(t_);
  // Before 6.13 an offset injection refused after the timekeeper was
  // forwarded still published it and cleared NTP (profile.h).
  const bool refused_late = (request.modes & tk::kAdjSetoffset) != 0 &&
                            !MustRefuse(request, on_aux) &&
                            !t_.profile().set_error_restores_shadow;
  if (ret < 0 && !refused_late && !(after == before)) {
    FuzzFail(history_, "a refused adjtimex() changed state");
  }
  if (ret < 0 && refused_late &&
      (after.ntp.time_status & tk::kStaUnsync) == 0) {
    FuzzFail(history_, "a refused offset injection before 6.13 kept NTP");
  }
  if (!enabled) {
    if (ret != -vdsolab::kEnodev && ret != -vdsolab::kEinval) {
      FuzzFail(history_, "adjtimex() on a disabled aux clock did not fail");
    }
    return;
  }
  if (MustRefuse(request, on_aux) && ret != -vdsolab::kEinval) {
    FuzzFail(history_, "adjtimex() accepted a request the kernel refuses");
  }
  if (!MustRefuse(request, on_aux) &&
      (request.modes & tk::kAdjSetoffset) == 0 && ret < 0) {
    FuzzFail(history_, "adjtimex() refused a request the kernel accepts");
  }
  if (ret < 0) return;
  if (ret > tk::kTimeError) FuzzFail(history_, "adjtimex() returned no TIME_*");
  if ((request.modes & tk::kAdjSetoffset) != 0 && on_aux) {
    watch_.ResetAux(aux);
    const std::optional<vdsolab::Ktime> now_aux =
        tk::KtimeGetAux(t_.aux_timekeeper(aux), now);
    if (now_aux && *now_aux / kNsPerSec >= kSettodSecMax) {
      watch_.AuxBeyondSettod(aux);
    }
  }
  // The read-back is the state the call left, but for what the
  // TK_ADV_FREQ accumulation after it may add: a second's maxerror growth
  // (MAXFREQ / NSEC_PER_USEC a second, STA_UNSYNC at the limit).
  const tk::NtpData& n = on_aux ? t_.aux_ntp(aux).data() : t_.ntp().data();
  const bool advanced =
      (request.modes & (tk::kAdjFrequency | tk::kAdjTick)) != 0;
  const bool maxerror_ok =
      advanced ? txc.maxerror <= n.time_maxerror &&
                     (txc.status & ~tk::kStaUnsync) ==
                         (n.time_status & ~tk::kStaUnsync)
               : txc.maxerror == n.time_maxerror && txc.status == n.time_status;
  if (txc.tick != static_cast<int64_t>(n.tick_usec) ||
      txc.constant != n.time_constant || !maxerror_ok ||
      txc.esterror != n.time_esterror) {
    FuzzFail(history_,
             absl::StrFormat(
                 "adjtimex() read back another state than it left: tick %d/%d "
                 "constant %d/%d status %#x/%#x maxerror %d/%d esterror %d/%d",
                 txc.tick, n.tick_usec, txc.constant, n.time_constant,
                 txc.status, n.time_status, txc.maxerror, n.time_maxerror,
                 txc.esterror, n.time_esterror));
  }
}

// An NTP daemon's update: the PLL (or FLL) with a plausible offset, now and
// then a frequency, as ntpd and chronyd call it.
void Run::NtpDaemon() {
  tk::Timex txc;
  const uint64_t pick = in_.Take(1);
  txc.modes = tk::kAdjOffset | tk::kAdjStatus | tk::kAdjMaxerror |
              tk::kAdjEsterror | tk::kAdjTimeconst |
              ((pick & 1) != 0 ? tk::kAdjNano : tk::kAdjMicro) |
              ((pick & 2) != 0 ? tk::kAdjFrequency : 0);
  txc.status = tk::kStaPll | ((pick & 4) != 0 ? tk::kStaFll : 0);
  txc.offset = in_.Signed(4) % ((pick & 1) != 0 ? 600000000 : 600000);
  txc.freq = in_.Signed(4) % (int64_t{510} << 16);
  txc.maxerror = static_cast<int64_t>(in_.Take(2));
  txc.esterror = static_cast<int64_t>(in_.Take(2));
  txc.constant = static_cast<int64_t>(in_.Take(1) % 12);
  Adjtimex(txc, -1);
}

// settimeofday() to three seconds before a midnight, STA_INS or STA_DEL,
// then five seconds of ticks: once the state machine starts from TIME_OK,
// REALTIME must step by exactly one second against MONOTONIC.
void Run::LeapSecond() {
  // do_settimeofday64() refuses a REALTIME below MONOTONIC: the days start
  // at the first midnight past MONOTONIC (long pauses may have run it past
  // any fixed day), and a refused set arms nothing.
  const tk::Timekeeper& before = t_.timekeeper();
  const int64_t mono_sec =
      static_cast<int64_t>(before.xtime_sec) + before.wall_to_monotonic.tv_sec;
  const int64_t day = std::max<int64_t>(0, mono_sec / 86400) + 1 +
                      static_cast<int64_t>(in_.Take(2));
  const Timespec64 ts{day * 86400 - 3,
                      static_cast<int64_t>(in_.Take(4) % kNsPerSec)};
  const int set = t_.SetTimeOfDay(ts, m_.Counter());
  const bool insert = (in_.Take(1) & 1) != 0;
  tk::Timex txc;
  txc.modes = tk::kAdjStatus;
  txc.status = insert ? tk::kStaIns : tk::kStaDel;
  const int ret = t_.Adjtimex(&txc, m_.Counter());
  absl::StrAppendFormat(&history_, "leap %s at %d.%09d: settime %d, %d\n",
                        insert ? "insert" : "delete", ts.tv_sec, ts.tv_nsec,
                        set, ret);
  // A settime does not clear skip_second_overflow (only
  // tk_setup_internals() does): after an xtime_nsec underflow in
  // timekeeping_adjust() the next second_overflow() is skipped even though
  // the time was set since, and a deletion armed at 23:59:58 would be
  // armed at 23:59:59 for the next day (docs/findings.md).
  const bool armed = set == 0 && ret >= 0 &&
                     t_.ntp().data().time_state == tk::kTimeOk &&
                     t_.timekeeper().skip_second_overflow == 0;
  const int64_t wtm_before =
      static_cast<int64_t>(t_.timekeeper().wall_to_monotonic.tv_sec);
  const uint64_t chunk = std::max<uint64_t>(
      1, std::min(m_.source().max_raw_delta / 2, m_.NsToCycles(kNsPerSec / 4)));
  const uint64_t start = m_.elapsed_ns();
  while (m_.elapsed_ns() - start < 5 * static_cast<uint64_t>(kNsPerSec)) {
    Tick(chunk);
    Check();
  }
  const int64_t stepped = wtm_before - t_.timekeeper().wall_to_monotonic.tv_sec;
  // An insertion repeats a second (REALTIME - MONOTONIC one less), a
  // deletion skips one.
  if (armed && stepped != (insert ? -1 : 1)) {
    FuzzFail(history_, absl::StrFormat("the leap second moved REALTIME by %d s",
                                       stepped));
  }
}

void Run::SuspendResume() {
  const uint64_t sleep_ns = in_.Take(6) % (uint64_t{2} * 86400 * kNsPerSec);
  t_.Suspend(m_.Counter(), Rtc());
  const uint64_t counter_before = m_.Counter();
  m_.Sleep(sleep_ns);
  // clocksource_stop_suspend_timing() takes the counter's measure only
  // when it reads above its start (a wrap in suspend leaves it to the RTC),
  // and timekeeping_resume() only when that converts to at least 1 ns (a
  // cycle of a counter above 1 GHz is 0 ns: the persistent clock decides).
  const tk::Clocksource& cs = m_.source();
  const uint64_t slept_cycles = m_.Counter() - counter_before;
  const bool by_counter =
      cs.suspend_nonstop && m_.Counter() > counter_before &&
      ((static_cast<unsigned __int128>(slept_cycles) * cs.mult) >> cs.shift) >
          0;
  const vdsolab::Ktime boot_before = t_.timekeeper().offs_boot;
  Timespec64 injected = t_.Resume(tk::ResumeInput{m_.Counter(), Rtc()});
  const bool measured = injected.tv_sec != 0 || injected.tv_nsec != 0;
  if (!measured && rtc_driver_) {
    injected = Timespec64{static_cast<int64_t>(sleep_ns) / kNsPerSec,
                          static_cast<int64_t>(sleep_ns) % kNsPerSec};
    t_.InjectSleeptime64(injected, m_.Counter());
  }
  absl::StrAppendFormat(
      &history_, "suspend %d ns on %s, %s: injected %d.%09d\n", sleep_ns,
      m_.source().name, measured ? "measured" : "not measured", injected.tv_sec,
      injected.tv_nsec);
  const int64_t injected_ns = injected.tv_sec * kNsPerSec + injected.tv_nsec;
  if (injected_ns < 0 ||
      t_.timekeeper().offs_boot - boot_before != injected_ns) {
    FuzzFail(history_, "BOOTTIME did not move by the sleep injected");
  }
  // A counter that ran through the sleep measures it to within its
  // conversion error. The RTC has whole seconds, and timekeeping_suspend()
  // shifts its start by up to 2 s to keep repeated suspends from drifting.
  const int64_t error = injected_ns - static_cast<int64_t>(sleep_ns);
  const int64_t allowed = measured && by_counter
                              ? static_cast<int64_t>(sleep_ns / 1000000) + 1000
                              : 3 * kNsPerSec;
  if ((measured || rtc_driver_) && (error > allowed || error < -allowed)) {
    FuzzFail(history_, absl::StrFormat("sleep of %d ns injected as %d ns",
                                       sleep_ns, injected_ns));
  }
}

void Run::ChangeClocksource() {
  const int next =
      static_cast<int>(in_.Take(1) % static_cast<uint64_t>(m_.size()));
  if (next == m_.active()) return;
  t_.ChangeClocksource(m_.source(next), m_.Counter(), m_.Counter(next));
  m_.set_active(next);
  absl::StrAppendFormat(&history_, "clocksource %s at %#x\n", m_.source().name,
                        m_.Counter());
}

void Run::AuxOp() {
  if (!t_.profile().aux_clocks) return;
  const uint64_t pick = in_.Take(1);
  const int index = static_cast<int>((pick >> 2) % tk::kMaxAuxTimekeepers);
  switch (pick % 4) {
    case 0:
      t_.EnableAux(index, m_.Counter());
      watch_.ResetAux(index);
      absl::StrAppendFormat(&history_, "enable AUX+%d\n", index);
      break;
    case 1:
      t_.DisableAux(index);
      absl::StrAppendFormat(&history_, "disable AUX+%d\n", index);
      break;
    case 2: {
      const Timespec64 ts{in_.Signed(8), in_.Signed(4)};
      const int ret = t_.AuxSetTime(index, ts, m_.Counter());
      if (ret == 0) watch_.ResetAux(index);
      absl::StrAppendFormat(&history_, "set AUX+%d %d.%d: %d\n", index,
                            ts.tv_sec, ts.tv_nsec, ret);
      break;
    }
    case 3:
      Adjtimex(DrawTimex(in_), index);
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  const uint64_t first = in.Take(1);
  const bool extended = (first & 0x80) != 0;
  // A TSC of 1 MHz .. 6.5 GHz, or a narrow counter (acpi_pm, hpet).
  const uint64_t kind = first % 4;
  const uint64_t tsc_khz = kind >= 2 ? 1000 + in.Take(3) % 6500000 : 0;
  absl::StatusOr<tk::Clocksource> cs =
      kind == 0
          ? tk::ClocksourceRegisterScale("acpi_pm", tk::ClocksourceMask(24), 1,
                                         3579545, tk::kVdsoClockmodeNone, 200)
      : kind == 1
          ? tk::ClocksourceRegisterScale("hpet", tk::ClocksourceMask(32), 1,
                                         14318180, tk::kVdsoClockmodeNone, 250)
          : tk::MakeTscClocksource(static_cast<uint32_t>(tsc_khz));
  if (!cs.ok()) return 0;
  const uint64_t hz_pick = in.Take(1);
  const int hz = std::array<int, 4>{100, 250, 300, 1000}[hz_pick % 4];
  const uint64_t cs_hz = kind == 0   ? 3579545
                         : kind == 1 ? 14318180
                                     : tsc_khz * 1000;

  tk::TimekeeperProfile profile;
  bool rtc = false;
  bool rtc_driver = false;
  if (extended) {
    const uint64_t flags = in.Take(1);
    const std::vector<std::string>& eras = tk::KnownEras();
    absl::StatusOr<tk::TimekeeperProfile> p =
        tk::ProfileForEra(eras[(flags & 7) % eras.size()]);
    if (!p.ok()) return 0;
    profile = *p;
    if ((flags & 8) != 0) profile.apply_adjustment_ntp_error = false;
    if ((flags & 16) != 0 && kind >= 2) cs->suspend_nonstop = true;
    rtc = (flags & 32) != 0;
    rtc_driver = (flags & 64) != 0;
  }

  FuzzMachine m;
  m.Add(*cs, cs_hz, in.Take(8));
  if (extended) {
    // The others the machine has, to change to.
    absl::StatusOr<tk::Clocksource> kvm = tk::ClocksourceRegisterScale(
        "kvm-clock", tk::ClocksourceMask(64), 1, 1000000000,
        tk::kVdsoClockmodePvclock, 400);
    absl::StatusOr<tk::Clocksource> hpet =
        tk::ClocksourceRegisterScale("hpet", tk::ClocksourceMask(32), 1,
                                     14318180, tk::kVdsoClockmodeNone, 250);
    absl::StatusOr<tk::Clocksource> pm =
        tk::ClocksourceRegisterScale("acpi_pm", tk::ClocksourceMask(24), 1,
                                     3579545, tk::kVdsoClockmodeNone, 200);
    if (!kvm.ok() || !hpet.ok() || !pm.ok()) return 0;
    m.Add(*kvm, 1000000000, in.Take(8));
    m.Add(*hpet, 14318180, in.Take(4));
    m.Add(*pm, 3579545, in.Take(3));
  }

  tk::Timekeeping t(*cs, hz, nullptr, profile);
  // The RTC gives the boot time; without one (extended inputs may say so)
  // REALTIME starts at 0 as on such a machine.
  Timespec64 wall{static_cast<int64_t>(in.Take(5) % (1ll << 34)), 0};
  if (extended && !rtc) wall = Timespec64{};
  const Timespec64 boot{static_cast<int64_t>(in.Take(2)), 0};
  t.Init(m.Counter(), wall, boot);
  std::string history = absl::StrFormat(
      "init %s mask %#x mult %d shift %d hz %d era %s at %#x\n", cs->name,
      cs->mask, cs->mult, cs->shift, hz, profile.era, m.Counter());

  Run run(in, m, t, history, wall.tv_sec, rtc_driver);
  run.Check();
  for (int op = 0; op < 256 && !in.empty(); ++op) {
    const uint64_t code = in.Take(1);
    if (extended) {
      run.Extended(code);
    } else {
      run.Classic(code);
    }
    run.Check();
  }
  // TK_FUZZ_TRACE=1 prints what an input did (for writing seeds).
  if (const char* trace = std::getenv("TK_FUZZ_TRACE");
      trace != nullptr && trace[0] == '1') {
    std::fputs(history.c_str(), stderr);
  }
  return 0;
}
