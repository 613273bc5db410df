// The timekeeper's core (kernel/time/timekeeping.c): setup, accumulation,
// NTP steering and publishing. Setting time is in timekeeping_set.cc,
// suspend/resume and clocksource changes in timekeeping_suspend.cc, the aux
// clocks in aux_clocks.cc.

#include "timekeeper/timekeeping.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/math64.h"
#include "timekeeper/tk_internal.h"

namespace vdsolab::timekeeper {
namespace {

using tk_internal::kTkClearNtp;
using tk_internal::kTkClockWasSet;
using tk_internal::LoopGuard;
using tk_internal::TkNormalizeXtime;
using tk_internal::TkSetTaiOffset;
using tk_internal::TkSetWallToMono;
using tk_internal::TkSetXtime;
using tk_internal::TkUpdateCoarseNsecs;
using tk_internal::TkUpdateKtimeData;

// ilog2() of a run-time value: fls64(n) - 1, so -1 for 0.
int Ilog2(uint64_t n) { return 63 - std::countl_zero(n); }

// tk_update_leap_state(): the pending insertion in MONOTONIC, for
// ktime_get_update_offsets_now().
void TkUpdateLeapState(Timekeeper& tk, const Ntp& ntp) {
  tk.next_leap_ktime = ntp.GetNextLeap();
  if (tk.next_leap_ktime != kKtimeMax) tk.next_leap_ktime -= tk.offs_real;
}

}  // namespace

Timekeeping::Timekeeping(const Clocksource& clock, int hz, VsyscallSink* sink,
                         const TimekeeperProfile& profile)
    : hz_(hz),
      sink_(sink),
      profile_(profile),
      core_{Timekeeper{}, Timekeeper{}, Ntp(hz, profile.ntp)} {
  Register(clock);
  SetupAux();
}

// A clocksource as clocksource_register() leaves it; with the
// max_raw_delta defect, as a registration that skipped
// clocksource_update_max_deferment() leaves it.
const Clocksource* Timekeeping::Register(const Clocksource& clock) {
  clocksources_.push_back(clock);
  if (profile_.defects.clocksource_max_raw_delta_zero) {
    clocksources_.back().max_raw_delta = 0;
  }
  return &clocksources_.back();
}

void Timekeeping::Log(std::string message) {
  constexpr size_t kMaxLog = 64;
  if (log_.size() < kMaxLog) log_.push_back(std::move(message));
}

void Timekeeping::Warn(std::string message) {
  ++warned_;
  Log(std::move(message));
}

// clocksource_delta() of the era.
uint64_t Timekeeping::Delta(const TkReadBase& tkr, uint64_t now) const {
  if (profile_.negative_motion == NegativeMotion::kMsb) {
    return ClocksourceDeltaMsb(now, tkr.cycle_last, tkr.mask);
  }
  return ClocksourceDelta(now, tkr.cycle_last, tkr.mask,
                          tkr.clock->max_raw_delta);
}

// Models ntp_tick_adj_setup() (kernel/time/ntp.c, 2.6.25+): the value
// kstrtos64() parsed, shifted as the kernel shifts it (s64 << 32, which
// wraps for |value| >= 2^31 under -fno-strict-overflow).
void Timekeeping::NtpTickAdjSetup(int64_t ns_per_s) {
  ntp_tick_adj_ = WrapShl(ns_per_s, kNtpScaleShift);
  SetupAux();  // ntp_init() of the aux clocks' NTP, with the new value.
}

// Models timekeeping_init() with the clocksource already chosen.
void Timekeeping::Init(uint64_t now, const Timespec64& wall_time,
                       const Timespec64& boot_offset) {
  Timespec64 wall = wall_time;
  Timespec64 boot = boot_offset;
  if (tk_internal::Timespec64ValidSettod(wall) && Timespec64ToKtime(wall) > 0) {
    persistent_clock_exists_ = true;
  } else if (Timespec64ToKtime(wall) != 0) {
    Log("Persistent clock returned invalid value");
    wall = Timespec64{};
  }
  if (Timespec64Compare(wall, boot) < 0) boot = Timespec64{};
  // wall time + wall_to_mono = boot time.
  const Timespec64 wall_to_mono = Timespec64Sub(boot, wall);

  const Clocksource* clock = &clocksources_.front();
  core_.ntp = Ntp(hz_, profile_.ntp, /*aux=*/false, ntp_tick_adj_);
  Timekeeper& tks = core_.shadow_timekeeper;
  tks = Timekeeper{};
  SetupInternals(tks, clock, now);
  TkSetXtime(tks, wall);
  tks.raw_sec = 0;
  TkSetWallToMono(tks, wall_to_mono);
  UpdateFromShadow(core_, kTkClockWasSet);
}

// Models tk_setup_internals(): the tick's cycles and shifted ns for
// `clock`, read at counter `now`; a clock change rescales xtime_nsec.
void Timekeeping::SetupInternals(Timekeeper& tk, const Clocksource* clock,
                                 uint64_t now) {
  ++tk.cs_was_changed_seq;
  const Clocksource* old_clock = tk.tkr_mono.clock;
  tk.tkr_mono.clock = clock;
  tk.tkr_mono.mask = clock->mask;
  tk.tkr_mono.cycle_last = now;
  tk.tkr_raw.clock = clock;
  tk.tkr_raw.mask = clock->mask;
  tk.tkr_raw.cycle_last = now;

  // Do the ns -> cycle conversion first, using the original mult.
  const uint64_t ntp_interval_length = kNsecPerSec / static_cast<uint64_t>(hz_);
  uint64_t tmp = ntp_interval_length << clock->shift;
  const uint64_t ntpinterval = tmp;
  tmp += clock->mult / 2;
  tmp /= clock->mult;
  if (tmp == 0) tmp = 1;
  const uint64_t interval = tmp;
  tk.cycle_interval = interval;

  // Go back from cycles -> shifted ns.
  tk.xtime_interval = interval * clock->mult;
  tk.xtime_remainder = static_cast<int64_t>(ntpinterval - tk.xtime_interval);
  tk.raw_interval = interval * clock->mult;

  // A new clocksource can have another shift: keep the time, change the
  // unit (a smaller shift drops the low bits).
  if (old_clock != nullptr) {
    const int shift_change =
        static_cast<int>(clock->shift) - static_cast<int>(old_clock->shift);
    if (shift_change < 0) {
      tk.tkr_mono.xtime_nsec >>= -shift_change;
      tk.tkr_raw.xtime_nsec >>= -shift_change;
    } else {
      tk.tkr_mono.xtime_nsec <<= shift_change;
      tk.tkr_raw.xtime_nsec <<= shift_change;
    }
  }

  tk.tkr_mono.shift = clock->shift;
  tk.tkr_raw.shift = clock->shift;

  tk.ntp_error = 0;
  tk.ntp_error_shift = static_cast<uint32_t>(kNtpScaleShift) - clock->shift;
  tk.ntp_tick = ntpinterval << tk.ntp_error_shift;

  // The timekeeper keeps its own mult, which NTP steers.
  tk.tkr_mono.mult = clock->mult;
  tk.tkr_raw.mult = clock->mult;
  tk.ntp_err_mult = 0;
  tk.skip_second_overflow = 0;
}

// Models timekeeping_forward() (6.15+; the body of timekeeping_forward_now()
// before): accumulate every cycle up to `now`. 6.10+ does it in max_cycles
// chunks so the products cannot overflow; before, in one product.
void Timekeeping::ForwardTo(Timekeeper& tk, uint64_t now) {
  uint64_t delta = Delta(tk.tkr_mono, now);
  tk.tkr_mono.cycle_last = now;
  tk.tkr_raw.cycle_last = now;
  if (!profile_.chunked_forward) {
    tk.tkr_mono.xtime_nsec += delta * tk.tkr_mono.mult;
    tk.tkr_raw.xtime_nsec += delta * tk.tkr_raw.mult;
    TkNormalizeXtime(tk);
    return;
  }
  const uint64_t max_cycles = tk.tkr_mono.clock->max_cycles;
  LoopGuard guard("timekeeping_forward()", &stalled_loop_);
  while (delta > 0 && guard.Next()) {
    const uint64_t incr = std::min(delta, max_cycles);
    tk.tkr_mono.xtime_nsec += incr * tk.tkr_mono.mult;
    tk.tkr_raw.xtime_nsec += incr * tk.tkr_raw.mult;
    TkNormalizeXtime(tk);
    delta -= incr;
  }
}

// Models timekeeping_forward_now(): forward, then (6.15+) the coarse clocks
// follow the accumulated time.
void Timekeeping::ForwardNow(Timekeeper& tk, uint64_t now) {
  ForwardTo(tk, now);
  TkUpdateCoarseNsecs(tk);
}

// Models timekeeping_update_from_shadow() (6.15+; timekeeping_update()
// before). The fast (NMI-safe) timekeepers and the pvclock notifier are not
// modelled. Before 6.15 the coarse clocks read tk_xtime() itself: the model
// keeps coarse_nsec equal to it at every update instead.
void Timekeeping::UpdateFromShadow(TkData& tkd, unsigned action) {
  Timekeeper& tk = tkd.shadow_timekeeper;
  if ((action & kTkClearNtp) != 0) {
    tk.ntp_error = 0;
    tkd.ntp.Clear();
  }
  if (!profile_.coarse_nsec) TkUpdateCoarseNsecs(tk);
  TkUpdateLeapState(tk, tkd.ntp);
  TkUpdateKtimeData(tk);
  // ktime_add(): s64 addition the kernel builds with -fno-strict-overflow,
  // so a base near KTIME_MAX (a sleep at the edge of the valid range) wraps.
  tk.tkr_mono.base_real =
      static_cast<uint64_t>(WrapAdd(tk.tkr_mono.base, tk.offs_real));
  if (sink_ != nullptr) {
    if (tk.id == kTimekeeperCore) {
      sink_->UpdateVsyscall(tk);
    } else {
      sink_->UpdateAux(tk);
    }
  }
  if ((action & kTkClockWasSet) != 0) ++tk.clock_was_set_seq;
  tkd.timekeeper = tk;  // The memcpy() to the real timekeeper.
}

// Models tk_update_leap_state_all(): the leap state of both copies, without
// a vDSO update.
void Timekeeping::UpdateLeapStateAll(TkData& tkd) {
  TkUpdateLeapState(tkd.shadow_timekeeper, tkd.ntp);
  tkd.timekeeper.next_leap_ktime = tkd.shadow_timekeeper.next_leap_ktime;
}

// Models accumulate_nsecs_to_secs(): carry seconds, run second_overflow()
// for each, and apply a leap second it returns.
unsigned Timekeeping::AccumulateNsecsToSecs(TkData& tkd) {
  Timekeeper& tk = tkd.shadow_timekeeper;
  const uint64_t nsecps = kNsecPerSec << tk.tkr_mono.shift;
  unsigned clock_set = 0;
  LoopGuard guard("accumulate_nsecs_to_secs()", &stalled_loop_);
  while (tk.tkr_mono.xtime_nsec >= nsecps && guard.Next()) {
    tk.tkr_mono.xtime_nsec -= nsecps;
    ++tk.xtime_sec;
    // This second was already accounted for when timekeeping_adjust()
    // borrowed it; do not run second_overflow() for it twice.
    if (tk.skip_second_overflow != 0) {
      tk.skip_second_overflow = 0;
      continue;
    }
    const int leap = tkd.ntp.SecondOverflow(static_cast<int64_t>(tk.xtime_sec));
    if (leap != 0) {
      // REALTIME steps back (insert) or forward (delete); MONOTONIC does
      // not, and TAI keeps counting.
      tk.xtime_sec += static_cast<uint64_t>(static_cast<int64_t>(leap));
      TkSetWallToMono(tk,
                      Timespec64Sub(tk.wall_to_monotonic, Timespec64{leap, 0}));
      TkSetTaiOffset(tk, tk.tai_offset - leap);
      clock_set = kTkClockWasSet;
      Log(leap < 0 ? "Clock: inserting leap second 23:59:60 UTC"
                   : "Clock: deleting leap second 23:59:59 UTC");
    }
  }
  return clock_set;
}

// Models logarithmic_accumulation(): consume one interval << shift.
uint64_t Timekeeping::LogarithmicAccumulation(TkData& tkd, uint64_t offset,
                                              uint32_t shift,
                                              unsigned* clock_set) {
  Timekeeper& tk = tkd.shadow_timekeeper;
  const uint64_t interval = tk.cycle_interval << shift;
  if (offset < interval) return offset;

  offset -= interval;
  tk.tkr_mono.cycle_last += interval;
  tk.tkr_raw.cycle_last += interval;

  tk.tkr_mono.xtime_nsec += tk.xtime_interval << shift;
  *clock_set |= AccumulateNsecsToSecs(tkd);

  // Raw time keeps its sub-ns remainder in shifted units (since v4.13).
  tk.tkr_raw.xtime_nsec += tk.raw_interval << shift;
  const uint64_t snsec_per_sec = kNsecPerSec << tk.tkr_raw.shift;
  LoopGuard guard("logarithmic_accumulation() raw seconds", &stalled_loop_);
  while (tk.tkr_raw.xtime_nsec >= snsec_per_sec && guard.Next()) {
    tk.tkr_raw.xtime_nsec -= snsec_per_sec;
    ++tk.raw_sec;
  }

  // Error between the NTP tick and what the clock accumulated. The kernel's
  // s64 += u64 arithmetic wraps; so does this.
  uint64_t error = static_cast<uint64_t>(tk.ntp_error);
  error += tk.ntp_tick << shift;
  error -= (tk.xtime_interval + static_cast<uint64_t>(tk.xtime_remainder))
           << (tk.ntp_error_shift + shift);
  tk.ntp_error = static_cast<int64_t>(error);
  return offset;
}

// Models timekeeping_apply_adjustment(): change mult by mult_adj while
// keeping time continuous at the unaccumulated `offset` cycles:
//   offset * mult + xtime_nsec == offset * (mult + adj) + xtime_nsec'
//   => xtime_nsec' = xtime_nsec - offset * adj.
void Timekeeping::ApplyAdjustment(Timekeeper& tk, int64_t offset,
                                  int32_t mult_adj) {
  int64_t interval = static_cast<int64_t>(tk.cycle_interval);
  if (mult_adj == 0) return;
  if (mult_adj == -1) {
    interval = -interval;
    offset = -offset;
  } else if (mult_adj != 1) {
    interval *= mult_adj;
    offset *= mult_adj;
  }
  if (mult_adj > 0 && static_cast<uint32_t>(tk.tkr_mono.mult + mult_adj) <
                          static_cast<uint32_t>(mult_adj)) {
    Warn("WARNING: NTP adjustment caused clocksource mult overflow");
    return;
  }
  tk.tkr_mono.mult += static_cast<uint32_t>(mult_adj);
  tk.xtime_interval += static_cast<uint64_t>(interval);
  tk.tkr_mono.xtime_nsec -= static_cast<uint64_t>(offset);
  if (profile_.apply_adjustment_ntp_error) {
    tk.ntp_error += static_cast<int64_t>(static_cast<uint64_t>(offset)
                                         << tk.ntp_error_shift);
  }
}

// Models timekeeping_adjust(): pick mult for the current NTP tick length,
// nudged by one while the clock is behind NTP.
void Timekeeping::Adjust(TkData& tkd, int64_t offset) {
  Timekeeper& tk = tkd.shadow_timekeeper;
  uint32_t mult;
  if (tk.ntp_tick == tkd.ntp.TickLength()) {
    mult = tk.tkr_mono.mult - tk.ntp_err_mult;
  } else {
    tk.ntp_tick = tkd.ntp.TickLength();
    mult = static_cast<uint32_t>(((tk.ntp_tick >> tk.ntp_error_shift) -
                                  static_cast<uint64_t>(tk.xtime_remainder)) /
                                 tk.cycle_interval);
  }
  tk.ntp_err_mult = tk.ntp_error > 0 ? 1 : 0;
  mult += tk.ntp_err_mult;

  ApplyAdjustment(tk, offset, static_cast<int32_t>(mult - tk.tkr_mono.mult));

  const Clocksource& clock = *tk.tkr_mono.clock;
  const int64_t moved = static_cast<int64_t>(tk.tkr_mono.mult) - clock.mult;
  if (clock.maxadj != 0 && (moved < 0 ? -moved : moved) > clock.maxadj &&
      !warned_maxadj_) {
    warned_maxadj_ = true;  // printk_once()
    Log(absl::StrFormat("Adjusting %s more than 11%% (%d vs %d)", clock.name,
                        tk.tkr_mono.mult, clock.mult + clock.maxadj));
  }

  // A faster mult can take xtime_nsec below zero right after a second was
  // accumulated: borrow the second back, and skip its second_overflow().
  if (static_cast<int64_t>(tk.tkr_mono.xtime_nsec) < 0) {
    tk.tkr_mono.xtime_nsec += kNsecPerSec << tk.tkr_mono.shift;
    --tk.xtime_sec;
    tk.skip_second_overflow = 1;
  }
}

// Models __timekeeping_advance() (6.15+, with coarse_nsec) on one timekeeper.
bool Timekeeping::AdvanceTkd(TkData& tkd, AdvanceMode mode, uint64_t now) {
  if (suspended_) return false;  // Make sure we're fully resumed.
  Timekeeper& tk = tkd.shadow_timekeeper;
  uint64_t offset = Delta(tk.tkr_mono, now);
  const uint64_t orig_offset = offset;
  // Nothing to do before a whole interval has passed, unless adjtimex()
  // wants the new frequency in force now.
  if (offset < tkd.timekeeper.cycle_interval && mode == AdvanceMode::kTick) {
    return false;
  }

  unsigned clock_set = 0;
  if (mode == AdvanceMode::kFreq &&
      profile_.defects.adjtimex_forwards_and_clears_error) {
    // 757b000f7b93's timekeeping_accumulate(): start the new mult from now
    // by forwarding, and drop the accumulated NTP error.
    ForwardTo(tk, tk.tkr_mono.cycle_last + offset);
    tk.ntp_error = 0;
    offset = 0;
  } else {
    // With NO_HZ many intervals may be due: accumulate the largest
    // doubling multiple of cycle_interval that fits, then smaller ones.
    int shift = Ilog2(offset) - Ilog2(tk.cycle_interval);
    shift = std::max(0, shift);
    // Bound shift to one less than what overflows tick_length.
    const int maxshift = (64 - (Ilog2(tkd.ntp.TickLength()) + 1)) - 1;
    shift = std::min(shift, maxshift);
    LoopGuard guard("timekeeping_advance() accumulation", &stalled_loop_);
    while (offset >= tk.cycle_interval && guard.Next()) {
      offset = LogarithmicAccumulation(
          tkd, offset, static_cast<uint32_t>(shift), &clock_set);
      if (offset < tk.cycle_interval << shift) --shift;
    }
  }

  Adjust(tkd, static_cast<int64_t>(offset));
  // After the rounding, xtime_nsec must not hold a whole second.
  clock_set |= AccumulateNsecsToSecs(tkd);
  // An adjtimex() call between ticks may move xtime_nsec back a little;
  // the coarse clocks only follow accumulated time.
  if (orig_offset != offset) TkUpdateCoarseNsecs(tk);

  UpdateFromShadow(tkd, clock_set);
  return clock_set != 0;
}

// Models update_wall_time(): the core timekeeper, then tk_aux_advance().
bool Timekeeping::Advance(AdvanceMode mode, uint64_t now) {
  const bool clock_set = AdvanceTkd(core_, mode, now);
  if (mode == AdvanceMode::kTick) {
    for (std::optional<TkData>& aux : aux_) {
      if (aux && aux->shadow_timekeeper.clock_valid) {
        AdvanceTkd(*aux, AdvanceMode::kTick, now);
      }
    }
  }
  return clock_set;
}

}  // namespace vdsolab::timekeeper
