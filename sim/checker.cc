#include "sim/checker.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "common/math64.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/readers.h"

namespace vdsolab::sim {
namespace {

// Violations kept for the report, per kind (failures and preconditions),
// so that many precondition notes cannot hide the first defect.
constexpr size_t kMaxViolationsPerKind = 20;

constexpr const char* kEraOverflowWhy =
    "era behaviour: before 6.10 the vDSO multiplied delta * mult in 64 bits, "
    "which wraps once the delta passes 2^64 / mult (about 11% past "
    "max_cycles); the value is exactly that wrapped result. The era's "
    "syscall path wrapped too, but the model's syscall is 6.10+, so clocks "
    "it answers disagree with the vDSO's here";
constexpr const char* kEraWrapWhy =
    "era behaviour: before 6.5 the x86 vDSO compared cycles > cycle_last "
    "unmasked, so a counter that wrapped past 2^64 reads as behind "
    "cycle_last and time stands still until the next update (fixed by "
    "\"x86/vdso: Fix gettimeofday masking\", 6.5)";
constexpr const char* kEraCoarseBackWhy =
    "era behaviour: before 6.15 the coarse clocks read xtime_nsec, which "
    "timekeeping_apply_adjustment() moves back when adjtimex() speeds the "
    "clock up, so coarse time can step back a little (6.15 added "
    "coarse_nsec: \"timekeeping: Prevent coarse clocks going backwards\")";

__int128 ToNs(const Timespec64& ts) {
  return static_cast<__int128>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string FormatNs(__int128 ns) {
  const bool neg = ns < 0;
  const unsigned __int128 mag = static_cast<unsigned __int128>(neg ? -ns : ns);
  return absl::StrFormat("%s%d.%09d", neg ? "-" : "",
                         static_cast<uint64_t>(mag / 1000000000),
                         static_cast<uint64_t>(mag % 1000000000));
}

bool IsHres(ClockId c) {
  return c >= 0 && c < kMaxClocks && ((1u << c) & (kVdsoHres | kVdsoRaw)) != 0;
}
bool IsCoarse(ClockId c) {
  return c == kClockRealtimeCoarse || c == kClockMonotonicCoarse;
}
// Clocks that clock_settime() and leap seconds may step.
bool IsSettable(ClockId c) {
  return c == kClockRealtime || c == kClockRealtimeCoarse || c == kClockTai ||
         c == kClockRealtimeAlarm;
}
bool IsMonotonicFamily(ClockId c) {
  return c == kClockRealtime || c == kClockMonotonic ||
         c == kClockMonotonicRaw || c == kClockRealtimeCoarse ||
         c == kClockMonotonicCoarse || c == kClockBoottime || c == kClockTai ||
         c == kClockRealtimeAlarm || c == kClockBoottimeAlarm ||
         c == kClockProcessCputimeId || c == kClockThreadCputimeId;
}

// The clocks whose difference is fixed between events: the offset of each
// from MONOTONIC in the timekeeper state.
std::optional<__int128> OffsetFromMonotonic(ClockId c,
                                            const timekeeper::Timekeeper& tk) {
  switch (c) {
    case kClockMonotonic:
      return 0;
    case kClockBoottime:
      return tk.offs_boot;
    case kClockRealtime:
      return tk.offs_real;
    case kClockTai:
      return tk.offs_tai;
    default:
      return std::nullopt;
  }
}

}  // namespace

const char* PropertyName(Property p) {
  switch (p) {
    case Property::kExact:
      return "exact";
    case Property::kMonotonic:
      return "monotonic";
    case Property::kCausal:
      return "causal";
    case Property::kSane:
      return "sane";
    case Property::kRawRate:
      return "raw_rate";
    case Property::kCrossClock:
      return "cross_clock";
    case Property::kTorn:
      return "torn";
    case Property::kLivelock:
      return "livelock";
  }
  return "?";
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kDefect:
      return "defect";
    case Verdict::kPrecondition:
      return "precondition violated";
    case Verdict::kKnownKernel:
      return "known kernel behaviour";
  }
  return "?";
}

Checker::Checker(const Scenario& scenario, const Machine* machine,
                 const Writer* writer, const variants::Variant* variant)
    : scenario_(scenario),
      machine_(machine),
      writer_(writer),
      variant_(variant),
      tsc_(scenario.machine.clocksource == "tsc"),
      wide_(scenario.machine.width_bits == 64),
      boot_counter_(writer->Update(1) != nullptr ? writer->Update(1)->counter
                                                 : 0) {}

bool Checker::HasFailure() const {
  for (const PropertyStats& s : stats_) {
    if (s.defects != 0 || s.known_kernel != 0) return true;
  }
  return false;
}

void Checker::Report(Property p, Verdict v, std::string why, std::string detail,
                     const CallRecord& call) {
  PropertyStats& s = stats_[static_cast<int>(p) - 1];
  switch (v) {
    case Verdict::kDefect:
      ++s.defects;
      break;
    case Verdict::kPrecondition:
      ++s.preconditions;
      break;
    case Verdict::kKnownKernel:
      ++s.known_kernel;
      break;
  }
  size_t& kept =
      v == Verdict::kPrecondition ? kept_preconditions_ : kept_failures_;
  if (kept < kMaxViolationsPerKind) {
    ++kept;
    violations_.push_back(Violation{p, v, std::move(why), std::move(detail),
                                    call.index, call.reader, call.reader_call,
                                    call.start_ns});
  }
}

std::string Checker::Name(ClockId clock) const {
  return variants::VariantClockName(*variant_, clock);
}

variants::ClockKind Checker::Kind(ClockId clock) const {
  const variants::ClockDef* own = variants::FindOwnClock(*variant_, clock);
  return own != nullptr ? own->kind : variants::ClockKind::kKernel;
}

ClockResult Checker::ExpectedVdso(const UpdateRecord& state, ClockId clock,
                                  uint64_t counter) const {
  timekeeper::SyscallContext ctx;
  ctx.cycles = counter;
  if (Kind(clock) == variants::ClockKind::kVariantSyscall) {
    return variants::VariantSyscall(*variant_, writer_->publish_context(),
                                    state.tk, clock, ctx);
  }
  const variants::Semantics& era = variant_->semantics;
  if (!era.coarse_from_coarse_nsec && clock == kClockRealtimeCoarse) {
    return ClockResult::Ok(timekeeper::TkXtimePre615(state.tk));
  }
  if (!era.coarse_from_coarse_nsec && clock == kClockMonotonicCoarse) {
    return ClockResult::Ok(timekeeper::KtimeGetCoarseTs64Pre615(state.tk));
  }
  if (tsc_ && wide_ && IsHres(clock)) {
    const uint64_t last = state.tk.tkr_mono.cycle_last;
    if (era.counter == variants::CounterSemantics::kMasked63) {
      // The x86 vDSO (6.5+) converts with 63-bit counter arithmetic and
      // takes bit 62 of the delta as its sign (docs/readers.md); with a
      // 64-bit counter its answer is the syscall's at the counter it
      // effectively used.
      const uint64_t e = (counter - last) & kS64Max;
      ctx.cycles = (e & (1ull << 62)) != 0 ? last : last + e;
    } else if (counter < last) {
      // Before 6.5 a counter behind cycle_last is clamped to it.
      ctx.cycles = last;
    }
  }
  return timekeeper::SysClockGettime(state.tk, clock, ctx);
}

std::optional<ClockResult> Checker::EraValue(const UpdateRecord& state,
                                             ClockId clock,
                                             uint64_t counter) const {
  const variants::Semantics& era = variant_->semantics;
  if (era.overflow_protected || !IsHres(clock) || !tsc_ || !wide_) {
    return std::nullopt;
  }
  const timekeeper::Timekeeper& tk = state.tk;
  const timekeeper::TkReadBase& tkr =
      clock == kClockMonotonicRaw ? tk.tkr_raw : tk.tkr_mono;
  // The delta the era's reader multiplies (after its counter rules).
  uint64_t delta = 0;
  if (era.counter == variants::CounterSemantics::kMasked63) {
    delta = (counter - tkr.cycle_last) & kS64Max;
    if ((delta & (1ull << 62)) != 0) return std::nullopt;  // Clamped.
  } else {
    if (counter <= tkr.cycle_last || (counter >> 63) != 0) return std::nullopt;
    delta = counter - tkr.cycle_last;
  }
  const unsigned __int128 product =
      static_cast<unsigned __int128>(delta) * tkr.mult;
  if ((product >> 64) == 0) return std::nullopt;  // No wrap: the syscall's.
  // The page's base for this clock (shifted ns), as every era's writer
  // publishes it.
  const uint32_t shift = tkr.shift;
  const uint64_t sec_ns = kNsecPerSec << shift;
  uint64_t sec = tk.xtime_sec;
  uint64_t nsec = tk.tkr_mono.xtime_nsec;
  const auto add = [&](const Timespec64& off) {
    sec += static_cast<uint64_t>(off.tv_sec);
    nsec += static_cast<uint64_t>(off.tv_nsec) << shift;
    while (nsec >= sec_ns) {
      nsec -= sec_ns;
      ++sec;
    }
  };
  switch (clock) {
    case kClockRealtime:
      break;
    case kClockMonotonic:
      add(tk.wall_to_monotonic);
      break;
    case kClockBoottime:
      add(tk.wall_to_monotonic);
      add(tk.monotonic_to_boot);
      break;
    case kClockTai:
      sec += static_cast<uint64_t>(static_cast<int64_t>(tk.tai_offset));
      break;
    case kClockMonotonicRaw:
      sec = tk.raw_sec;
      nsec = tk.tkr_raw.xtime_nsec;
      break;
    default:
      return std::nullopt;
  }
  // (base + delta * mult) mod 2^64, >> shift: the era's arithmetic.
  const uint64_t ns = (nsec + delta * tkr.mult) >> shift;
  uint64_t rem = 0;
  const uint32_t carry =
      IterDivU64Rem(ns, static_cast<uint32_t>(kNsecPerSec), &rem);
  return ClockResult::Ok(
      Timespec64{static_cast<int64_t>(sec + carry), static_cast<int64_t>(rem)});
}

uint32_t Checker::Generation(ClockId clock, const UpdateRecord* state) const {
  return (state != nullptr && IsSettable(clock)) ? state->clock_was_set_seq : 0;
}

std::optional<std::string> Checker::BrokenPrecondition(const Seen& s) const {
  const int tk_cpu = scenario_.kernel.timekeeping_cpu;
  // A coarse read uses no counter of its own: only the timekeeper's.
  const int cpu_index = s.read_counter ? s.counter_cpu : tk_cpu;
  const uint64_t when = s.read_counter ? s.counter_ns : s.end_ns;
  const CpuCounterSpec& cpu =
      scenario_.machine.cpus[static_cast<size_t>(cpu_index)];
  bool stepped = false;
  for (const CounterStep& step : cpu.steps) stepped |= step.at_ns <= when;
  const bool unsteady =
      stepped || cpu.jitter_cycles != 0 || cpu.wobble_cycles != 0;
  if (!s.read_counter) {
    if (!unsteady) return std::nullopt;
    return absl::StrFormat(
        "the timekeeping CPU %d's counter does not run steadily (steps, "
        "wobble or jitter in the time model)",
        tk_cpu);
  }
  if (tsc_ && !wide_ && s.counter < s.cycle_last) {
    return absl::StrFormat(
        "the x86 vDSO assumes a 64-bit counter; this one wrapped at 2^%d "
        "(counter %#x < cycle_last %#x)",
        scenario_.machine.width_bits, s.counter, s.cycle_last);
  }
  // The timekeeper must update before the counter wraps: a wider gap (a
  // pause or idle longer than the counter's period) loses whole wraps.
  const __int128 elapsed =
      machine_->IdealCounter(tk_cpu, s.counter_ns) - s.cycle_last_ideal;
  if (elapsed > static_cast<__int128>(writer_->clocksource().max_raw_delta)) {
    return absl::StrFormat(
        "the counter ran %s cycles since the timekeeper last accumulated, more "
        "than 7/8 of its %d-bit range: the timekeeper cannot see the wraps",
        absl::StrFormat("%d", static_cast<uint64_t>(
                                  elapsed > static_cast<__int128>(UINT64_MAX)
                                      ? UINT64_MAX
                                      : static_cast<uint64_t>(elapsed))),
        scenario_.machine.width_bits);
  }
  // The design needs every CPU's counter to agree with the one the
  // timekeeper reads (synchronised TSCs).
  const uint64_t reference = machine_->Counter(tk_cpu, s.counter_ns);
  if (s.counter_cpu != tk_cpu && reference != s.counter) {
    const uint64_t mask = machine_->mask();
    const uint64_t ahead = (s.counter - reference) & mask;
    const bool behind = ahead > (mask >> 1);
    return absl::StrFormat(
        "CPU %d's counter is %d cycles %s the timekeeping CPU %d's: "
        "cross-CPU counter skew%s",
        s.counter_cpu, behind ? ((reference - s.counter) & mask) : ahead,
        behind ? "behind" : "ahead of", tk_cpu,
        s.negative_motion ? (wide_ ? " (negative motion, clamped to the base "
                                     "time)"
                                   : " (negative motion, read as a near-wrap "
                                     "forward jump)")
                          : "");
  }
  // ...and to run steadily: no steps, wobble or jitter.
  if (unsteady) {
    return absl::StrFormat(
        "CPU %d's counter does not run steadily (steps, wobble or jitter in "
        "the time model)",
        s.counter_cpu);
  }
  return std::nullopt;
}

std::optional<std::pair<Verdict, std::string>> Checker::Explain(
    const Seen& a, const Seen& b) const {
  if ((IsCoarse(a.clock) || IsCoarse(b.clock)) &&
      (a.coarse_off || b.coarse_off)) {
    return std::pair{Verdict::kKnownKernel,
                     std::string("6.15+ kernels: coarse clocks are off by one "
                                 "second after an adjtimex() frequency change "
                                 "between ticks (docs/findings.md)")};
  }
  if (a.era_why != nullptr || b.era_why != nullptr) {
    return std::pair{Verdict::kKnownKernel,
                     std::string(a.era_why != nullptr ? a.era_why : b.era_why)};
  }
  // Before 6.15 an adjtimex() could move the coarse clocks back a little:
  // by xtime_nsec's adjustment, at most the NTP correction over one tick.
  // (b is the later read; for one read, a value just below zero.)
  constexpr __int128 kCoarseBackMaxNs = 1000000;
  const __int128 back = &a == &b ? -a.value_ns : a.value_ns - b.value_ns;
  if (IsCoarse(b.clock) && a.clock == b.clock &&
      !variant_->semantics.coarse_from_coarse_nsec && b.ntp_generation != 0 &&
      back > 0 && back <= kCoarseBackMaxNs) {
    return std::pair{Verdict::kKnownKernel, std::string(kEraCoarseBackWhy)};
  }
  if (a.wrap_losses != b.wrap_losses) {
    return std::pair{
        Verdict::kPrecondition,
        std::string("between these reads the timekeeper went longer than "
                    "the counter's range without an update (a pause or idle "
                    "past max_raw_delta) and lost whole counter wraps")};
  }
  for (const Seen* s : {&b, &a}) {
    if (auto why = BrokenPrecondition(*s)) {
      return std::pair{Verdict::kPrecondition, *why};
    }
  }
  return std::nullopt;
}

void Checker::OnCall(const CallRecord& call) {
  ++coverage_.calls;
  if (call.iterations > 1) ++coverage_.retries;
  if (call.stores_during > 0) ++coverage_.raced;
  if (call.migrated_before) ++coverage_.migrations;
  if (call.migrated_midcall) ++coverage_.midcall_migrations;
  if (call.preempted) ++coverage_.preemptions;
  if (call.read_counter &&
      call.counter_cpu != scenario_.kernel.timekeeping_cpu) {
    ++coverage_.cross_cpu_reads;
  }
  if (call.read_counter && call.counter < boot_counter_) {
    ++coverage_.counter_wrapped;
  }

  // 8: termination.
  PropertyStats& live = stats_[static_cast<int>(Property::kLivelock) - 1];
  ++live.checked;
  if (!call.result) {
    ++coverage_.livelocks;
    Report(Property::kLivelock, Verdict::kDefect, "the reader kept looping",
           absl::StrFormat("%s abandoned after %d loop iterations",
                           Name(call.clock), call.iterations),
           call);
    return;
  }
  const ClockResult& r = *call.result;
  if (call.fell_back) {
    ++coverage_.fallbacks;
  } else {
    ++coverage_.vdso_answers;
  }
  ++coverage_.per_clock[call.clock][call.fell_back ? 1 : (r.ret != 0 ? 2 : 0)];
  if (r.ret != 0) {
    ++coverage_.errors;
    if (!call.fell_back) CheckVdsoError(call);
    return;
  }

  const uint32_t state_id =
      call.fell_back ? call.fallback_update : call.begin_seq / 2;
  const UpdateRecord* state = writer_->Update(state_id);
  bool negative_motion = false;
  if (state != nullptr && call.read_counter && IsHres(call.clock)) {
    const uint64_t delta =
        (call.counter - state->tk.tkr_mono.cycle_last) & machine_->mask();
    if (delta > (machine_->mask() >> 1)) {
      ++coverage_.negative_motion;
      negative_motion = true;
    } else if (delta > writer_->clocksource().max_cycles) {
      ++coverage_.beyond_max_cycles;
    }
  }

  Seen seen;
  const variants::ClockDef* own_def =
      variants::FindOwnClock(*variant_, call.clock);
  seen.value_ns =
      own_def != nullptr &&
              own_def->encoding == variants::ClockEncoding::kCountInTvSec
          ? static_cast<__int128>(static_cast<uint64_t>(r.ts.tv_sec))
          : ToNs(r.ts);
  seen.call_index = call.index;
  seen.reader = call.reader;
  seen.reader_call = call.reader_call;
  seen.end_ns = call.end_ns;
  seen.generation = Generation(call.clock, state);
  seen.coarse_off = state != nullptr && state->coarse_off_by_second &&
                    variant_->semantics.coarse_from_coarse_nsec;
  seen.read_counter = call.read_counter;
  seen.counter = call.counter;
  seen.counter_cpu = call.counter_cpu;
  seen.counter_ns = call.counter_ns;
  seen.negative_motion = negative_motion;
  seen.cycle_last = state != nullptr ? state->tk.tkr_mono.cycle_last : 0;
  seen.cycle_last_ideal = state != nullptr ? state->cycle_last_ideal : 0;
  seen.wrap_losses = state != nullptr ? state->wrap_losses : 0;
  seen.clock = call.clock;
  // The value is exactly the era's (and not the modern kernel's): later
  // checks that trip over it are explained by the era.
  if (state != nullptr && call.read_counter && !call.fell_back &&
      Kind(call.clock) == variants::ClockKind::kKernel && IsHres(call.clock)) {
    const std::optional<ClockResult> era =
        EraValue(*state, call.clock, call.counter);
    const timekeeper::TkReadBase& tkr = call.clock == kClockMonotonicRaw
                                            ? state->tk.tkr_raw
                                            : state->tk.tkr_mono;
    if (era && *era == r) {
      seen.era_why = kEraOverflowWhy;
    } else if (variant_->semantics.counter ==
                   variants::CounterSemantics::kClampToLast &&
               call.counter < tkr.cycle_last &&
               call.counter - tkr.cycle_last < (1ull << 62) &&
               ExpectedVdso(*state, call.clock, call.counter) == r) {
      seen.era_why = kEraWrapWhy;  // Frozen at the base, as the era was.
    }
  }
  seen.ntp_generation = state != nullptr ? state->ntp_generation : 0;

  // 4: sane values (a clock that encodes a count by design is not a
  // timespec: not checked).
  PropertyStats& sane = stats_[static_cast<int>(Property::kSane) - 1];
  const bool timespec = own_def == nullptr ||
                        own_def->encoding == variants::ClockEncoding::kTimespec;
  if (timespec) ++sane.checked;
  if (timespec && (r.ts.tv_nsec < 0 || r.ts.tv_nsec >= 1000000000 ||
                   r.ts.tv_sec < 0 || r.ts.tv_sec > kKtimeSecMax)) {
    // A value below zero right after boot comes from the 6.15+ coarse
    // behaviour, or from a counter behind cycle_last clamped to a base that
    // an NTP adjustment moved a few ns earlier.
    auto why = Explain(seen, seen);
    Report(Property::kSane, why ? why->first : Verdict::kDefect,
           why ? why->second : "out of range",
           absl::StrFormat("%s returned %s", Name(call.clock),
                           FormatTimespec(r.ts)),
           call);
  }

  if (!call.fell_back && (call.begin_seq & 1) == 0 && state != nullptr) {
    CheckExactAndTorn(call, state);
  } else if (!call.fell_back) {
    CheckExactAndTorn(call, nullptr);
  }

  const variants::ClockDef* own = own_def;
  if (own != nullptr ? own->monotonic : IsMonotonicFamily(call.clock)) {
    CheckMonotonic(call, seen);
    CheckCausal(call, seen);
  }
  if (own != nullptr) {
    MeasureDivergence(call, seen);
    return;  // RAW's rate and cross-clock offsets are kernel-clock facts.
  }
  CheckRawRate(call, seen, state);
  CheckCrossClock(call, seen, state);
  previous_[call.reader] = {
      PreviousCall{call.clock, call.result && call.result->ret == 0,
                   call.fell_back ? call.fallback_update : call.begin_seq / 2,
                   call.start_ns, call.end_ns},
      seen};
}

void Checker::CheckVdsoError(const CallRecord& call) {
  // 1: an error the vDSO returns itself must be the syscall's answer too
  // (an invalid clock id); a patch that answers -EINVAL where the kernel
  // has a clock breaks the ABI.
  if (!scenario_.checks.exact ||
      Kind(call.clock) == variants::ClockKind::kUserspace) {
    return;
  }
  const UpdateRecord& u = writer_->LatestStartedAt(call.end_ns);
  timekeeper::SyscallContext ctx;
  ctx.cycles = machine_->Counter(call.cpu_end, call.end_ns);
  ctx.has_rtc = scenario_.kernel.has_rtc;
  const ClockResult want = variants::VariantSyscall(
      *variant_, writer_->publish_context(), u.tk, call.clock, ctx);
  PropertyStats& s = stats_[static_cast<int>(Property::kExact) - 1];
  ++s.checked;
  if (want.ret != call.result->ret) {
    Report(Property::kExact, Verdict::kDefect,
           "the vDSO answered an error without asking the kernel",
           absl::StrFormat("%s: vDSO %s, syscall %s", Name(call.clock),
                           FormatClockResult(*call.result),
                           FormatClockResult(want)),
           call);
  }
}

void Checker::MeasureDivergence(const CallRecord& call, const Seen& seen) {
  if (!call.read_counter) return;
  // RAW at the same counter value, from the state current then (RAW does
  // not depend on which state once cycle_last is behind the counter).
  const UpdateRecord& state = writer_->LatestStartedAt(call.counter_ns);
  timekeeper::SyscallContext ctx;
  ctx.cycles = call.counter;
  const ClockResult raw =
      timekeeper::SysClockGettime(state.tk, kClockMonotonicRaw, ctx);
  if (raw.ret != 0) return;
  const __int128 raw_ns = ToNs(raw.ts);
  auto [it, first] = divergence_anchor_.try_emplace(
      call.clock, std::pair{seen.value_ns, raw_ns});
  Divergence& d = divergence_[call.clock];
  d.name = Name(call.clock);
  ++d.samples;
  if (first) return;
  const __int128 div =
      (seen.value_ns - it->second.first) - (raw_ns - it->second.second);
  d.last_ns = div;
  d.span_ns = raw_ns - it->second.second;
  const __int128 mag = div < 0 ? -div : div;
  if (mag > d.max_abs_ns) d.max_abs_ns = mag;
}

void Checker::CheckExactAndTorn(const CallRecord& call,
                                const UpdateRecord* state) {
  if (!scenario_.checks.exact && !scenario_.checks.torn) return;
  const variants::ClockKind kind = Kind(call.clock);
  if (kind == variants::ClockKind::kUserspace) return;  // No oracle.
  const ClockResult& got = *call.result;
  const bool needs_counter =
      IsHres(call.clock) || kind == variants::ClockKind::kVariantSyscall;
  if (needs_counter && !call.read_counter) return;
  const bool width_issue = tsc_ && !wide_ && needs_counter;
  static constexpr absl::string_view kWidthWhy =
      "the x86 vDSO assumes a 64-bit counter; this one wraps at 2^%d";

  // 1: the state the reader validated, at the counter it used.
  std::optional<ClockResult> want;
  if ((scenario_.checks.exact || scenario_.checks.torn) && state != nullptr) {
    want = ExpectedVdso(*state, call.clock, call.counter);
  }
  const bool validated_state_gives_it = want && *want == got;
  if (scenario_.checks.exact && want) {
    PropertyStats& s = stats_[static_cast<int>(Property::kExact) - 1];
    ++s.checked;
    if (!validated_state_gives_it) {
      const std::optional<ClockResult> era_value =
          EraValue(*state, call.clock, call.counter);
      const std::optional<std::string> era =
          era_value && *era_value == got
              ? std::optional<std::string>(kEraOverflowWhy)
              : std::nullopt;
      Report(Property::kExact,
             width_issue ? Verdict::kPrecondition
             : era       ? Verdict::kKnownKernel
                         : Verdict::kDefect,
             width_issue
                 ? absl::StrFormat(kWidthWhy, scenario_.machine.width_bits)
             : era ? *era
                   : "the reader's arithmetic or protocol",
             absl::StrFormat("%s: vDSO %s, syscall %s at counter %#x "
                             "(page state of update %d, seq %d)",
                             Name(call.clock), FormatClockResult(got),
                             FormatClockResult(*want), call.counter, state->id,
                             call.begin_seq),
             call);
    }
  }

  // 7: some consistent state that was current during the call gives it.
  // (A clock a variant adds reads constants only: nothing to tear.)
  if (scenario_.checks.torn && kind == variants::ClockKind::kKernel) {
    PropertyStats& s = stats_[static_cast<int>(Property::kTorn) - 1];
    ++s.checked;
    const uint32_t first = writer_->LatestStartedAt(call.start_ns).id;
    const uint32_t last = writer_->LatestStartedAt(call.end_ns).id;
    const uint32_t lo = first > 1 ? first - 1 : 1;
    // Most calls: the state they validated was current, and gives it.
    bool found =
        validated_state_gives_it && state->id >= lo && state->id <= last;
    for (uint32_t id = lo; id <= last && !found; ++id) {
      const UpdateRecord* u = writer_->Update(id);
      if (u == nullptr) continue;
      const std::optional<ClockResult> era =
          EraValue(*u, call.clock, call.counter);
      if (ExpectedVdso(*u, call.clock, call.counter) == got ||
          (era && *era == got)) {
        found = true;
      }
    }
    if (!found) {
      Report(Property::kTorn,
             width_issue ? Verdict::kPrecondition : Verdict::kDefect,
             width_issue
                 ? absl::StrFormat(kWidthWhy, scenario_.machine.width_bits)
                 : "mixed fields of different page states",
             absl::StrFormat("%s returned %s at counter %#x; no page state of "
                             "updates %d..%d gives that",
                             Name(call.clock), FormatClockResult(got),
                             call.counter, first > 1 ? first - 1 : 1, last),
             call);
    }
  }
}

void Checker::CheckMonotonic(const CallRecord& call, const Seen& seen) {
  if (!scenario_.checks.monotonic) return;
  auto it = last_.find({call.reader, call.clock});
  if (it != last_.end() && it->second.generation == seen.generation) {
    PropertyStats& s = stats_[static_cast<int>(Property::kMonotonic) - 1];
    ++s.checked;
    const Seen& prev = it->second;
    if (seen.value_ns < prev.value_ns) {
      auto why = Explain(prev, seen);
      Report(Property::kMonotonic, why ? why->first : Verdict::kDefect,
             why ? why->second : "time went backwards for one reader",
             absl::StrFormat("reader %d: %s read %s (CPU %d, counter %#x) "
                             "after %s (call %d, CPU %d, counter %#x)",
                             call.reader, Name(call.clock),
                             FormatNs(seen.value_ns), seen.counter_cpu,
                             seen.counter, FormatNs(prev.value_ns),
                             prev.reader_call, prev.counter_cpu, prev.counter),
             call);
    }
  }
  last_[{call.reader, call.clock}] = seen;
}

void Checker::CheckCausal(const CallRecord& call, const Seen& seen) {
  if (!scenario_.checks.causal) return;
  auto& heap = in_flight_[call.clock];
  while (!heap.empty() && heap.top().end_ns < call.start_ns) {
    const Seen done = heap.top();
    heap.pop();
    auto m = matured_.find(call.clock);
    if (m == matured_.end() || done.generation > m->second.generation ||
        (done.generation == m->second.generation &&
         done.value_ns > m->second.value_ns)) {
      matured_[call.clock] = done;
    }
  }
  auto m = matured_.find(call.clock);
  if (m != matured_.end() && m->second.generation == seen.generation &&
      m->second.reader != call.reader) {
    PropertyStats& s = stats_[static_cast<int>(Property::kCausal) - 1];
    ++s.checked;
    if (seen.value_ns < m->second.value_ns) {
      auto why = Explain(m->second, seen);
      Report(
          Property::kCausal, why ? why->first : Verdict::kDefect,
          why ? why->second : "a later call returned less than an earlier one",
          absl::StrFormat(
              "%s: reader %d read %s (CPU %d, counter %#x), but reader "
              "%d's call %d had returned %s (CPU %d, counter %#x) before "
              "this call started",
              Name(call.clock), call.reader, FormatNs(seen.value_ns),
              seen.counter_cpu, seen.counter, m->second.reader,
              m->second.reader_call, FormatNs(m->second.value_ns),
              m->second.counter_cpu, m->second.counter),
          call);
    }
  }
  heap.push(seen);
}

void Checker::CheckRawRate(const CallRecord& call, const Seen& seen,
                           const UpdateRecord* state) {
  if (!scenario_.checks.raw_rate || state == nullptr || !call.read_counter ||
      !wide_) {
    return;
  }
  const ClockResult& r = *call.result;
  const timekeeper::TkReadBase& raw = state->tk.tkr_raw;
  if (call.clock == kClockMonotonicRaw) {
    // Without negative motion, RAW is exactly the counter's distance from
    // boot at the clocksource's own mult/shift, whatever NTP did.
    const uint64_t since_last = call.counter - raw.cycle_last;
    const uint64_t since_boot = call.counter - boot_counter_;
    if (since_last > (1ull << 62) || since_boot > (1ull << 62)) return;
    PropertyStats& s = stats_[static_cast<int>(Property::kRawRate) - 1];
    ++s.checked;
    const unsigned __int128 ns =
        (static_cast<unsigned __int128>(since_boot) * raw.mult) >> raw.shift;
    // timekeeping_init() starts MONOTONIC_RAW at zero.
    const __int128 want = static_cast<__int128>(ns);
    if (ToNs(r.ts) != want) {
      // Exactness needs the timekeeper's own counter to have run steadily.
      Seen timekeeper_side = seen;
      timekeeper_side.read_counter = false;
      auto why = BrokenPrecondition(timekeeper_side);
      if (!why) why = BrokenPrecondition(seen);
      Report(
          Property::kRawRate,
          seen.era_why != nullptr ? Verdict::kKnownKernel
          : why                   ? Verdict::kPrecondition
                                  : Verdict::kDefect,
          seen.era_why != nullptr ? seen.era_why
          : why                   ? *why
                : "MONOTONIC_RAW is not the raw conversion of the counter",
          absl::StrFormat("RAW %s at counter %#x; (counter - boot) * "
                          "mult >> shift is %s",
                          FormatTimespec(r.ts), call.counter, FormatNs(want)),
          call);
    }
    return;
  }
  if (call.clock != kClockMonotonic) return;
  // MONOTONIC advances at NTP's rate relative to RAW, over at least 1 s
  // within one NTP setting.
  // Only reads from one CPU, neither clamped by negative motion, compare:
  // otherwise the values do not follow from the counters alone.
  const uint64_t since_last =
      (call.counter - state->tk.tkr_mono.cycle_last) & machine_->mask();
  const bool usable = since_last <= (machine_->mask() >> 1);
  auto it = rate_anchor_.find(call.reader);
  if (it == rate_anchor_.end() ||
      it->second.generation != state->ntp_generation ||
      it->second.cpu != call.counter_cpu || !usable) {
    rate_anchor_[call.reader] = RateAnchor{state->ntp_generation, call.counter,
                                           ToNs(r.ts), call.counter_cpu};
    if (!usable) rate_anchor_.erase(call.reader);
    return;
  }
  const RateAnchor& a = it->second;
  const uint64_t dc = call.counter - a.counter;
  if (dc > (1ull << 62)) return;  // Backwards; monotonic covers it.
  const unsigned __int128 raw_ns =
      (static_cast<unsigned __int128>(dc) * raw.mult) >> raw.shift;
  if (raw_ns < 1000000000) return;
  PropertyStats& s = stats_[static_cast<int>(Property::kRawRate) - 1];
  ++s.checked;
  const __int128 want = static_cast<__int128>(raw_ns * state->mono_rate_num /
                                              state->mono_rate_den);
  const __int128 got = ToNs(r.ts) - a.value_ns;
  const __int128 tol = 2000 + static_cast<__int128>(raw_ns / 1000000);
  const __int128 diff = got - want;
  if (diff > tol || diff < -tol) {
    Seen timekeeper_side = seen;
    timekeeper_side.read_counter = false;
    auto why = BrokenPrecondition(timekeeper_side);
    if (!why) why = BrokenPrecondition(seen);
    Report(Property::kRawRate,
           seen.era_why != nullptr ? Verdict::kKnownKernel
           : why                   ? Verdict::kPrecondition
                                   : Verdict::kDefect,
           seen.era_why != nullptr ? seen.era_why
           : why                   ? *why
                                   : "MONOTONIC does not run at NTP's rate",
           absl::StrFormat("over %s s of RAW, MONOTONIC advanced %s s; NTP's "
                           "rate gives %s s",
                           FormatNs(static_cast<__int128>(raw_ns)),
                           FormatNs(got), FormatNs(want)),
           call);
  }
  rate_anchor_[call.reader] = RateAnchor{state->ntp_generation, call.counter,
                                         ToNs(r.ts), call.counter_cpu};
}

void Checker::CheckCrossClock(const CallRecord& call, const Seen& seen,
                              const UpdateRecord* state) {
  if (!scenario_.checks.cross_clock || state == nullptr) return;
  auto it = previous_.find(call.reader);
  if (it == previous_.end()) return;
  const PreviousCall& prev = it->second.first;
  const Seen& prev_seen = it->second.second;
  if (!prev.ok || prev.clock == call.clock) return;
  const UpdateRecord* pstate = writer_->Update(prev.state_id);
  if (pstate == nullptr ||
      pstate->clock_was_set_seq != state->clock_was_set_seq) {
    return;
  }
  // Both values advance at most 1.2x true time (ADJ_TICK allows 10%).
  const uint64_t span = std::max(call.end_ns, prev.end_ns) -
                        std::min(call.start_ns, prev.start_ns);
  const __int128 tol = static_cast<__int128>(span) * 12 / 10 + 2;
  const __int128 diff = seen.value_ns - prev_seen.value_ns;
  PropertyStats& s = stats_[static_cast<int>(Property::kCrossClock) - 1];

  auto a = OffsetFromMonotonic(prev.clock, pstate->tk);
  auto b = OffsetFromMonotonic(call.clock, state->tk);
  if (a && b) {
    ++s.checked;
    const __int128 want = *b - *a;
    if (diff - want > tol || want - diff > tol) {
      auto why = Explain(prev_seen, seen);
      Report(Property::kCrossClock, why ? why->first : Verdict::kDefect,
             why ? why->second : "clocks drifted apart between events",
             absl::StrFormat("%s then %s differ by %s s; the timekeeper's "
                             "offset is %s s (+/- %s s for the time between "
                             "the reads)",
                             Name(prev.clock), Name(call.clock), FormatNs(diff),
                             FormatNs(want), FormatNs(tol)),
             call);
    }
    return;
  }
  // A coarse clock is never ahead of its fine clock.
  const bool pair =
      (prev.clock == kClockRealtimeCoarse && call.clock == kClockRealtime) ||
      (prev.clock == kClockRealtime && call.clock == kClockRealtimeCoarse) ||
      (prev.clock == kClockMonotonicCoarse && call.clock == kClockMonotonic) ||
      (prev.clock == kClockMonotonic && call.clock == kClockMonotonicCoarse);
  if (!pair) return;
  ++s.checked;
  const bool coarse_first = IsCoarse(prev.clock);
  const __int128 coarse = coarse_first ? prev_seen.value_ns : seen.value_ns;
  const __int128 fine = coarse_first ? seen.value_ns : prev_seen.value_ns;
  const __int128 allowed = coarse_first ? 2 : tol;
  if (coarse - fine > allowed) {
    auto why = Explain(prev_seen, seen);
    Report(Property::kCrossClock, why ? why->first : Verdict::kDefect,
           why ? why->second : "a coarse clock ran ahead of its fine clock",
           absl::StrFormat("%s %s vs %s %s", Name(prev.clock),
                           FormatNs(prev_seen.value_ns), Name(call.clock),
                           FormatNs(seen.value_ns)),
           call);
  }
}

}  // namespace vdsolab::sim
