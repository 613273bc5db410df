// Liveness (property 5, raw_rate): the timekeeper's own clocks keep pace
// with true time, and its loops end. Checked at each call's end from the
// timekeeper state a syscall then reads, so a timekeeper that freezes or
// runs away is a defect even where every reader is excused (a narrow
// counter, skewed CPUs): those excuses are about the readers' counters, and
// this check reads the timekeeping CPU's counter only.

#include "absl/strings/str_format.h"
#include "sim/checker.h"
#include "sim/checker_internal.h"
#include "timekeeper/posix_clocks.h"

namespace vdsolab::sim {

using checker_internal::FormatNs;
using checker_internal::ToNs;

void Checker::CheckTimekeeperLoops(const CallRecord& call) {
  const char* where = writer_->timekeeping().stalled_loop();
  if (where == nullptr || stall_reported_) return;
  stall_reported_ = true;
  ++stats_[static_cast<int>(Property::kLivelock) - 1].checked;
  ++coverage_.livelocks;
  Report(Property::kLivelock, Verdict::kDefect,
         "the timekeeper's loop did not terminate",
         absl::StrFormat("%s ran past its iteration bound by true time %s s "
                         "(stopped by the model's loop guard)",
                         where, FormatNs(static_cast<__int128>(call.end_ns))),
         call);
}

void Checker::CheckPace(const CallRecord& call) {
  if (!scenario_.checks.raw_rate) return;
  const uint64_t t = call.end_ns;
  // Calls come in the order they started: one preempted for long ends
  // after later ones. Its end is behind the anchor, where the lead's
  // "only shrinks" no longer holds (time runs backwards from it).
  if (pace_.valid && t < pace_.t_ns) return;
  const UpdateRecord& u = writer_->LatestStartedAt(t);
  // Every timekeeper state once, at its first call, and then every
  // kPaceEveryNs of true time (calls come every few us: checking each adds
  // nothing the next one would not see).
  if (pace_.valid && u.id == pace_last_update_ &&
      t < pace_last_ns_ + kPaceEveryNs) {
    return;
  }
  pace_last_ns_ = t;
  pace_last_update_ = u.id;
  const int cpu = scenario_.kernel.timekeeping_cpu;
  // The counter must be a function of true time (no steps, wobble or
  // jitter on the timekeeping CPU) for time to be one of the counter.
  Seen tk_side;
  tk_side.end_ns = t;
  tk_side.source = u.source;
  if (BrokenPrecondition(tk_side)) return;
  const CounterSources& sources = writer_->sources();
  const uint64_t mask = sources.Mask(u.source);
  const __int128 elapsed = sources.Ideal(u.source, cpu, t) - u.cycle_last_ideal;
  // A gap longer than the counter's range (a pause past max_raw_delta)
  // loses whole wraps in the kernel: time is then short by design.
  if (elapsed < 0 ||
      elapsed >
          static_cast<__int128>((mask >> 1) + (mask >> 2) + (mask >> 3)) ||
      u.wrap_losses != u.raw_epoch_wrap_losses) {
    pace_.valid = false;
    return;
  }
  timekeeper::SyscallContext ctx;
  ctx.cycles = writer_->SyscallCounter(u, cpu, t);
  const ClockResult raw =
      timekeeper::SysClockGettime(u.tk, kClockMonotonicRaw, ctx);
  const ClockResult mono =
      timekeeper::SysClockGettime(u.tk, kClockMonotonic, ctx);
  const ClockResult real =
      timekeeper::SysClockGettime(u.tk, kClockRealtime, ctx);
  const ClockResult coarse =
      timekeeper::SysClockGettime(u.tk, kClockMonotonicCoarse, ctx);
  PropertyStats& s = stats_[static_cast<int>(Property::kRawRate) - 1];
  ++s.checked;
  const timekeeper::TkReadBase& rb = u.tk.tkr_raw;
  const timekeeper::TkReadBase& mb = u.tk.tkr_mono;
  const uint64_t since_last = (ctx.cycles - mb.cycle_last) & mask;

  // RAW: exactly (counter since the epoch, unwrapped) * mult >> shift.
  const __int128 since_epoch =
      u.cycle_last_ideal - u.raw_epoch_ideal + since_last;
  const __int128 raw_want =
      static_cast<__int128>(u.raw_epoch_sec) * 1000000000 +
      static_cast<__int128>(
          (static_cast<unsigned __int128>(since_epoch) * rb.mult +
           u.raw_epoch_nsec) >>
          rb.shift);
  if (raw.ret != 0 || ToNs(raw.ts) != raw_want) {
    Report(
        Property::kRawRate, Verdict::kDefect,
        "the timekeeper's MONOTONIC_RAW does not keep pace with the "
        "counter",
        absl::StrFormat("syscall RAW %s at counter %#x (update %d, %s); "
                        "the epoch's raw conversion of %d cycles is %s",
                        FormatClockResult(raw), ctx.cycles, u.id, u.cause,
                        static_cast<uint64_t>(since_epoch), FormatNs(raw_want)),
        call);
    pace_.valid = false;
    return;
  }

  // Accumulation keeps up: right after a tick the timekeeper has
  // accumulated every whole interval (timekeeping_advance()), so at most
  // one interval is left; a timekeeper that stops accumulating freezes the
  // coarse clocks and, past max_cycles, the others.
  if (u.cause == "tick" && !writer_->timekeeping().suspended()) {
    const __int128 at_tick = u.start_ideal - u.cycle_last_ideal;
    if (at_tick >= static_cast<__int128>(u.tk.cycle_interval) + 1) {
      Report(Property::kRawRate, Verdict::kDefect,
             "the timekeeper stopped accumulating",
             absl::StrFormat("after the tick of update %d, %d cycles are "
                             "unaccumulated; cycle_interval is %d",
                             u.id, static_cast<uint64_t>(at_tick),
                             u.tk.cycle_interval),
             call);
      pace_.valid = false;
      return;
    }
  }

  // Coarse: the time accumulated at the last update; MONOTONIC adds the
  // counter since then at mult, so the lag is exactly that (+/- 1 ns of
  // truncation). 6.15+ reads coarse_nsec, refreshed only when cycles are
  // accumulated: an adjtimex() or offset between ticks moves xtime_nsec and
  // not it (docs/findings.md), so there only a tick that accumulated is
  // checked; the off-by-one-second case is the era oracle's.
  const __int128 lag = ToNs(mono.ts) - ToNs(coarse.ts);
  const __int128 added = static_cast<__int128>(
      (static_cast<unsigned __int128>(since_last) * mb.mult) >> mb.shift);
  const __int128 slack = 1;
  const UpdateRecord* before = writer_->Update(u.id - 1);
  const bool coarse_refreshed =
      !writer_->timekeeping().profile().coarse_nsec ||
      (u.cause == "tick" && before != nullptr &&
       before->tk.tkr_mono.cycle_last != mb.cycle_last);
  if (coarse_refreshed && !u.coarse_off_by_second &&
      (mono.ret != 0 || coarse.ret != 0 || lag < added - slack ||
       lag > added + slack)) {
    Report(Property::kRawRate, Verdict::kDefect,
           "the timekeeper's coarse clock does not follow its accumulation",
           absl::StrFormat("MONOTONIC %s, MONOTONIC_COARSE %s: lag %s s; the "
                           "%d cycles since the last accumulation are %s s "
                           "(+/- %s)",
                           FormatClockResult(mono), FormatClockResult(coarse),
                           FormatNs(lag), since_last, FormatNs(added),
                           FormatNs(slack)),
           call);
  }

  // MONOTONIC and REALTIME: NTP's rate against RAW within one setting.
  // ntp_error is NTP's time minus the clock's at the last accumulation, in
  // ns << NTP_SCALE_SHIFT (32).
  const __int128 e_now =
      static_cast<__int128>(u.tk.ntp_error) / (__int128{1} << 32);
  // The tick length the timekeeper steers to is the one timekeeping_adjust()
  // saw last (tk.ntp_tick: at boot NSEC_PER_SEC / HZ, then NTP's): intervals
  // accumulate at it. After a tick that accumulated it must be NTP's.
  const __int128 num =
      static_cast<__int128>(u.tk.ntp_tick >> u.tk.ntp_error_shift) -
      static_cast<__int128>(u.tk.xtime_remainder);
  const UpdateRecord* prev = writer_->Update(u.id - 1);
  if (u.cause == "tick" && prev != nullptr &&
      prev->tk.tkr_mono.cycle_last != mb.cycle_last &&
      num != static_cast<__int128>(u.mono_rate_num)) {
    Report(Property::kRawRate, Verdict::kDefect,
           "the timekeeper does not steer to NTP's tick length",
           absl::StrFormat("after the tick of update %d the timekeeper's tick "
                           "is %d shifted ns per interval; NTP's is %d",
                           u.id, static_cast<int64_t>(num), u.mono_rate_num),
           call);
    pace_.valid = false;
    return;
  }
  // Since the last accumulation the clock adds since_last * mult where NTP
  // adds since_last * (tick - xtime_remainder) / cycle_interval: the clock
  // is NTP's time minus ntp_error plus that difference.
  if (since_last > (uint64_t{1} << 62)) {
    pace_.valid = false;
    return;
  }
  const __int128 per_interval = static_cast<__int128>(mb.mult) *
                                    static_cast<__int128>(u.tk.cycle_interval) -
                                num;
  const __int128 mid_ns = (static_cast<__int128>(since_last) * per_interval /
                           static_cast<__int128>(u.tk.cycle_interval)) >>
                          mb.shift;
  const bool same = pace_.valid && pace_.ntp_generation == u.ntp_generation &&
                    pace_.ntp_tick == u.tk.ntp_tick &&
                    pace_.clock_was_set_seq == u.clock_was_set_seq &&
                    pace_.epoch_counter == u.raw_epoch_counter &&
                    pace_.epoch_sec == u.raw_epoch_sec &&
                    pace_.source == u.source;
  if (!same || mono.ret != 0 || real.ret != 0) {
    pace_ = PaceAnchor{true,
                       u.ntp_generation,
                       u.tk.ntp_tick,
                       u.clock_was_set_seq,
                       u.raw_epoch_counter,
                       u.raw_epoch_sec,
                       u.source,
                       raw_want,
                       ToNs(mono.ts),
                       ToNs(real.ts),
                       e_now,
                       mid_ns,
                       t};
    return;
  }
  const __int128 d_raw = raw_want - pace_.raw_ns;
  const __int128 d_mono = ToNs(mono.ts) - pace_.mono_ns;
  const __int128 d_real = ToNs(real.ts) - pace_.real_ns;
  const __int128 want = d_raw * num / static_cast<__int128>(u.mono_rate_den);
  // So the advance is exact but for truncation: 1 ns each for MONOTONIC,
  // RAW (at NTP's rate), ntp_error and the mid-interval term at both ends,
  // and the rate's division.
  const __int128 bound = 9;
  const __int128 diff =
      d_mono - want + (e_now - pace_.ntp_error_ns) - (mid_ns - pace_.mid_ns);
  // The clock's lead on NTP (the unaccumulated part's, less ntp_error):
  // timekeeping_adjust() steers it toward zero once per tick, so within one
  // setting it only shrinks, but for one mult step of overshoot and the
  // adjustment's own correction (each under cycle_interval shifted ns).
  // Across a window without ticks it grows unsteered: a new reference.
  const __int128 step =
      static_cast<__int128>(u.tk.cycle_interval >> mb.shift) + 1;
  const __int128 lead = mid_ns - e_now;
  const __int128 lead0 = pace_.mid_ns - pace_.ntp_error_ns;
  const __int128 lead_abs = lead < 0 ? -lead : lead;
  const __int128 lead0_abs = lead0 < 0 ? -lead0 : lead0;
  const bool unsteered = writer_->NoTickWindowBetween(pace_.t_ns, t);
  if (diff > bound || diff < -bound ||
      (!unsteered && lead_abs > lead0_abs + 2 * step + 2)) {
    Report(Property::kRawRate, Verdict::kDefect,
           "the timekeeper's MONOTONIC does not run at NTP's rate",
           absl::StrFormat("over %s s of RAW, MONOTONIC advanced %s s; NTP's "
                           "rate gives %s s, less the change in ntp_error "
                           "(%s s to %s s), plus the unaccumulated part's "
                           "(%s s to %s s), +/- %s s",
                           FormatNs(d_raw), FormatNs(d_mono), FormatNs(want),
                           FormatNs(pace_.ntp_error_ns), FormatNs(e_now),
                           FormatNs(pace_.mid_ns), FormatNs(mid_ns),
                           FormatNs(bound)),
           call);
    pace_.valid = false;
    return;
  }
  if (unsteered) {
    pace_.ntp_error_ns = e_now;
    pace_.mid_ns = mid_ns;
    pace_.raw_ns = raw_want;
    pace_.mono_ns = ToNs(mono.ts);
    pace_.real_ns = ToNs(real.ts);
    pace_.t_ns = t;
    return;
  }
  // REALTIME = MONOTONIC + offs_real, fixed until the clock is set.
  if (d_real - d_mono > 1 || d_mono - d_real > 1) {
    Report(Property::kRawRate, Verdict::kDefect,
           "the timekeeper's REALTIME does not keep pace with MONOTONIC",
           absl::StrFormat("REALTIME advanced %s s, MONOTONIC %s s, with no "
                           "clock setting between",
                           FormatNs(d_real), FormatNs(d_mono)),
           call);
    pace_.valid = false;
  }
}

}  // namespace vdsolab::sim
