// The checker's properties, one function each (sim/checker.h lists them).

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/checker.h"
#include "sim/checker_internal.h"
#include "sim/hypervisor.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/posix_clocks.h"
#include "variants/semantics.h"

namespace vdsolab::sim {

using checker_internal::FormatNs;
using checker_internal::IsCoarse;
using checker_internal::IsHres;
using checker_internal::OffsetFromMonotonic;
using checker_internal::ToNs;

ClockResult Checker::SyscallAtTime(const CallRecord& call, uint64_t t_ns,
                                   int cpu) const {
  const UpdateRecord& u = writer_->LatestStartedAt(t_ns);
  timekeeper::SyscallContext ctx;
  ctx.cycles = writer_->SyscallCounter(u, cpu, t_ns);
  ctx.has_rtc = scenario_.kernel.has_rtc;
  ctx.aux_timekeepers = writer_->AuxStatesAt(t_ns);
  // The CPU-time clocks as the engine's syscall answers them (its Fallback).
  ctx.thread_cputime_ns = static_cast<int64_t>(t_ns / 4);
  ctx.process_cputime_ns = static_cast<int64_t>(t_ns / 2);
  return variants::VariantSyscall(*variant_, writer_->publish_context(), u.tk,
                                  call.clock, ctx);
}

ClockResult Checker::SyscallAtEnd(const CallRecord& call) const {
  return SyscallAtTime(call, call.end_ns, call.cpu_end);
}

void Checker::CheckVdsoError(const CallRecord& call) {
  // 1: an error the vDSO returns itself must be the syscall's answer too
  // (an invalid clock id); a patch that answers -EINVAL where the kernel
  // has a clock breaks the ABI.
  if (!scenario_.checks.exact ||
      Facts(call.clock).kind == variants::ClockKind::kUserspace) {
    return;
  }
  const ClockResult want = SyscallAtEnd(call);
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

void Checker::CheckUnservedAnswer(const CallRecord& call) {
  // 1: a clock the page cannot give (CPU time, an alarm clock, an id no
  // clock has) answered without the syscall: whatever the value, the
  // kernel was not asked. The syscall's answer says what it should be.
  if (!scenario_.checks.exact) return;
  const ClockResult want = SyscallAtEnd(call);
  ++stats_[static_cast<int>(Property::kExact) - 1].checked;
  Report(
      Property::kExact, Verdict::kDefect,
      "the vDSO answered a clock only the syscall can",
      absl::StrFormat("%s: vDSO %s, syscall %s", Name(call.clock),
                      FormatClockResult(*call.result), FormatClockResult(want)),
      call);
}

bool Checker::AuxUnservedDuring(const CallRecord& call) const {
  return SyscallAtEnd(call).ret != 0 &&
         SyscallAtTime(call, call.start_ns, call.cpu_start).ret != 0;
}

bool Checker::EraFallsBack(const CallRecord& call, const ClockFacts& facts) {
  // lib/vdso's do_coarse() (and the x86 vDSO's before it) reads the page
  // without looking at the clock mode: it has no fallback.
  if (IsCoarse(call.clock)) return false;
  // An aux clock's seq counts its own record's publications and its mode
  // is its record's: not judged (no built-in variant or kernel tree lists
  // an aux id among its page clocks; a version-1 plugin may).
  if (facts.aux_kernel) return true;
  // Before 6.5 a TSC with bit 63 set is not a counter (x86: 4.20's
  // `(s64)cycles < 0`, vdso_cycles_ok() from 5.8); 6.5 masks the read to
  // 63 bits instead. Not for the 4.16 family (no sign test), and only in
  // TSC mode (below): in PVCLOCK mode the value tested is vread_pvclock()'s,
  // U64_MAX only without the stable bit, whatever the TSC's top bit.
  const bool sign_test_fails =
      call.read_bit63 && variant_->sign_tested_counter &&
      oracle_.semantics().counter == variants::CounterSemantics::kClampToLast;
  // The state the call's even seq names, which it loaded the mode from (0:
  // none, or an odd seq: any TSC-mode state of the window).
  const uint32_t loaded =
      call.begin_seq != 0 && (call.begin_seq & 1) == 0 ? call.begin_seq / 2 : 0;
  // The clock mode of every state the call could have loaded: from the one
  // in force when it began (one earlier after a reordered load) to the
  // newest begun when it ended. vdso_clocksource_ok() and
  // __arch_get_hw_counter() test it before the seq re-check, so a state
  // still being written counts too.
  uint32_t lo = writer_->LatestStartedAt(call.start_ns).id;
  // (begin_seq 0: the call read no seq; update 1 publishes seq 2.)
  if (call.begin_seq != 0 && (call.begin_seq & 1) == 0 &&
      call.begin_seq / 2 < lo) {
    lo = call.begin_seq / 2;
  }
  lo = lo > 1 ? lo - 1 : lo;
  if (call.reordered_loads != 0 && lo > 1) --lo;
  const uint32_t hi = writer_->LatestStartedAt(call.end_ns).id;
  const Hypervisor* hv = writer_->hypervisor();
  for (uint32_t id = lo; id <= hi; ++id) {
    const int32_t mode = writer_->ClockModeOf(id);
    if (mode == timekeeper::kVdsoClockmodePvclock) {
      // vread_pvclock() returns U64_MAX without the stable bit; a reader
      // without the pvclock path (a plugin that did not declare it) may
      // leave the mode to the syscall.
      if (!variant_->pvclock || hv == nullptr ||
          !hv->StableDuring(call.start_ns, call.end_ns)) {
        return true;
      }
    } else if (mode != timekeeper::kVdsoClockmodeTsc ||
               (sign_test_fails && (loaded == 0 || loaded == id))) {
      return true;
    }
  }
  return false;
}

void Checker::CheckFallbackCause(const CallRecord& call) {
  if (!call.result) return;
  const ClockFacts& facts = Facts(call.clock);
  if (!facts.served) return;
  ++stats_[static_cast<int>(Property::kFastPath) - 1].checked;
  if (EraFallsBack(call, facts)) return;
  Report(
      Property::kFastPath, Verdict::kDefect,
      "the call went to the syscall where its era's reader answers from "
      "the page",
      absl::StrFormat(
          "%s fell back to the syscall on CPU %d%s, yet variant %s serves it "
          "from the page and %s: the vDSO's fast path is lost for this call",
          Name(call.clock), call.cpu_end,
          timens_call_ != nullptr ? " in a time namespace" : "", variant_->name,
          IsCoarse(call.clock)
              ? "lib/vdso's do_coarse() never falls back"
              : absl::StrCat(
                    "every page state the call could load had clock mode ",
                    writer_->hypervisor() != nullptr
                        ? "TSC or PVCLOCK with PVCLOCK_TSC_STABLE_BIT"
                        : "TSC",
                    oracle_.semantics().counter ==
                            variants::CounterSemantics::kClampToLast
                        ? " and its counter read had bit 63 clear"
                        : " (bit 63 of the counter matters only before 6.5, "
                          "which masks it)")),
      call);
}

void Checker::CheckPvclockStable(const CallRecord& call) {
  // 1: kvm-clock from the page is valid only under PVCLOCK_TSC_STABLE_BIT,
  // which promises synchronised TSCs; without it vread_pvclock() returns
  // U64_MAX and the call goes to the syscall. The state in force at the
  // counter step is the one a correct reader validated (its version
  // re-check follows the read).
  const Hypervisor* hv = writer_->hypervisor();
  if (!scenario_.checks.exact || hv == nullptr) return;
  // The pvti the reader loaded (ResolveKvmClock() scales with it): an
  // early counter read may precede the rewrite that set the bit.
  if ((hv->StateAt(call.counter_step_ns).flags & kPvclockTscStable) != 0) {
    return;
  }
  ++stats_[static_cast<int>(Property::kExact) - 1].checked;
  Report(Property::kExact, Verdict::kDefect,
         "kvm-clock answered from the pvclock page without "
         "PVCLOCK_TSC_STABLE_BIT",
         absl::StrFormat("%s returned %s from vCPU 0's page on CPU %d, whose "
                         "flags had the stable bit clear: the vDSO must use "
                         "the syscall then",
                         Name(call.clock), FormatClockResult(*call.result),
                         call.counter_cpu),
         call);
}

void Checker::MeasureDivergence(const CallRecord& call, const Seen& seen) {
  if (!call.read_counter) return;
  // RAW at the same counter value, from the state current then (RAW does
  // not depend on which state once cycle_last is behind the counter).
  const UpdateRecord& state = writer_->LatestStartedAt(call.counter_ns);
  timekeeper::SyscallContext ctx;
  ctx.cycles = call.counter;
  if (state.source == CounterSource::kKvmClock) {
    // The TSC the clock read, as the vDSO's kvm-clock at that moment.
    ctx.cycles = writer_->hypervisor()->VdsoRead(call.counter, call.counter_ns);
  } else if (state.source != CounterSource::kMachine) {
    return;  // Not this counter.
  }
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
  const __int128 last_point = d.series.empty() ? 0 : d.series.back().first;
  const __int128 gap = std::max<__int128>(1000000, last_point / 50);
  if (d.series.empty() || d.span_ns >= last_point + gap) {
    d.series.emplace_back(d.span_ns, div);
  }
  const __int128 mag = div < 0 ? -div : div;
  if (mag > d.max_abs_ns) d.max_abs_ns = mag;
}

void Checker::CheckExactAndTorn(const CallRecord& call, const ClockFacts& facts,
                                const UpdateRecord* state) {
  if (!scenario_.checks.exact && !scenario_.checks.torn) return;
  const variants::ClockKind kind = facts.kind;
  if (kind == variants::ClockKind::kUserspace) {  // No oracle.
    if (facts.own->stateless) CheckTornByRerun(call);
    return;
  }
  const ClockResult& got = *call.result;
  const bool needs_counter = facts.needs_counter;
  const bool kernel_judged = facts.kernel_judged;
  if (needs_counter && !call.read_counter) {
    // A kernel hres clock answered from the page without a counter read
    // cannot follow the time: only a clock mode whose counter is unusable
    // (U64_MAX) skips the read, and that must go to the syscall (a
    // vdso_cycles_ok() that lets U64_MAX through answers a base time).
    if (scenario_.checks.exact && facts.hres && kernel_judged) {
      ++stats_[static_cast<int>(Property::kExact) - 1].checked;
      Report(Property::kExact, Verdict::kDefect,
             "an hres clock answered from the page without reading the "
             "counter",
             absl::StrFormat("%s returned %s; the call read no counter",
                             Name(call.clock), FormatClockResult(got)),
             call);
    }
    return;
  }
  const bool width_issue = tsc_ && !wide_ && needs_counter;

  // 1: the state the reader validated, at the counter it used.
  // Built in place and compared field by field (not through an optional's
  // copy, whose wide loads of the callee's narrow stores stall).
  const bool has_want = state != nullptr;
  const ClockResult want =
      has_want ? ExpectedOf(call, facts, *state) : ClockResult{};
  // A reader whose answer is the kernel's syscall at that counter where its
  // era's vDSO answers otherwise (a 6.1 tree with 6.5's masking
  // backported, across a counter wrap) is exact: the era's answer excuses
  // the era, it is not a bar for fixes.
  const bool validated_state_gives_it =
      has_want && (want == got || got == SyscallAt(*state, call));
  if (scenario_.checks.exact && has_want) {
    PropertyStats& s = stats_[static_cast<int>(Property::kExact) - 1];
    ++s.checked;
    if (!validated_state_gives_it) {
      ReportInexact(call, *state, want, width_issue);
    }
  } else if (scenario_.checks.exact &&
             kind == variants::ClockKind::kVariantSyscall) {
    CheckExactAmong(call, width_issue);
  }

  // 7: some consistent state that was current during the call gives it.
  // (A clock a variant adds reads constants only, unless it stands for a
  // kernel clock: nothing to tear.)
  if (scenario_.checks.torn && kernel_judged) {
    PropertyStats& s = stats_[static_cast<int>(Property::kTorn) - 1];
    ++s.checked;
    const uint32_t first = writer_->LatestStartedAt(call.start_ns).id;
    const uint32_t last = writer_->LatestStartedAt(call.end_ns).id;
    const uint32_t lo = first > 1 ? first - 1 : 1;
    // A call that saw one page state throughout cannot have mixed states:
    // no store landed during it, none of its loads saw an earlier state
    // (relaxed ordering), and the state it validated was complete (even
    // seq). A wrong value there is the reader's arithmetic, which `exact`
    // reports; called torn too, it pointed at barriers.
    const bool one_state =
        scenario_.checks.exact && has_want && call.stores_during == 0 &&
        call.reordered_loads == 0 && (call.begin_seq & 1) == 0;
    // Most calls: the state they validated was current, and gives it.
    if (!one_state &&
        (!validated_state_gives_it || state->id < lo || state->id > last)) {
      CheckTornAmong(call, lo, last, width_issue, has_want ? state : nullptr);
    }
  }
}

namespace {
constexpr absl::string_view kWidthWhy =
    "the x86 vDSO assumes a 64-bit counter; this one wraps at 2^%d";
}  // namespace

ClockResult Checker::SyscallAt(const UpdateRecord& state,
                               const CallRecord& call) const {
  // The variant's syscall (its era's coarse clocks, its own clocks'), not
  // the model's bare one.
  timekeeper::SyscallContext sc;
  sc.cycles = call.counter;
  sc.has_rtc = scenario_.kernel.has_rtc;
  sc.aux_timekeepers = writer_->AuxStatesAt(call.counter_ns);
  return variants::VariantSyscall(*variant_, writer_->publish_context(),
                                  state.tk, call.clock, sc);
}

void Checker::ReportInexact(const CallRecord& call, const UpdateRecord& state,
                            const ClockResult& want, bool width_issue) {
  const ClockResult& got = *call.result;
  // `want` is the era's vDSO; where the syscall answers otherwise, say so
  // (a 6.1 vDSO clamps a counter behind cycle_last, the syscall masks).
  const ClockResult sys = SyscallAt(state, call);
  const std::string expected =
      sys == want
          ? absl::StrFormat("syscall %s", FormatClockResult(want))
          : absl::StrFormat("its era's vDSO %s (syscall %s)",
                            FormatClockResult(want), FormatClockResult(sys));
  const std::optional<ClockResult> era_value =
      oracle_.EraValue(state.tk, call.clock, call.counter);
  const std::optional<std::string> era =
      era_value && *era_value == got
          ? std::optional<std::string>(variants::EraOracle::kOverflowWhy)
          : std::nullopt;
  Report(Property::kExact,
         width_issue ? Verdict::kPrecondition
         : era       ? Verdict::kKnownKernel
                     : Verdict::kDefect,
         width_issue ? absl::StrFormat(kWidthWhy, scenario_.machine.width_bits)
         : era       ? *era
                     : ArithmeticWhy(),
         absl::StrFormat("%s: vDSO %s, %s at counter %#x "
                         "(page state of update %d, seq %d)",
                         Name(call.clock), FormatClockResult(got), expected,
                         call.counter, state.id, call.begin_seq),
         call);
}

// 1 for a clock the variant adds, read without a seq that names a page
// state (CLOCK_TRACE converts the counter with a factor the page holds, no
// seq around it; or an odd seq): the answer must be the variant's
// syscall's at the counter on some state current during the call.
void Checker::CheckExactAmong(const CallRecord& call, bool width_issue) {
  const ClockResult& got = *call.result;
  PropertyStats& s = stats_[static_cast<int>(Property::kExact) - 1];
  ++s.checked;
  const uint32_t first = writer_->LatestStartedAt(call.start_ns).id;
  const uint32_t last = writer_->LatestStartedAt(call.end_ns).id;
  const uint32_t lo = first > 1 ? first - 1 : 1;
  ClockResult want{};
  for (uint32_t id = lo; id <= last; ++id) {
    const UpdateRecord* u = writer_->Update(id);
    if (u == nullptr) continue;
    want = oracle_.Expected(u->tk, call.clock, call.counter);
    if (want == got) return;
  }
  Report(Property::kExact,
         width_issue ? Verdict::kPrecondition : Verdict::kDefect,
         width_issue ? absl::StrFormat(kWidthWhy, scenario_.machine.width_bits)
                     : ArithmeticWhy(),
         absl::StrFormat("%s: vDSO %s, syscall %s at counter %#x (no page "
                         "state of updates %d..%d gives the vDSO's)",
                         Name(call.clock), FormatClockResult(got),
                         FormatClockResult(want), call.counter, lo, last),
         call);
}

void Checker::CheckTornByRerun(const CallRecord& call) {
  if (!scenario_.checks.torn || settled_ == nullptr || !call.result ||
      call.result->ret != 0) {
    return;
  }
  // A call that saw one page state throughout mixed none.
  if (call.stores_during == 0 && call.reordered_loads == 0 &&
      (call.begin_seq & 1) == 0) {
    return;
  }
  const uint32_t first = writer_->LatestStartedAt(call.start_ns).id;
  const uint32_t last = writer_->LatestStartedAt(call.end_ns).id;
  const uint32_t lo = first > 1 ? first - 1 : 1;
  const CallRecord& as_called = timens_call_ != nullptr ? *timens_call_ : call;
  std::optional<ClockResult> answer;
  uint32_t answer_id = 0;
  for (uint32_t id = lo; id <= last; ++id) {
    const UpdateRecord* u = writer_->Update(id);
    if (u == nullptr) continue;
    const std::optional<ClockResult> again = settled_->Answer(as_called, *u);
    if (!again) return;  // Cannot be told (a kvm-clock machine, a fault).
    if (*again == *as_called.result) {
      ++stats_[static_cast<int>(Property::kTorn) - 1].checked;
      return;
    }
    if (!answer) {
      answer = again;
      answer_id = id;
    }
  }
  if (!answer) return;
  ++stats_[static_cast<int>(Property::kTorn) - 1].checked;
  Report(Property::kTorn, Verdict::kDefect, TornWhy(),
         absl::StrFormat(
             "%s returned %s at counter %#x; rerun at that counter on a page "
             "holding one state of updates %d..%d whole, it answers otherwise "
             "(%s on update %d's)",
             Name(call.clock), FormatClockResult(*as_called.result),
             call.counter, lo, last, FormatClockResult(*answer), answer_id),
         call);
}

void Checker::CheckTornAmong(const CallRecord& call, uint32_t lo, uint32_t last,
                             bool width_issue, const UpdateRecord* validated) {
  const ClockResult& got = *call.result;
  bool found = false;
  for (uint32_t id = lo; id <= last && !found; ++id) {
    const UpdateRecord* u = writer_->Update(id);
    if (u == nullptr) continue;
    const std::optional<ClockResult> era =
        oracle_.EraValue(u->tk, call.clock, call.counter);
    if (oracle_.Expected(u->tk, call.clock, call.counter) == got ||
        (era && *era == got)) {
      found = true;
    }
  }
  // No state gives it; but if the call gives the same answer on a page
  // holding the state it validated, whole, the race did not make it: the
  // reader's arithmetic did, which `exact` reports (sim/settled_answers.h).
  // Only with `exact` on (which then reports it), and for a validated state
  // current during the call (a stale one giving the answer is the finding).
  if (!found && settled_ != nullptr && validated != nullptr &&
      scenario_.checks.exact && validated->id >= lo && validated->id <= last) {
    const CallRecord& as_called =
        timens_call_ != nullptr ? *timens_call_ : call;
    const std::optional<ClockResult> again =
        settled_->Answer(as_called, *validated);
    found = again && as_called.result && *again == *as_called.result;
  }
  if (!found) {
    Report(Property::kTorn,
           width_issue ? Verdict::kPrecondition : Verdict::kDefect,
           width_issue
               ? absl::StrFormat(kWidthWhy, scenario_.machine.width_bits)
               : TornWhy(),
           absl::StrFormat(
               "%s returned %s at counter %#x; no page state of updates "
               "%d..%d gives that%s",
               Name(call.clock), FormatClockResult(got), call.counter, lo, last,
               // An odd seq validated: the reader read during an update
               // without waiting for it to end (no odd check).
               (call.begin_seq & 1) != 0
                   ? absl::StrFormat("; the seq it validated was odd (%d): "
                                     "an update was in progress and the "
                                     "reader did not wait for it to end",
                                     call.begin_seq)
                   : std::string()),
           call);
  }
}

int Checker::CheckMonotonic(const CallRecord& call, const Seen& seen,
                            PerReader& reader) {
  if (!scenario_.checks.monotonic) return -1;
  // The slot is read, then overwritten.
  std::vector<std::pair<ClockId, Seen>>& last = reader.last;
  int8_t* slot = call.clock >= 0 && call.clock < kFactIds
                     ? &reader.last_slot[static_cast<size_t>(call.clock)]
                     : nullptr;
  auto it = slot != nullptr && *slot >= 0
                ? last.begin() + *slot
                : std::find_if(last.begin(), last.end(), [&](const auto& e) {
                    return e.first == call.clock;
                  });
  const bool first = it == last.end();
  if (first) {
    it = last.emplace(last.end(), call.clock, Seen{});
    // A clock's entry stays where it is: its slot is set once.
    if (slot != nullptr && last.size() <= 127) {
      *slot = static_cast<int8_t>(it - last.begin());
    }
  }
  if (!first && it->second.generation == seen.generation) {
    PropertyStats& s = stats_[static_cast<int>(Property::kMonotonic) - 1];
    ++s.checked;
    const Seen& prev = it->second;
    if (seen.value_ns < prev.value_ns) ReportBackwards(call, prev, seen);
  }
  it->second = seen;
  return static_cast<int>(it - last.begin());
}

void Checker::ReportBackwards(const CallRecord& call, const Seen& prev,
                              const Seen& seen) {
  auto why = Explain(prev, seen);
  Report(
      Property::kMonotonic, why ? why->first : Verdict::kDefect,
      why ? why->second : "time went backwards for one reader",
      absl::StrFormat("reader %d: %s read %s (CPU %d, counter %#x) "
                      "after %s (call %d, CPU %d, counter %#x)",
                      call.reader, Name(call.clock), FormatNs(seen.value_ns),
                      seen.counter_cpu, seen.counter, FormatNs(prev.value_ns),
                      prev.reader_call, prev.counter_cpu, prev.counter),
      call);
}

void Checker::CheckCausal(const CallRecord& call, const Seen& seen) {
  // Causality relates calls of different readers: with one reader nothing
  // is ever checked, so the caller skips the per-call bookkeeping
  // (causal_on_).
  Causal& c = causal_[call.clock];
  auto& heap = c.in_flight;
  while (!heap.empty() && heap.top().end_ns < call.start_ns) {
    const Seen& done = heap.top();
    if (!c.has_matured || done.generation > c.matured.generation ||
        (done.generation == c.matured.generation &&
         done.value_ns > c.matured.value_ns)) {
      c.matured = done;
      c.has_matured = true;
    }
    heap.pop();
  }
  const Seen* const matured = c.has_matured ? &c.matured : nullptr;
  if (matured != nullptr && matured->generation == seen.generation &&
      matured->reader != call.reader) {
    PropertyStats& s = stats_[static_cast<int>(Property::kCausal) - 1];
    ++s.checked;
    if (seen.value_ns < matured->value_ns) {
      ReportCausal(call, seen, *matured);
    }
  }
  heap.push(seen);
}

void Checker::ReportCausal(const CallRecord& call, const Seen& seen,
                           const Seen& matured) {
  auto why = Explain(matured, seen);
  // A counter read the CPU ran before the call began, past the loads that
  // preceded it: the one that saw the earlier call end, on real hardware.
  const bool early = call.read_counter && call.counter_ns < call.start_ns;
  std::string how;
  if (early) {
    how = absl::StrFormat(
        "; this call's counter was read %d ns before the call began: an "
        "unordered counter read, which the CPU may run before the loads "
        "that precede it",
        call.start_ns - call.counter_ns);
    if (!why && call.counter_fence_broken) {
      why = std::pair{
          Verdict::kPrecondition,
          std::string("the scenario breaks rdtsc_ordered()'s fence "
                      "(faults.unordered_counter_read): its counter read ran "
                      "before the loads that precede the call")};
    }
  }
  Report(Property::kCausal, why ? why->first : Verdict::kDefect,
         why     ? why->second
         : early ? "a later call returned less than an earlier one: its "
                   "counter read is not ordered after the loads before it "
                   "(rdtsc without the fence of rdtsc_ordered())"
                 : "a later call returned less than an earlier one",
         absl::StrFormat(
             "%s: reader %d read %s (CPU %d, counter %#x), but reader "
             "%d's call %d had returned %s (CPU %d, counter %#x) before "
             "this call started%s",
             Name(call.clock), call.reader, FormatNs(seen.value_ns),
             seen.counter_cpu, seen.counter, matured.reader,
             matured.reader_call, FormatNs(matured.value_ns),
             matured.counter_cpu, matured.counter, how),
         call);
}

void Checker::CheckRawRate(const CallRecord& call, const Seen& seen,
                           const UpdateRecord* state, PerReader& reader) {
  if (!scenario_.checks.raw_rate || state == nullptr || !call.read_counter ||
      !wide_) {
    return;
  }
  const ClockResult& r = *call.result;
  const timekeeper::TkReadBase& raw = state->tk.tkr_raw;
  if (call.clock == kClockMonotonicRaw) {
    // Without negative motion, RAW is exactly the counter's distance from
    // the RAW epoch (boot; a resume or clocksource change starts a new one)
    // at the clocksource's own mult/shift, whatever NTP did.
    if (raw.mask != ~0ull) return;  // A narrow counter wraps: not exact.
    const uint64_t since_last = call.counter - raw.cycle_last;
    const uint64_t since_epoch = call.counter - state->raw_epoch_counter;
    if (since_last > (1ull << 62) || since_epoch > (1ull << 62)) return;
    PropertyStats& s = stats_[static_cast<int>(Property::kRawRate) - 1];
    ++s.checked;
    const unsigned __int128 ns =
        (static_cast<unsigned __int128>(since_epoch) * raw.mult +
         state->raw_epoch_nsec) >>
        raw.shift;
    // timekeeping_init() starts MONOTONIC_RAW at zero.
    const __int128 want =
        static_cast<__int128>(ns) +
        static_cast<__int128>(state->raw_epoch_sec) * 1000000000;
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
  const uint64_t mask = state->tk.tkr_mono.mask;
  const uint64_t since_last =
      (call.counter - state->tk.tkr_mono.cycle_last) & mask;
  const bool usable = since_last <= (mask >> 1);
  if (!reader.has_rate_anchor ||
      reader.rate_anchor.generation != state->ntp_generation ||
      reader.rate_anchor.cpu != call.counter_cpu || !usable) {
    reader.rate_anchor = RateAnchor{state->ntp_generation, call.counter,
                                    ToNs(r.ts), call.counter_cpu};
    reader.has_rate_anchor = usable;
    return;
  }
  const RateAnchor& a = reader.rate_anchor;
  const uint64_t dc = (call.counter - a.counter) & mask;
  if (dc > (mask >> 2) + 1) return;  // Backwards; monotonic covers it.
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
  reader.rate_anchor = RateAnchor{state->ntp_generation, call.counter,
                                  ToNs(r.ts), call.counter_cpu};
}

void Checker::CheckCrossClock(const CallRecord& call, const Seen& seen,
                              const UpdateRecord* state,
                              const PreviousCall* previous,
                              const Seen* previous_seen) {
  if (!scenario_.checks.cross_clock || state == nullptr ||
      previous == nullptr) {
    return;
  }
  const PreviousCall& prev = *previous;
  if (!prev.ok || prev.clock == call.clock) return;
  const Seen& prev_seen = *previous_seen;
  const UpdateRecord* pstate = StateOf(prev.state_id);
  if (pstate == nullptr ||
      pstate->clock_was_set_seq != state->clock_was_set_seq) {
    return;
  }
  // Both values advance at most 1.2x true time (ADJ_TICK allows 10%),
  // from the earlier of the calls' starts and their counter reads to the
  // later end. An unordered read may run before its call began, but not
  // before the reader's previous call ended (engine.cc), so of the two
  // reads only the previous call's can come before both starts.
  uint64_t from = std::min(call.start_ns, prev.start_ns);
  if (prev_seen.read_counter && prev_seen.counter_ns < from) {
    from = prev_seen.counter_ns;
  }
  const uint64_t span = std::max(call.end_ns, prev.end_ns) - from;
  // Each counter read is the counter's value floored to its last cycle, so
  // two reads a span apart may be a cycle more apart than the span: on a
  // slow counter (ACPI PM's 279 ns cycle) more than the span allows.
  // mult >> shift, plus one for the truncation, bounds a cycle's ns.
  const uint64_t cycle_ns =
      (uint64_t{state->tk.tkr_mono.mult} >> state->tk.tkr_mono.shift) + 1;
  // In 64 bits where the product fits (an __int128 division is a libgcc
  // call): the same value.
  const __int128 tol =
      (span < (uint64_t{1} << 59) ? static_cast<__int128>(span * 12 / 10 + 2)
                                  : static_cast<__int128>(span) * 12 / 10 + 2) +
      cycle_ns;
  const __int128 diff = seen.value_ns - prev_seen.value_ns;
  PropertyStats& s = stats_[static_cast<int>(Property::kCrossClock) - 1];

  auto a = OffsetFromMonotonic(prev.clock, pstate->tk);
  auto b = OffsetFromMonotonic(call.clock, state->tk);
  if (a && b) {
    ++s.checked;
    const __int128 want = *b - *a;
    if (diff - want > tol || want - diff > tol) {
      ReportDrift(call, prev, prev_seen, seen, diff, want, tol);
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

void Checker::ReportDrift(const CallRecord& call, const PreviousCall& prev,
                          const Seen& prev_seen, const Seen& seen,
                          __int128 diff, __int128 want, __int128 tol) {
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

}  // namespace vdsolab::sim
