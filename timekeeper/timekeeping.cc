#include "timekeeper/timekeeping.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/math64.h"

namespace vdsolab::timekeeper {
namespace {

constexpr unsigned kTkClearNtp = 1u << 0;     // TK_CLEAR_NTP
constexpr unsigned kTkClockWasSet = 1u << 1;  // TK_CLOCK_WAS_SET
constexpr unsigned kTkUpdateAll = kTkClearNtp | kTkClockWasSet;

// TIME_UPTIME_SEC_MAX and TIME_SETTOD_SEC_MAX (include/linux/time64.h).
constexpr int64_t kTimeUptimeSecMax = int64_t{30} * 365 * 86400;
constexpr int64_t kTimeSettodSecMax = kKtimeSecMax - kTimeUptimeSecMax;

// ilog2() of a run-time value: fls64(n) - 1, so -1 for 0.
int Ilog2(uint64_t n) { return 63 - std::countl_zero(n); }

// timespec64_valid_settod().
bool Timespec64ValidSettod(const Timespec64& ts) {
  if (ts.tv_sec < 0 || ts.tv_nsec < 0 ||
      ts.tv_nsec >= static_cast<int64_t>(kNsecPerSec)) {
    return false;
  }
  return static_cast<uint64_t>(ts.tv_sec) <
         static_cast<uint64_t>(kTimeSettodSecMax);
}

// tk_normalize_xtime(): carry whole seconds out of both xtime_nsec fields.
void TkNormalizeXtime(Timekeeper& tk) {
  while (tk.tkr_mono.xtime_nsec >= (kNsecPerSec << tk.tkr_mono.shift)) {
    tk.tkr_mono.xtime_nsec -= kNsecPerSec << tk.tkr_mono.shift;
    ++tk.xtime_sec;
  }
  while (tk.tkr_raw.xtime_nsec >= (kNsecPerSec << tk.tkr_raw.shift)) {
    tk.tkr_raw.xtime_nsec -= kNsecPerSec << tk.tkr_raw.shift;
    ++tk.raw_sec;
  }
}

// tk_update_coarse_nsecs() (6.15+): the coarse clocks' ns moves only when
// time is accumulated or set, never by the mult adjustment.
void TkUpdateCoarseNsecs(Timekeeper& tk) {
  tk.coarse_nsec =
      static_cast<uint32_t>(tk.tkr_mono.xtime_nsec >> tk.tkr_mono.shift);
}

// tk_xtime(): REALTIME at cycle_last.
Timespec64 TkXtime(const Timekeeper& tk) {
  return Timespec64{
      static_cast<int64_t>(tk.xtime_sec),
      static_cast<int64_t>(tk.tkr_mono.xtime_nsec >> tk.tkr_mono.shift)};
}

// tk_set_xtime().
void TkSetXtime(Timekeeper& tk, const Timespec64& ts) {
  tk.xtime_sec = static_cast<uint64_t>(ts.tv_sec);
  tk.tkr_mono.xtime_nsec = static_cast<uint64_t>(ts.tv_nsec)
                           << tk.tkr_mono.shift;
  TkUpdateCoarseNsecs(tk);
}

// tk_set_wall_to_mono(): keeps offs_real = -wall_to_monotonic and
// offs_tai = offs_real + tai_offset.
void TkSetWallToMono(Timekeeper& tk, const Timespec64& wtm) {
  tk.wall_to_monotonic = wtm;
  const Timespec64 neg = SetNormalizedTimespec64(-wtm.tv_sec, -wtm.tv_nsec);
  tk.offs_real = Timespec64ToKtime(neg);
  tk.offs_tai =
      tk.offs_real + int64_t{tk.tai_offset} * static_cast<int64_t>(kNsecPerSec);
}

// __timekeeping_set_tai_offset().
void TkSetTaiOffset(Timekeeper& tk, int32_t tai_offset) {
  tk.tai_offset = tai_offset;
  tk.offs_tai =
      tk.offs_real + int64_t{tai_offset} * static_cast<int64_t>(kNsecPerSec);
}

// tk_update_ktime_data(): the ktime_t bases of the ktime_get*() readers.
void TkUpdateKtimeData(Timekeeper& tk) {
  uint64_t seconds = static_cast<uint64_t>(static_cast<int64_t>(tk.xtime_sec) +
                                           tk.wall_to_monotonic.tv_sec);
  uint32_t nsec = static_cast<uint32_t>(tk.wall_to_monotonic.tv_nsec);
  tk.tkr_mono.base = static_cast<Ktime>(seconds * kNsecPerSec + nsec);
  // xtime's and wtm's ns parts can sum to a whole second.
  nsec += static_cast<uint32_t>(tk.tkr_mono.xtime_nsec >> tk.tkr_mono.shift);
  if (nsec >= kNsecPerSec) ++seconds;
  tk.ktime_sec = seconds;
  tk.tkr_raw.base = static_cast<Ktime>(tk.raw_sec * kNsecPerSec);
}

}  // namespace

Timekeeping::Timekeeping(const Clocksource& clock, int hz, VsyscallSink* sink)
    : clock_(std::make_shared<const Clocksource>(clock)),
      hz_(hz),
      sink_(sink),
      ntp_(hz) {}

void Timekeeping::Log(std::string message) {
  constexpr size_t kMaxLog = 64;
  if (log_.size() < kMaxLog) log_.push_back(std::move(message));
}

// Models timekeeping_init() with the clocksource already chosen.
void Timekeeping::Init(uint64_t now, const Timespec64& wall_time,
                       const Timespec64& boot_offset) {
  Timespec64 wall = wall_time;
  Timespec64 boot = boot_offset;
  if (!Timespec64ValidSettod(wall) || Timespec64ToKtime(wall) <= 0) {
    if (Timespec64ToKtime(wall) != 0) {
      Log("Persistent clock returned invalid value");
    }
    wall = Timespec64{};
  }
  if (Timespec64Compare(wall, boot) < 0) boot = Timespec64{};
  // wall time + wall_to_mono = boot time.
  const Timespec64 wall_to_mono = Timespec64Sub(boot, wall);

  ntp_ = Ntp(hz_);
  shadow_ = Timekeeper{};
  SetupInternals(now);
  TkSetXtime(shadow_, wall);
  shadow_.raw_sec = 0;
  TkSetWallToMono(shadow_, wall_to_mono);
  UpdateFromShadow(kTkClockWasSet);
}

// Models tk_setup_internals() for a first clocksource (no old clock to
// rescale xtime_nsec from).
void Timekeeping::SetupInternals(uint64_t now) {
  Timekeeper& tk = shadow_;
  const Clocksource& clock = *clock_;
  ++tk.cs_was_changed_seq;
  tk.tkr_mono.clock = &clock;
  tk.tkr_mono.mask = clock.mask;
  tk.tkr_mono.cycle_last = now;
  tk.tkr_raw.clock = &clock;
  tk.tkr_raw.mask = clock.mask;
  tk.tkr_raw.cycle_last = now;

  // Do the ns -> cycle conversion first, using the original mult.
  const uint64_t ntp_interval_length = kNsecPerSec / static_cast<uint64_t>(hz_);
  uint64_t tmp = ntp_interval_length << clock.shift;
  const uint64_t ntpinterval = tmp;
  tmp += clock.mult / 2;
  tmp /= clock.mult;
  if (tmp == 0) tmp = 1;
  const uint64_t interval = tmp;
  tk.cycle_interval = interval;

  // Go back from cycles -> shifted ns.
  tk.xtime_interval = interval * clock.mult;
  tk.xtime_remainder = static_cast<int64_t>(ntpinterval - tk.xtime_interval);
  tk.raw_interval = interval * clock.mult;

  tk.tkr_mono.shift = clock.shift;
  tk.tkr_raw.shift = clock.shift;

  tk.ntp_error = 0;
  tk.ntp_error_shift = static_cast<uint32_t>(kNtpScaleShift) - clock.shift;
  tk.ntp_tick = ntpinterval << tk.ntp_error_shift;

  // The timekeeper keeps its own mult, which NTP steers.
  tk.tkr_mono.mult = clock.mult;
  tk.tkr_raw.mult = clock.mult;
  tk.ntp_err_mult = 0;
  tk.skip_second_overflow = 0;
}

// Models timekeeping_forward_now() (6.10+: chunked by max_cycles so the
// products cannot overflow).
void Timekeeping::ForwardNow(Timekeeper& tk, uint64_t now) {
  uint64_t delta = ClocksourceDelta(now, tk.tkr_mono.cycle_last,
                                    tk.tkr_mono.mask, clock_->max_raw_delta);
  tk.tkr_mono.cycle_last = now;
  tk.tkr_raw.cycle_last = now;
  while (delta > 0) {
    const uint64_t incr = std::min(delta, clock_->max_cycles);
    tk.tkr_mono.xtime_nsec += incr * tk.tkr_mono.mult;
    tk.tkr_raw.xtime_nsec += incr * tk.tkr_raw.mult;
    TkNormalizeXtime(tk);
    delta -= incr;
  }
  TkUpdateCoarseNsecs(tk);
}

// Models timekeeping_update_from_shadow() with timekeeping_update() inlined.
// The fast (NMI-safe) timekeepers and the pvclock notifier are not modelled.
void Timekeeping::UpdateFromShadow(unsigned action) {
  Timekeeper& tk = shadow_;
  if ((action & kTkClearNtp) != 0) {
    tk.ntp_error = 0;
    ntp_.Clear();
  }
  // tk_update_leap_state(): no leap can be pending until ADJ_STATUS is
  // modelled, so ntp_get_next_leap() is KTIME_MAX.
  tk.next_leap_ktime = kKtimeMax;
  TkUpdateKtimeData(tk);
  if (sink_ != nullptr) sink_->UpdateVsyscall(tk);
  tk.tkr_mono.base_real =
      static_cast<uint64_t>(tk.tkr_mono.base + tk.offs_real);
  if ((action & kTkClockWasSet) != 0) ++tk.clock_was_set_seq;
  real_ = tk;  // The memcpy() to tk_core.timekeeper under tk_core.seq.
}

// Models accumulate_nsecs_to_secs().
unsigned Timekeeping::AccumulateNsecsToSecs(Timekeeper& tk) {
  const uint64_t nsecps = kNsecPerSec << tk.tkr_mono.shift;
  unsigned clock_set = 0;
  while (tk.tkr_mono.xtime_nsec >= nsecps) {
    tk.tkr_mono.xtime_nsec -= nsecps;
    ++tk.xtime_sec;
    // This second was already accounted for when timekeeping_adjust()
    // borrowed it; do not run second_overflow() for it twice.
    if (tk.skip_second_overflow != 0) {
      tk.skip_second_overflow = 0;
      continue;
    }
    const int leap = ntp_.SecondOverflow(static_cast<int64_t>(tk.xtime_sec));
    if (leap != 0) {
      tk.xtime_sec += static_cast<uint64_t>(static_cast<int64_t>(leap));
      TkSetWallToMono(tk,
                      Timespec64Sub(tk.wall_to_monotonic, Timespec64{leap, 0}));
      TkSetTaiOffset(tk, tk.tai_offset - leap);
      clock_set = kTkClockWasSet;
    }
  }
  return clock_set;
}

// Models logarithmic_accumulation(): consume one interval << shift.
uint64_t Timekeeping::LogarithmicAccumulation(Timekeeper& tk, uint64_t offset,
                                              uint32_t shift,
                                              unsigned* clock_set) {
  const uint64_t interval = tk.cycle_interval << shift;
  if (offset < interval) return offset;

  offset -= interval;
  tk.tkr_mono.cycle_last += interval;
  tk.tkr_raw.cycle_last += interval;

  tk.tkr_mono.xtime_nsec += tk.xtime_interval << shift;
  *clock_set |= AccumulateNsecsToSecs(tk);

  // Raw time keeps its sub-ns remainder in shifted units (since v4.13).
  tk.tkr_raw.xtime_nsec += tk.raw_interval << shift;
  const uint64_t snsec_per_sec = kNsecPerSec << tk.tkr_raw.shift;
  while (tk.tkr_raw.xtime_nsec >= snsec_per_sec) {
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
    Log("WARNING: NTP adjustment caused clocksource mult overflow");
    return;
  }
  tk.tkr_mono.mult += static_cast<uint32_t>(mult_adj);
  tk.xtime_interval += static_cast<uint64_t>(interval);
  tk.tkr_mono.xtime_nsec -= static_cast<uint64_t>(offset);
  tk.ntp_error +=
      static_cast<int64_t>(static_cast<uint64_t>(offset) << tk.ntp_error_shift);
}

// Models timekeeping_adjust(): pick mult for the current NTP tick length,
// nudged by one while the clock is behind NTP.
void Timekeeping::Adjust(Timekeeper& tk, int64_t offset) {
  uint32_t mult;
  if (tk.ntp_tick == ntp_.TickLength()) {
    mult = tk.tkr_mono.mult - tk.ntp_err_mult;
  } else {
    tk.ntp_tick = ntp_.TickLength();
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

// Models timekeeping_advance() (6.15+, with coarse_nsec).
bool Timekeeping::Advance(AdvanceMode mode, uint64_t now) {
  Timekeeper& tk = shadow_;
  uint64_t offset = ClocksourceDelta(now, tk.tkr_mono.cycle_last,
                                     tk.tkr_mono.mask, clock_->max_raw_delta);
  const uint64_t orig_offset = offset;
  // Nothing to do before a whole interval has passed, unless adjtimex()
  // wants the new frequency in force now.
  if (offset < real_.cycle_interval && mode == AdvanceMode::kTick) {
    return false;
  }

  // With NO_HZ many intervals may be due: accumulate the largest doubling
  // multiple of cycle_interval that fits, then smaller ones.
  int shift = Ilog2(offset) - Ilog2(tk.cycle_interval);
  shift = std::max(0, shift);
  // Bound shift to one less than what overflows tick_length.
  const int maxshift = (64 - (Ilog2(ntp_.TickLength()) + 1)) - 1;
  shift = std::min(shift, maxshift);
  unsigned clock_set = 0;
  while (offset >= tk.cycle_interval) {
    offset = LogarithmicAccumulation(tk, offset, static_cast<uint32_t>(shift),
                                     &clock_set);
    if (offset < tk.cycle_interval << shift) --shift;
  }

  Adjust(tk, static_cast<int64_t>(offset));
  // After the rounding, xtime_nsec must not hold a whole second.
  clock_set |= AccumulateNsecsToSecs(tk);
  // An adjtimex() call between ticks may move xtime_nsec back a little;
  // the coarse clocks only follow accumulated time.
  if (orig_offset != offset) TkUpdateCoarseNsecs(tk);

  UpdateFromShadow(clock_set);
  return clock_set != 0;
}

// Models do_adjtimex() for ADJ_FREQUENCY / ADJ_TICK: no TAI change and no
// leap state to refresh, then the immediate TK_ADV_FREQ.
absl::StatusOr<int> Timekeeping::Adjtimex(const Timex& txc, uint64_t now) {
  absl::StatusOr<int> ret = ntp_.Adjtimex(txc);
  if (!ret.ok() || *ret < 0) return ret;
  if ((txc.modes & (kAdjFrequency | kAdjTick)) != 0) {
    Advance(AdvanceMode::kFreq, now);
  }
  return ret;
}

// Models do_settimeofday64().
int Timekeeping::SetTimeOfDay(const Timespec64& ts, uint64_t now) {
  if (!Timespec64ValidSettod(ts)) return -kEinval;
  Timekeeper& tks = shadow_;
  ForwardNow(tks, now);
  const Timespec64 ts_delta = Timespec64Sub(ts, TkXtime(tks));
  // MONOTONIC = REALTIME + wall_to_monotonic must not go negative.
  if (Timespec64Compare(tks.wall_to_monotonic, ts_delta) > 0) {
    RestoreShadow();
    return -kEinval;
  }
  TkSetWallToMono(tks, Timespec64Sub(tks.wall_to_monotonic, ts_delta));
  TkSetXtime(tks, ts);
  UpdateFromShadow(kTkUpdateAll);
  return 0;
}

}  // namespace vdsolab::timekeeper
