#include "sim/oracle_run.h"

#include <algorithm>
#include <climits>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/limits.h"
#include "common/math64.h"
#include "common/rng.h"
#include "sim/counter.h"
#include "sim/page_publisher.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeping.h"
#include "variants/era_oracle.h"
#include "vdso/access.h"
#include "vdso/vvar_page.h"

namespace vdsolab::sim {
namespace {

// Every clock id the syscall knows, plus invalid ones the vDSO must reject
// the same way.
constexpr ClockId kSampledClocks[] = {0, 1, 2,  3,  4,  5,       6,      7,
                                      8, 9, 10, 11, -1, INT_MIN, INT_MAX};
constexpr uint64_t kMaxReads = 200000000;
constexpr size_t kMaxFailures = 5;

// The reader's view of the machine for one call: the counter at the read's
// true time, the syscall at that same counter, and a stable page.
class ReadHooks : public vdso::AccessHooks {
 public:
  // `hz`: clock_getres()'s (the reader's compiled CONFIG_HZ, if it says).
  ReadHooks(const variants::Variant* variant,
            const variants::PublishContext* publish,
            const timekeeper::Timekeeping* tk,
            const timekeeper::SyscallContext& ctx, int hz)
      : variant_(variant), publish_(publish), tk_(tk), ctx_(ctx), hz_(hz) {}
  void BeforeLoad(uint32_t, uint32_t) override {}
  uint64_t ReadCounter(vdso::CounterRead /*kind*/) override {
    return ctx_.cycles;
  }
  bool MayRetry() override { return ++spins_ < 1000; }
  ClockResult Fallback(ClockId clock) override {
    fell_back = true;
    return variants::VariantSyscall(*variant_, *publish_, tk_->timekeeper(),
                                    clock, ctx_);
  }
  GtodResult GettimeofdayFallback() override {
    fell_back = true;
    return timekeeper::SysGettimeofday(tk_->timekeeper(), ctx_);
  }
  ClockResult ClockGetresFallback(ClockId clock) override {
    fell_back = true;
    // An own clock standing for a kernel clock has its resolution.
    return timekeeper::SysClockGetres(variants::JudgedAs(*variant_, clock),
                                      ctx_, publish_->hrtimer_res, hz_);
  }
  void OnFault(const vdso::CallFault& f) override { fault = f; }
  bool fell_back = false;
  std::optional<vdso::CallFault> fault;

 private:
  const variants::Variant* variant_;
  const variants::PublishContext* publish_;
  const timekeeper::Timekeeping* tk_;
  timekeeper::SyscallContext ctx_;
  int hz_;
  int spins_ = 0;
};

// One read of a reader's other entry point (variants::EntryPoint) at the
// hooks' counter: what it answered ("" with *ok false when it answered
// nothing) and what the model's system call says. gettimeofday() is the
// era's REALTIME at the counter in microseconds (as clock_gettime() rows
// are judged here), unless it fell back.
struct EntryRead {
  bool answered = false;
  bool error = false;  // It answered -errno.
  bool ok = false;
  std::string got, want;
};
// The call as a failure names it: "time(NULL)", "clock_getres(1)".
// `null_arg`: the pointer a caller may leave NULL is; `tv_null`:
// gettimeofday(NULL, &tz).
std::string EntryCall(variants::EntryPoint e, ClockId getres_id, bool null_arg,
                      bool tv_null) {
  switch (e) {
    case variants::EntryPoint::kGettimeofday:
      return tv_null    ? "gettimeofday(NULL, tz)"
             : null_arg ? "gettimeofday(tv, NULL)"
                        : "gettimeofday()";
    case variants::EntryPoint::kTime:
      return null_arg ? "time(NULL)" : "time()";
    case variants::EntryPoint::kClockGetres:
      return absl::StrFormat("clock_getres(%d%s)", getres_id,
                             null_arg ? ", NULL" : "");
  }
  return "?";
}

// `getres_as`: the kernel clock whose clock_getres() answers getres_id
// (itself, or what an own clock stands for).
EntryRead ReadEntryPoint(variants::SimReader& reader, variants::EntryPoint e,
                         ClockId getres_id, ClockId getres_as, bool null_arg,
                         bool tv_null, vdso::HookedAccess& access,
                         const uint8_t* page, ReadHooks& hooks,
                         const variants::EraOracle& oracle,
                         const timekeeper::Timekeeper& tk,
                         const timekeeper::SyscallContext& ctx,
                         uint32_t hrtimer_res, int hz) {
  EntryRead r;
  switch (e) {
    case variants::EntryPoint::kGettimeofday: {
      const std::optional<GtodResult> got =
          reader.Gettimeofday(access, page,
                              tv_null    ? variants::GtodArgs::kTzOnly
                              : null_arg ? variants::GtodArgs::kTvOnly
                                         : variants::GtodArgs::kBoth);
      const ClockResult rt = oracle.Expected(tk, kClockRealtime, ctx.cycles);
      GtodResult want = !hooks.fell_back && rt.ret == 0
                            ? GtodFromRealtime(rt.ts)
                            : timekeeper::SysGettimeofday(tk, ctx);
      if (null_arg) want.tz_minuteswest = want.tz_dsttime = 0;
      if (tv_null) want.tv_sec = want.tv_usec = 0;
      r.answered = got.has_value();
      r.error = got && got->ret != 0;
      r.ok = got && *got == want;
      if (got) r.got = FormatGtodResult(*got);
      r.want = FormatGtodResult(want);
      break;
    }
    case variants::EntryPoint::kTime: {
      const std::optional<variants::SimReader::TimeResult> got =
          reader.Time(access, page, null_arg);
      const int64_t want = timekeeper::SysTime(tk);
      r.answered = got.has_value();
      r.ok = got && got->ret == want && (null_arg || got->stored == want);
      if (got) {
        r.got = null_arg
                    ? absl::StrFormat("%d (time(NULL))", got->ret)
                    : absl::StrFormat("%d (stored %d)", got->ret, got->stored);
      }
      r.want = absl::StrFormat("%d", want);
      break;
    }
    case variants::EntryPoint::kClockGetres: {
      const std::optional<ClockResult> got =
          reader.ClockGetres(access, page, getres_id, null_arg);
      ClockResult want =
          timekeeper::SysClockGetres(getres_as, ctx, hrtimer_res, hz);
      // clock_getres(id, NULL): the return value alone.
      if (null_arg && want.ret == 0) want = ClockResult::Ok(Timespec64{0, 0});
      r.answered = got.has_value();
      r.error = got && got->ret != 0;
      r.ok = got && *got == want;
      if (got) r.got = FormatClockResult(*got);
      r.want = FormatClockResult(want);
      break;
    }
  }
  return r;
}

struct Event {
  uint64_t at_ns;
  bool adjtimex;  // Otherwise a tick.
};

}  // namespace

bool OracleRunReport::ok_accepting(bool known) const {
  for (const ClockStats& s : clocks) {
    const uint64_t failing_back = known ? s.backwards - s.known : s.backwards;
    if (s.mismatches != 0 || failing_back != 0 || s.page_path_lost) {
      return false;
    }
  }
  return !clocks.empty();
}

absl::Status ValidateOracleRunConfig(const OracleRunConfig& c) {
  if (c.tsc_hz < 1000000 || c.tsc_hz > 10000000000ull) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TSC frequency %d Hz is outside 1 MHz .. 10 GHz", c.tsc_hz));
  }
  if (c.hz < 10 || c.hz > 10000) {
    return absl::InvalidArgumentError(
        absl::StrFormat("HZ %d is outside 10 .. 10000", c.hz));
  }
  if (c.ntp_freq < -(500ll << 16) || c.ntp_freq > (500ll << 16)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("NTP frequency %.3f ppm is outside -500 .. 500 ppm",
                        static_cast<double>(c.ntp_freq) / 65536.0));
  }
  if (c.duration_ns == 0 || c.duration_ns > kMaxSimulatedNs) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "duration must be positive and at most %s", kMaxSimulatedText));
  }
  if (c.reads_per_tick == 0) {
    return absl::InvalidArgumentError("reads per tick must be positive");
  }
  const unsigned __int128 reads =
      static_cast<unsigned __int128>(c.duration_ns) * c.hz / kNsecPerSec *
      c.reads_per_tick;
  if (reads > kMaxReads) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d ticks x %d reads per tick is more than %d reads; shorten the "
        "duration or lower the read rate",
        static_cast<uint64_t>(c.duration_ns / (kNsecPerSec / c.hz)),
        c.reads_per_tick, kMaxReads));
  }
  if (c.boot_wall && (c.boot_wall->tv_sec < 0 || c.boot_wall->tv_nsec < 0 ||
                      c.boot_wall->tv_nsec >= 1000000000)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("boot wall time %s is not a valid timespec",
                        FormatTimespec(*c.boot_wall)));
  }
  if (c.tick_jitter_ns >= kNsecPerSec / static_cast<uint64_t>(c.hz)) {
    return absl::InvalidArgumentError(
        "tick jitter must be shorter than the tick period");
  }
  return absl::OkStatus();
}

absl::StatusOr<OracleRunReport> RunOracleCheck(
    const OracleRunConfig& config, const variants::Variant& variant) {
  if (absl::Status s = ValidateOracleRunConfig(config); !s.ok()) return s;
  if (variant.timekeeping != nullptr) {
    // This job publishes with the model itself; it would not run the
    // tree's timekeeper, so it does not pretend to.
    return absl::InvalidArgumentError(absl::StrFormat(
        "--kernel-time: the default job publishes with the timekeeper "
        "model; run %s's timekeeper with `vdsolab run SCENARIO` or "
        "`vdsolab compare`",
        variant.timekeeping->name));
  }
  Rng rng(config.seed);
  OracleRunReport report;
  report.config = config;
  report.variant = std::string(variant.name);

  // The machine: a TSC from a seeded start value; the kernel calibrated it
  // to whole kHz.
  CounterModel tsc{config.tsc_hz, rng.InRange(1ull << 30, 1ull << 40), ~0ull};
  report.tsc_khz = static_cast<uint32_t>(config.tsc_hz / 1000);
  absl::StatusOr<timekeeper::Clocksource> cs =
      timekeeper::MakeTscClocksource(report.tsc_khz);
  if (!cs.ok()) return cs.status();

  absl::StatusOr<std::unique_ptr<vdso::VvarPage>> page_or =
      vdso::VvarPage::Create();
  if (!page_or.ok()) return page_or.status();
  std::unique_ptr<vdso::VvarPage> page = std::move(*page_or);
  PagePublisher publisher(&variant, page.get());
  publisher.context.tsc_khz = report.tsc_khz;
  timekeeper::Timekeeping tk(*cs, config.hz, &publisher);

  // Boot on 2025-11-30 plus a seeded offset; MONOTONIC starts at ~1.x s.
  Timespec64 wall{1764460800 + static_cast<int64_t>(rng.Below(86400)),
                  static_cast<int64_t>(rng.Below(kNsecPerSec))};
  if (config.boot_wall) wall = *config.boot_wall;
  const Timespec64 boot{1, static_cast<int64_t>(rng.Below(kNsecPerSec))};
  publisher.context.boot_counter = tsc.At(0);
  tk.Init(tsc.At(0), wall, boot);
  // What a correct reader of the variant's era answers.
  const variants::EraOracle oracle(variant, publisher.context,
                                   variants::CounterFacts{true, true});
  const std::unique_ptr<variants::SimReader> reader = variant.make_sim_reader();
  report.mult = cs->mult;
  report.shift = cs->shift;
  report.max_cycles = cs->max_cycles;
  report.cycle_interval = tk.timekeeper().cycle_interval;

  // Ticks every 1/HZ s, each up to tick_jitter_ns late; one adjtimex().
  std::vector<Event> events;
  const uint64_t period = kNsecPerSec / static_cast<uint64_t>(config.hz);
  for (uint64_t k = 1; k * period < config.duration_ns; ++k) {
    events.push_back(
        {k * period + rng.InRange(0, config.tick_jitter_ns), false});
  }
  events.push_back({config.ntp_at_ns, true});
  std::stable_sort(
      events.begin(), events.end(),
      [](const Event& a, const Event& b) { return a.at_ns < b.at_ns; });
  events.push_back({config.duration_ns, false});  // End marker.

  // Every kernel clock id, invalid ones, and the variant's own clocks.
  std::vector<ClockId> sampled(std::begin(kSampledClocks),
                               std::end(kSampledClocks));
  for (const variants::ClockDef& c : variant.own_clocks) {
    sampled.push_back(c.id);
  }
  const size_t num_clocks = sampled.size();
  report.clocks.resize(sampled.size());
  for (size_t i = 0; i < num_clocks; ++i) {
    report.clocks[i].clock = sampled[i];
    report.clocks[i].name = variants::VariantClockName(variant, sampled[i]);
  }
  // The reader's other entry points, where it has them (kernel trees):
  // one row each after the clocks, sampled like them. clock_getres() takes
  // the sampled clock ids in turn.
  std::vector<variants::EntryPoint> entries;
  for (auto [e, name] :
       {std::pair{variants::EntryPoint::kGettimeofday, "gettimeofday()"},
        std::pair{variants::EntryPoint::kTime, "time()"},
        std::pair{variants::EntryPoint::kClockGetres, "clock_getres()"}}) {
    if (!reader->has_entry_point(e)) continue;
    entries.push_back(e);
    ClockStats row;
    row.name = name;
    row.entry_point = name;
    report.clocks.push_back(row);
  }
  const int num_sampled = static_cast<int>(report.clocks.size());
  const int getres_hz =
      reader->config_hz() != 0 ? reader->config_hz() : config.hz;
  size_t getres_next = 0;
  std::vector<std::optional<Timespec64>> last(sampled.size());
  // 6.15+: whether the page's coarse clocks are a second off (xtime_sec
  // moved by an adjtimex() that accumulated nothing, so coarse_nsec was not
  // refreshed: docs/findings.md 1), now and at each clock's last read; as
  // the simulation's writer tracks it (Writer::Update()).
  auto coarse_sec = tk.timekeeper().xtime_sec;
  bool coarse_off = false;
  std::vector<char> last_coarse_off(sampled.size(), 0);

  uint64_t segment_start = 0;
  std::vector<uint64_t> read_times;
  constexpr int kMaxSpins = 3;
  int spins = 0;
  for (size_t e = 0; e < events.size() && spins < kMaxSpins; ++e) {
    const Event& event = events[e];
    // Reads between the previous event and this one, in true-time order.
    read_times.clear();
    if (event.at_ns > segment_start) {
      for (uint32_t r = 0; r < config.reads_per_tick; ++r) {
        read_times.push_back(rng.InRange(segment_start, event.at_ns - 1));
      }
      std::sort(read_times.begin(), read_times.end());
    }
    for (uint64_t t : read_times) {
      if (spins >= kMaxSpins) break;
      const size_t which =
          static_cast<size_t>(rng.Below(static_cast<uint64_t>(num_sampled)));
      timekeeper::SyscallContext ctx;
      ctx.cycles = tsc.At(t);
      ctx.thread_cputime_ns = static_cast<int64_t>(t / 3);
      ctx.process_cputime_ns = static_cast<int64_t>(t / 2);
      ReadHooks hooks(&variant, &publisher.context, &tk, ctx, getres_hz);
      vdso::HookedAccess access(page->data(), &hooks);
      if (which >= num_clocks) {
        ClockStats& stats = report.clocks[which];
        const variants::EntryPoint entry = entries[which - num_clocks];
        // A measured own clock's resolution is the plugin's to choose (the
        // kernel has no such clock): not judged, so not taken.
        auto measured = [&variant](ClockId c) {
          const variants::ClockDef* own = variants::FindOwnClock(variant, c);
          return own != nullptr && own->same_as < 0;
        };
        if (entry == variants::EntryPoint::kClockGetres) {
          for (size_t n = 0; n < num_clocks && measured(sampled[getres_next]);
               ++n) {
            getres_next = (getres_next + 1) % num_clocks;
          }
        }
        const ClockId id = sampled[getres_next];
        const ClockId getres_as = variants::JudgedAs(variant, id);
        if (entry == variants::EntryPoint::kClockGetres) {
          getres_next = (getres_next + 1) % num_clocks;
        }
        // Every other read of a row passes NULL where a caller may
        // (time(NULL), clock_getres(id, NULL)); clock_getres() every other
        // round of its ids, which it takes in turn (each id both ways,
        // whatever their number). gettimeofday() takes three forms in
        // turn: (&tv, &tz), (&tv, NULL), (NULL, &tz).
        const bool gtod = entry == variants::EntryPoint::kGettimeofday;
        const uint64_t form =
            gtod ? stats.reads % 3
                 : (entry == variants::EntryPoint::kClockGetres
                        ? stats.reads / static_cast<uint64_t>(num_clocks)
                        : stats.reads) %
                       2;
        const bool null_arg = form == 1;
        const bool tv_null = gtod && form == 2;
        const EntryRead r =
            ReadEntryPoint(*reader, entry, id, getres_as, null_arg, tv_null,
                           access, page->data(), hooks, oracle, tk.timekeeper(),
                           ctx, publisher.context.hrtimer_res, getres_hz);
        ++stats.reads;
        ++report.reads;
        if (hooks.fell_back) ++stats.fallbacks;
        if (r.error) ++stats.errors;
        if (hooks.fault && hooks.fault->kind == vdso::CallFault::Kind::kSpin &&
            ++spins >= kMaxSpins) {
          report.stop_reason = absl::StrFormat(
              "%d calls spun, blocked or ran past a quarter of the time "
              "bound (--call-timeout)",
              spins);
        }
        if (!r.ok) {
          ++stats.mismatches;
          if (report.failures.size() < kMaxFailures) {
            report.failures.push_back(absl::StrFormat(
                "%s at true time %d ns, counter %#x: vDSO %s, syscall %s",
                EntryCall(entry, id, null_arg, tv_null), t, ctx.cycles,
                r.answered ? r.got
                : hooks.fault
                    ? absl::StrCat("(", vdso::DescribeFault(*hooks.fault), ")")
                    : std::string("(no answer: a retry loop, or a load "
                                  "outside the vvar area)"),
                r.want));
          }
        }
        continue;
      }
      const ClockId clock = sampled[which];
      const std::optional<ClockResult> got =
          reader->Call(access, page->data(), clock);
      const variants::ClockDef* own = variants::FindOwnClock(variant, clock);
      const bool judged =
          own == nullptr || own->kind != variants::ClockKind::kUserspace;
      // The syscall (for clocks it does not serve from the page, the
      // variant falls back to it; the oracle is the same call).
      const ClockResult want =
          hooks.fell_back
              ? variants::VariantSyscall(variant, publisher.context,
                                         tk.timekeeper(), clock, ctx)
              : oracle.Expected(tk.timekeeper(), clock, ctx.cycles);
      ClockStats& stats = report.clocks[which];
      ++stats.reads;
      ++report.reads;
      if (hooks.fell_back) ++stats.fallbacks;
      if (hooks.fault && hooks.fault->kind == vdso::CallFault::Kind::kSpin &&
          ++spins >= kMaxSpins) {
        report.stop_reason = absl::StrFormat(
            "%d calls spun, blocked or ran past a quarter of the time "
            "bound (--call-timeout)",
            spins);
      }
      if (!got.has_value() || (judged && !(*got == want))) {
        ++stats.mismatches;
        if (report.failures.size() < kMaxFailures) {
          report.failures.push_back(absl::StrFormat(
              "%s at true time %d ns, counter %#x: vDSO %s, syscall %s",
              stats.name, t, ctx.cycles,
              got ? FormatClockResult(*got)
              : hooks.fault
                  ? absl::StrCat("(", vdso::DescribeFault(*hooks.fault), ")")
                  : std::string("(livelock)"),
              FormatClockResult(want)));
        }
        if (!got.has_value()) continue;
      }
      if (got->ret != 0) {
        ++stats.errors;
        continue;
      }
      if (judged && want.ret == 0) {
        const int64_t diff = TimespecDiffNs(got->ts, want.ts);
        stats.max_abs_diff_ns =
            std::max(stats.max_abs_diff_ns,
                     static_cast<uint64_t>(diff < 0 ? -diff : diff));
      }
      // A measured own clock flagged VDSOLAB_OWN_NOT_MONOTONIC may step
      // back by design.
      const bool may_step_back = own != nullptr && !own->monotonic;
      if (last[which] && TimespecLess(got->ts, *last[which]) &&
          !may_step_back) {
        ++stats.backwards;
        // Before 6.15 the coarse clocks could step back a little after an
        // adjtimex(): still a failure here, but said to be the era's.
        const bool coarse =
            clock == kClockRealtimeCoarse || clock == kClockMonotonicCoarse;
        const char* era = !coarse ? nullptr
                          : (coarse_off || last_coarse_off[which] != 0) &&
                                  oracle.ShowsCoarseOffBySecond(true)
                              ? variants::EraOracle::kCoarseOffBySecondWhy
                              : oracle.ExplainCoarseStepBack(
                                    -TimespecDiffNs(got->ts, *last[which]),
                                    t > config.ntp_at_ns);
        if (era != nullptr) ++stats.known;
        // Accepted (--accept=known), an era's step back is no failure line.
        std::vector<std::string>& lines = era != nullptr && config.accept_known
                                              ? report.accepted
                                              : report.failures;
        if (lines.size() < kMaxFailures) {
          lines.push_back(absl::StrFormat(
              "%s went backwards at true time %d ns: %s after %s%s", stats.name,
              t, FormatTimespec(got->ts), FormatTimespec(*last[which]),
              era != nullptr ? absl::StrCat(" [known: ", era, "]") : ""));
        }
      }
      last[which] = got->ts;
      last_coarse_off[which] = coarse_off ? 1 : 0;
    }
    segment_start = event.at_ns;
    if (e + 1 == events.size()) break;  // The end marker.
    const uint64_t now = tsc.At(event.at_ns);
    const uint64_t cycle_last_before = tk.timekeeper().tkr_mono.cycle_last;
    if (event.adjtimex) {
      timekeeper::Timex txc;
      txc.modes = timekeeper::kAdjFrequency;
      txc.freq = config.ntp_freq;
      absl::StatusOr<int> ret = tk.Adjtimex(txc, now);
      if (!ret.ok()) return ret.status();
    } else {
      tk.Advance(timekeeper::AdvanceMode::kTick, now);
    }
    // Accumulation refreshes coarse_nsec together with xtime_sec.
    if (tk.timekeeper().tkr_mono.cycle_last != cycle_last_before) {
      coarse_sec = tk.timekeeper().xtime_sec;
    }
    coarse_off =
        tk.profile().coarse_nsec && tk.timekeeper().xtime_sec != coarse_sec;
  }
  report.updates = publisher.updates;
  report.final_mult = tk.timekeeper().tkr_mono.mult;
  report.kernel_log = tk.log();
  // Last: the lines say what every read did. On this machine (TSC mode,
  // the counter far below bit 63) no era's reader falls back for a clock
  // it serves: one read that did lost the fast path (property fast_path
  // of the simulation judges the other machines' fallbacks).
  for (ClockStats& s : report.clocks) {
    if (!s.entry_point.empty() || s.fallbacks == 0 ||
        !variants::ServesFromPage(variant, s.clock) ||
        variants::FindOwnClock(variant, s.clock) != nullptr) {
      continue;
    }
    s.page_path_lost = true;
    if (report.failures.size() < kMaxFailures) {
      report.failures.push_back(absl::StrFormat(
          "%s: %s %d reads went to the syscall, yet the page (clock mode "
          "TSC) publishes it and it is one of variant %s's vDSO clocks: the "
          "vDSO's fast path for it is lost",
          s.name,
          s.fallbacks == s.reads ? "every one of its"
                                 : absl::StrFormat("%d of its", s.fallbacks),
          s.reads, variant.name));
    }
  }
  return report;
}

std::string FormatOracleRunReport(const OracleRunReport& r, bool verdict) {
  const OracleRunConfig& c = r.config;
  std::string out;
  absl::StrAppendFormat(
      &out,
      "vdsolab: the %s vDSO variant's reader vs the timekeeper's "
      "clock_gettime()\n"
      "machine: TSC %d Hz (tsc_khz %d), HZ=%d, %.3f s simulated, seed %d\n"
      "clocksource tsc: mult %d shift %d max_cycles %d; cycle_interval %d\n"
      "NTP: adjtimex(ADJ_FREQUENCY, %+.3f ppm) at %.3f s; mult %d -> %d\n"
      "%d vvar updates, %d reads\n\n",
      r.variant, c.tsc_hz, r.tsc_khz, c.hz,
      static_cast<double>(c.duration_ns) / 1e9, c.seed, r.mult, r.shift,
      r.max_cycles, r.cycle_interval, static_cast<double>(c.ntp_freq) / 65536.0,
      static_cast<double>(c.ntp_at_ns) / 1e9, r.mult, r.final_mult, r.updates,
      r.reads);
  // errors: answers of -errno (counted in mismatches where the syscall
  // answered a time: max|vdso-sys| is then over the times alone).
  absl::StrAppendFormat(&out, "%-26s %8s %8s %8s %8s %10s %14s %9s\n", "clock",
                        "reads", "vdso", "syscall", "errors", "mismatches",
                        "max|vdso-sys|", "backwards");
  for (const ClockStats& s : r.clocks) {
    absl::StrAppendFormat(&out, "%-26s %8d %8d %8d %8d %10d %11d ns %9d\n",
                          s.name, s.reads, s.reads - s.fallbacks, s.fallbacks,
                          s.errors, s.mismatches, s.max_abs_diff_ns,
                          s.backwards);
  }
  for (const std::string& f : r.failures) {
    absl::StrAppendFormat(&out, "FAIL: %s\n", f);
  }
  for (const std::string& a : r.accepted) {
    absl::StrAppendFormat(&out, "accepted: %s\n", a);
  }
  for (const std::string& line : r.kernel_log) {
    absl::StrAppendFormat(&out, "kernel: %s\n", line);
  }
  if (!r.stop_reason.empty()) {
    absl::StrAppendFormat(&out, "stopped early: %s\n", r.stop_reason);
  }
  if (verdict) absl::StrAppendFormat(&out, "\n%s\n", OracleVerdict(r));
  return out;
}

std::string OracleVerdict(const OracleRunReport& r, bool rest_held) {
  // A clean tree of an era with a documented step back (before 6.15, the
  // coarse clocks at an NTP speed-up) fails as it is: say how a baseline
  // passes, so that a patch is judged on its defects.
  if (!r.ok() && r.ok_accepting(true) && rest_held) {
    return "FAIL: see above. Each failure is a behaviour the variant's era "
           "documents ([known: ...]); --accept=known lets those pass, so "
           "that a patch is judged on its defects.";
  }
  return !r.ok() ? "FAIL: see above."
         : std::any_of(r.clocks.begin(), r.clocks.end(),
                       [](const ClockStats& s) { return s.backwards != 0; })
             ? "PASS: every read matched the syscall bit for bit; clocks went "
               "back only as the variant's era documents (accepted)."
             : "PASS: every read matched the syscall bit for bit; no clock "
               "went backwards.";
}

}  // namespace vdsolab::sim
