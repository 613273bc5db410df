#include "ktime/internal/compare.h"

#include <algorithm>

#include "timekeeper/readers.h"

namespace vdsolab::ktime::internal {

namespace tk = ::vdsolab::timekeeper;

std::string WriterEra(const tk::TimekeeperProfile& profile) {
  return profile.era == "5.3" || profile.era == "6.1" ? profile.era : "6.10";
}

vdsolab_kt_timex ToKernel(const tk::Timex& t) {
  vdsolab_kt_timex k{};
  k.modes = t.modes;
  k.offset = t.offset;
  k.freq = t.freq;
  k.maxerror = t.maxerror;
  k.esterror = t.esterror;
  k.status = t.status;
  k.constant = t.constant;
  k.precision = t.precision;
  k.tolerance = t.tolerance;
  k.time_sec = t.time.tv_sec;
  k.time_usec = t.time.tv_usec;
  k.tick = t.tick;
  k.tai = t.tai;
  return k;
}

vdsolab_kt_clock ToKernelClock(const variants::ClocksourceRegistration& r) {
  vdsolab_kt_clock c{};
  c.mask = r.mask;
  c.scale = r.scale;
  c.freq = r.freq;
  c.vdso_clock_mode = r.vdso_clock_mode;
  c.rating = r.rating;
  c.suspend_nonstop = r.suspend_nonstop ? 1 : 0;
  return c;
}

namespace {

void CompareTkr(Diff& d, const char* which, const tk::TkReadBase& m,
                const vdsolab_kt_tkr& t) {
  const std::string p = which;
  d.Field((p + ".mask").c_str(), m.mask, t.mask);
  d.Field((p + ".cycle_last").c_str(), m.cycle_last, t.cycle_last);
  d.Field((p + ".mult").c_str(), m.mult, t.mult);
  d.Field((p + ".shift").c_str(), m.shift, t.shift);
  d.Field((p + ".xtime_nsec").c_str(), m.xtime_nsec, t.xtime_nsec);
  d.Field((p + ".base").c_str(), m.base, t.base);
  d.Field((p + ".base_real").c_str(), m.base_real, t.base_real);
}

}  // namespace

std::string CompareState(const tk::Timekeeping& model, const KernelTime& kt) {
  vdsolab_kt_state s{};
  kt.api().read_state(&s);
  const tk::Timekeeper& m = model.timekeeper();
  const tk::NtpData& n = model.ntp().data();
  Diff d;
  CompareTkr(d, "tkr_mono", m.tkr_mono, s.tkr_mono);
  CompareTkr(d, "tkr_raw", m.tkr_raw, s.tkr_raw);
  d.Field("xtime_sec", m.xtime_sec, s.xtime_sec);
  d.Field("ktime_sec", m.ktime_sec, s.ktime_sec);
  d.Field("raw_sec", m.raw_sec, s.raw_sec);
  d.Field("wall_to_monotonic.tv_sec", m.wall_to_monotonic.tv_sec, s.wtm_sec);
  d.Field("wall_to_monotonic.tv_nsec", m.wall_to_monotonic.tv_nsec, s.wtm_nsec);
  d.Field("offs_real", m.offs_real, s.offs_real);
  d.Field("offs_boot", m.offs_boot, s.offs_boot);
  d.Field("offs_tai", m.offs_tai, s.offs_tai);
  d.Field("monotonic_to_boot.tv_sec", m.monotonic_to_boot.tv_sec, s.mtb_sec);
  d.Field("monotonic_to_boot.tv_nsec", m.monotonic_to_boot.tv_nsec, s.mtb_nsec);
  d.Field("tai_offset", m.tai_offset, s.tai_offset);
  d.Field("next_leap_ktime", m.next_leap_ktime, s.next_leap_ktime);
  d.Field("cycle_interval", m.cycle_interval, s.cycle_interval);
  d.Field("xtime_interval", m.xtime_interval, s.xtime_interval);
  d.Field("xtime_remainder", m.xtime_remainder, s.xtime_remainder);
  d.Field("raw_interval", m.raw_interval, s.raw_interval);
  d.Field("ntp_tick", m.ntp_tick, s.ntp_tick);
  d.Field("ntp_error", m.ntp_error, s.ntp_error);
  d.Field("ntp_error_shift", m.ntp_error_shift, s.ntp_error_shift);
  d.Field("ntp_err_mult", m.ntp_err_mult, s.ntp_err_mult);
  d.Field("skip_second_overflow", m.skip_second_overflow,
          s.skip_second_overflow);
  d.Field("timekeeping_suspended", model.suspended() ? 1 : 0, s.suspended);
  d.Field("ntp.tick_usec", n.tick_usec, s.tick_usec);
  d.Field("ntp.tick_length", n.tick_length, s.tick_length);
  d.Field("ntp.tick_length_base", n.tick_length_base, s.tick_length_base);
  d.Field("ntp.time_state", n.time_state, s.time_state);
  d.Field("ntp.time_status", n.time_status, s.time_status);
  d.Field("ntp.time_offset", n.time_offset, s.time_offset);
  d.Field("ntp.time_constant", n.time_constant, s.time_constant);
  d.Field("ntp.time_maxerror", n.time_maxerror, s.time_maxerror);
  d.Field("ntp.time_esterror", n.time_esterror, s.time_esterror);
  d.Field("ntp.time_freq", n.time_freq, s.time_freq);
  d.Field("ntp.time_reftime", n.time_reftime, s.time_reftime);
  d.Field("ntp.time_adjust", n.time_adjust, s.time_adjust);
  d.Field("ntp.ntp_tick_adj", n.ntp_tick_adj, s.ntp_tick_adj);
  d.Field("ntp.next_leap_sec", n.next_leap_sec, s.ntp_next_leap_sec);
  return d.first();
}

std::string CompareRegistration(const tk::Clocksource& m,
                                const vdsolab_kt_clock_fields& f) {
  Diff d;
  d.Field("clocksource.mult", m.mult, f.mult);
  d.Field("clocksource.shift", m.shift, f.shift);
  d.Field("clocksource.maxadj", m.maxadj, f.maxadj);
  d.Field("clocksource.max_cycles", m.max_cycles, f.max_cycles);
  d.Field("clocksource.max_idle_ns", m.max_idle_ns, f.max_idle_ns);
  return d.first();
}

std::string CompareTimex(int model_ret, const tk::Timex& m, int tree_ret,
                         const vdsolab_kt_timex& t) {
  Diff d;
  d.Field("adjtimex return", model_ret, tree_ret);
  d.Field("txc.modes", m.modes, t.modes);
  d.Field("txc.offset", m.offset, t.offset);
  d.Field("txc.freq", m.freq, t.freq);
  d.Field("txc.maxerror", m.maxerror, t.maxerror);
  d.Field("txc.esterror", m.esterror, t.esterror);
  d.Field("txc.status", m.status, t.status);
  d.Field("txc.constant", m.constant, t.constant);
  d.Field("txc.precision", m.precision, t.precision);
  d.Field("txc.tolerance", m.tolerance, t.tolerance);
  d.Field("txc.time.tv_sec", m.time.tv_sec, t.time_sec);
  d.Field("txc.time.tv_usec", m.time.tv_usec, t.time_usec);
  d.Field("txc.tick", m.tick, t.tick);
  d.Field("txc.tai", m.tai, t.tai);
  return d.first();
}

const char* TreeClockName(int clock) {
  switch (clock) {
    case VDSOLAB_KT_CLOCK_REAL:
      return "ktime_get_real_ts64";
    case VDSOLAB_KT_CLOCK_MONOTONIC:
      return "ktime_get_ts64";
    case VDSOLAB_KT_CLOCK_RAW:
      return "ktime_get_raw_ts64";
    case VDSOLAB_KT_CLOCK_BOOTTIME:
      return "ktime_get_boottime_ts64";
    case VDSOLAB_KT_CLOCK_TAI:
      return "ktime_get_clocktai_ts64";
    case VDSOLAB_KT_CLOCK_COARSE_REAL:
      return "ktime_get_coarse_real_ts64";
    case VDSOLAB_KT_CLOCK_COARSE_MONO:
      return "ktime_get_coarse_ts64";
    default:
      return "?";
  }
}

Timespec64 ModelClock(const tk::Timekeeping& model, int clock,
                      uint64_t counter) {
  const tk::Timekeeper& t = model.timekeeper();
  const bool coarse_nsec = model.profile().coarse_nsec;
  switch (clock) {
    case VDSOLAB_KT_CLOCK_REAL:
      return tk::KtimeGetRealTs64(t, counter);
    case VDSOLAB_KT_CLOCK_MONOTONIC:
      return tk::KtimeGetTs64(t, counter);
    case VDSOLAB_KT_CLOCK_RAW:
      return tk::KtimeGetRawTs64(t, counter);
    case VDSOLAB_KT_CLOCK_BOOTTIME:
      return tk::KtimeGetBoottimeTs64(t, counter);
    case VDSOLAB_KT_CLOCK_TAI:
      return tk::KtimeGetClocktaiTs64(t, counter);
    case VDSOLAB_KT_CLOCK_COARSE_REAL:
      return coarse_nsec ? tk::KtimeGetCoarseRealTs64(t) : tk::TkXtimePre615(t);
    case VDSOLAB_KT_CLOCK_COARSE_MONO:
      return coarse_nsec ? tk::KtimeGetCoarseTs64(t)
                         : tk::KtimeGetCoarseTs64Pre615(t);
    default:
      return Timespec64{};
  }
}

std::vector<uint64_t> ReaderCounters(const tk::Timekeeper& t, uint64_t now,
                                     uint64_t pick) {
  const tk::TkReadBase& tkr = t.tkr_mono;
  std::vector<uint64_t> out;
  if (tkr.clock == nullptr) return out;
  const uint64_t mask = tkr.mask;
  // Comparable: within max_cycles, and the MSB of the masked delta clear.
  const uint64_t limit = std::min(tkr.clock->max_cycles, mask >> 1);
  if (((now - tkr.cycle_last) & mask) <= limit) out.push_back(now & mask);
  const uint64_t lo = tkr.clock->max_cycles / 2;
  if (lo <= limit) {
    // splitmix64's finaliser: a small `pick` (an operation's cycles)
    // lands anywhere in the range.
    uint64_t h = pick + 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
    const uint64_t delta = lo + h % (limit - lo + 1);
    out.push_back((tkr.cycle_last + delta) & mask);
  }
  return out;
}

}  // namespace vdsolab::ktime::internal
