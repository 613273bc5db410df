#include "sim/checker.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/checker_internal.h"

namespace vdsolab::sim {
namespace {

using checker_internal::IsHres;
using checker_internal::IsMonotonicFamily;
using checker_internal::IsSettable;
using checker_internal::ToNs;
using vdso::SignalName;

// Violations kept for the report, per kind (failures and preconditions),
// so that many precondition notes cannot hide the first defect.
constexpr size_t kMaxViolationsPerKind = 20;

}  // namespace

Checker::Checker(const Scenario& scenario, const Machine* machine,
                 const Writer* writer, const variants::Variant* variant)
    : scenario_(scenario),
      machine_(machine),
      writer_(writer),
      variant_(variant),
      tsc_(CounterFactsOf(scenario.machine).tsc),
      wide_(CounterFactsOf(scenario.machine).wide),
      causal_on_(scenario.checks.causal && scenario.readers.size() >= 2),
      oracle_(*variant, writer->publish_context(),
              variants::CounterFacts{tsc_, wide_}),
      boot_counter_(writer->publish_context().boot_counter) {
  for (ClockId c = 0; c < kFactIds; ++c) {
    facts_[static_cast<size_t>(c)] = MakeFacts(c);
  }
}

Checker::ClockFacts Checker::MakeFacts(ClockId clock) const {
  ClockFacts f;
  f.own = variants::FindOwnClock(*variant_, clock);
  f.kind = f.own != nullptr ? f.own->kind : variants::ClockKind::kKernel;
  // An own clock with `same_as` is judged as that kernel clock.
  const ClockId judged_as = variants::JudgedAs(f.own, clock);
  f.alias = judged_as != clock;
  f.hres = IsHres(judged_as);
  f.kernel_judged = f.kind == variants::ClockKind::kKernel || f.alias;
  f.needs_counter =
      f.hres || (f.kind == variants::ClockKind::kVariantSyscall && !f.alias);
  f.aux_kernel =
      checker_internal::IsAux(clock) && f.kind == variants::ClockKind::kKernel;
  f.monotonic = f.own != nullptr && !f.alias ? f.own->monotonic
                                             : IsMonotonicFamily(judged_as);
  // checks.sane decided once per run here, not on every call.
  f.timespec = scenario_.checks.sane &&
               (f.own == nullptr ||
                f.own->encoding == variants::ClockEncoding::kTimespec);
  f.count_in_tv_sec = f.own != nullptr &&
                      f.own->encoding == variants::ClockEncoding::kCountInTvSec;
  f.settable = IsSettable(judged_as);
  f.unserved = f.own == nullptr && !f.hres &&
               !checker_internal::IsCoarse(clock) &&
               !checker_internal::IsAux(clock);
  // An alias is held to its kernel clock's fast path too.
  f.served = (f.own == nullptr || f.alias) &&
             variants::ServesFromPage(*variant_, clock);
  return f;
}

bool Checker::HasFailure() const {
  for (const PropertyStats& s : stats_) {
    if (s.defects != 0 || (s.known_kernel != 0 && !accept_known_)) {
      return true;
    }
  }
  return false;
}

Checker::PerReader& Checker::NewReaderState(int reader) {
  const auto [slot, fresh] = reader_slots_.try_emplace(reader, readers_.size());
  if (fresh) readers_.push_back(std::make_unique<PerReader>());
  cached_reader_ = reader;
  cached_state_ = readers_[slot->second].get();
  return *cached_state_;
}

size_t Checker::retained_states() const {
  size_t n = divergence_anchor_.size();
  for (const std::unique_ptr<PerReader>& r : readers_) {
    n += r->last.size() + (r->has_previous ? 1 : 0) +
         (r->has_rate_anchor ? 1 : 0);
  }
  for (const auto& [clock, c] : causal_) {
    n += c.in_flight.size() + (c.has_matured ? 1 : 0);
  }
  return n;
}

size_t Checker::retained_divergence_points() const {
  size_t n = 0;
  for (const auto& [clock, d] : divergence_) n += d.series.size();
  return n;
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
  // The first of each property and verdict is kept beyond the cap, so a
  // report can give an example of every kind.
  bool& first =
      first_of_kind_[static_cast<size_t>(p) - 1][static_cast<size_t>(v)];
  if (kept < kMaxViolationsPerKind || !first) {
    if (kept < kMaxViolationsPerKind) ++kept;
    first = true;
    // A namespace reader's answer is judged moved to the initial
    // namespace's timeline (Unshift()): say so, and what it returned.
    if (timens_call_ != nullptr && timens_call_->index == call.index &&
        timens_call_->result) {
      absl::StrAppendFormat(
          &detail,
          " (times on the initial namespace's timeline: in the time "
          "namespace the reader returned %s, less the namespace's %s offset "
          "%s)",
          FormatClockResult(*timens_call_->result), Name(call.clock),
          FormatTimespec(TimensOffsetOf(call.clock)));
    }
    violations_.push_back(Violation{
        p, v, std::move(why), std::move(detail), call.index, call.reader,
        call.reader_call, call.start_ns,
        call.fault && call.fault->kind == vdso::CallFault::Kind::kSpin});
  }
}

void Checker::OnEntryPoints(const std::vector<EntryPointVerdict>& verdicts,
                            const CallRecord& at) {
  for (const EntryPointVerdict& v : verdicts) {
    PropertyStats& s = stats_[static_cast<int>(v.property) - 1];
    ++s.checked;
    if (v.ok) continue;
    if (!v.keep) {
      ++s.defects;
      continue;
    }
    const size_t kept = violations_.size();
    if (v.watchdog_stopped) {
      CallRecord stopped = at;
      stopped.fault = vdso::CallFault{};
      stopped.fault->kind = vdso::CallFault::Kind::kSpin;
      Report(v.property, Verdict::kDefect, v.why, v.detail, stopped);
    } else {
      Report(v.property, Verdict::kDefect, v.why, v.detail, at);
    }
    if (violations_.size() > kept) violations_.back().entry_point = true;
  }
}

std::string Checker::Name(ClockId clock) const {
  return variants::VariantClockName(*variant_, clock);
}

// An aux clock's answer: its own states and checks (checker_aux.cc), then
// sanity and monotonicity within one setting of the clock.
void Checker::OnAuxCall(const CallRecord& call, PerReader& reader) {
  const ClockResult& r = *call.result;
  // An aux clock the syscall refused throughout (not enabled), whose answer
  // no publication of its record gives, is as unserved as an invalid id:
  // an answer from another clock's record was judged only as torn. (One
  // that a publication gives was read from a state since disabled: a
  // reordered load's, judged as usual.)
  const bool unserved =
      !call.fell_back && AuxUnservedDuring(call) && !AuxPublicationGives(call);
  if (unserved) CheckUnservedAnswer(call);
  const AuxRecord* state =
      call.fell_back || unserved ? nullptr : CheckAuxExactAndTorn(call);
  Seen seen;
  seen.value_ns = ToNs(r.ts);
  seen.call_index = call.index;
  seen.reader = call.reader;
  seen.reader_call = call.reader_call;
  seen.end_ns = call.end_ns;
  // A fallback read the newest state; settime/ADJ_SETOFFSET on the aux
  // clock bump its clock_was_set_seq.
  const timekeeper::Timekeeper* aux = writer_->AuxStatesAt(call.end_ns);
  seen.generation = state != nullptr ? state->tk.clock_was_set_seq
                    : aux != nullptr
                        ? aux[call.clock - kClockAux].clock_was_set_seq
                        : 0;
  seen.read_counter = call.read_counter;
  seen.counter = call.counter;
  seen.counter_cpu = call.counter_cpu;
  seen.counter_ns = call.counter_ns;
  seen.counter_step_ns = call.counter_step_ns;
  seen.clock = call.clock;
  // An aux clock reads the counter in its record's clock mode.
  seen.source =
      call.pvclock_read ? CounterSource::kKvmClock : CounterSource::kMachine;
  const KvmSkew skew = seen.source == CounterSource::kKvmClock
                           ? KvmSkewOf(call, seen.source)
                           : KvmSkew{};
  seen.kvm_skew_cpu = skew.cpu;
  seen.kvm_skew_cycles = skew.cycles;
  PropertyStats& sane = stats_[static_cast<int>(Property::kSane) - 1];
  if (scenario_.checks.sane) ++sane.checked;
  if (scenario_.checks.sane &&
      (r.ts.tv_nsec < 0 || r.ts.tv_nsec >= 1000000000 || r.ts.tv_sec < 0 ||
       r.ts.tv_sec > kKtimeSecMax)) {
    Report(Property::kSane, Verdict::kDefect, "out of range",
           absl::StrFormat("%s returned %s", Name(call.clock),
                           FormatTimespec(r.ts)),
           call);
  }
  CheckMonotonic(call, seen, reader);
  if (causal_on_) CheckCausal(call, seen);
}

// A namespace reader's answer on the initial namespace's timeline: its
// clock's offset (timens_add_monotonic()/timens_add_boottime()) taken off,
// in exact integer ns. Judging that against the oracle is judging the
// answer against the oracle plus the offset, and it lets the cross-reader
// properties (causality) compare namespace and initial readers on one
// timeline. An answer that is not a normalised timespec moves by the same
// offset and stays as unnormalised as it was (the same whole seconds
// carried in tv_nsec), so that property 4 reports it while the others
// judge the instant it names, as they do outside a namespace; left on the
// namespace's timeline it made causality and cross-clock defects of a
// correct instant.
Timespec64 Checker::TimensOffsetOf(ClockId clock) const {
  const timekeeper::TimensOffsets offsets{scenario_.kernel.timens_monotonic,
                                          scenario_.kernel.timens_boottime};
  // An alias moves as the kernel clock it stands for.
  return timekeeper::TimensAdd(variants::JudgedAs(*variant_, clock), offsets,
                               Timespec64{0, 0});
}

void Checker::UnshiftResult(ClockId clock, ClockResult* r) const {
  if (r->ret != 0) return;
  const __int128 nsec_per_sec = kNsecPerSec;
  // Whole seconds tv_nsec carries beyond [0, 1 s), as ns: 0 when normalised
  // (nearly every answer: no division then).
  __int128 carried = 0;
  if (r->ts.tv_nsec < 0 || r->ts.tv_nsec >= static_cast<int64_t>(kNsecPerSec))
      [[unlikely]] {
    carried = r->ts.tv_nsec % nsec_per_sec;
    if (carried < 0) carried += nsec_per_sec;
    carried = r->ts.tv_nsec - carried;
  }
  const Timespec64 off = TimensOffsetOf(clock);
  const __int128 ns = ToNs(r->ts) - ToNs(off);
  __int128 sec = ns / nsec_per_sec;
  __int128 rem = ns % nsec_per_sec;
  if (rem < 0) {
    rem += nsec_per_sec;
    --sec;
  }
  if (carried != 0) [[unlikely]] {
    sec -= carried / nsec_per_sec;
    rem += carried;
  }
  r->ts = Timespec64{static_cast<int64_t>(sec), static_cast<int64_t>(rem)};
}

CallRecord Checker::Unshift(const CallRecord& call) const {
  CallRecord out = call;
  // Judged on the initial namespace's timeline from here on, whatever
  // the answer (an unnormalised one stays unnormalised, for property 4).
  out.timens = false;
  UnshiftResult(call.clock, &*out.result);
  // The syscall's answer held the offsets too.
  UnshiftResult(call.clock, &out.fallback_result);
  return out;
}

void Checker::CheckFallbackAnswer(const CallRecord& call) {
  if (!call.result || !scenario_.checks.exact) return;
  ++stats_[static_cast<int>(Property::kExact) - 1].checked;
  // clock_gettime_fallback() passes the caller's clock on (lib/vdso, every
  // era): another clock's answer is not this clock's, whatever it says.
  if (call.fallback_clock != call.clock) {
    Report(Property::kExact, Verdict::kDefect,
           "the call fell back to the syscall for another clock",
           absl::StrFormat("%s made the syscall for %s and returned %s",
                           Name(call.clock), Name(call.fallback_clock),
                           FormatClockResult(*call.result)),
           call);
    return;
  }
  if (*call.result == call.fallback_result) return;
  Report(Property::kExact, Verdict::kDefect,
         "the call fell back to the syscall and returned something else",
         absl::StrFormat("%s returned %s; the syscall it made answered %s",
                         Name(call.clock), FormatClockResult(*call.result),
                         FormatClockResult(call.fallback_result)),
         call);
}

// Property 8 for a call that looped past its budget or gave no answer;
// whether it answered (the other properties judge the answer then).
std::string Checker::UnusualDelta(const CallRecord& call) {
  if (!call.read_counter || call.fell_back) return "";
  // The timekeeper's hres clocks only: an aux clock's seq names its own
  // record's publications, not an update of this state.
  const ClockFacts& facts = Facts(call.clock);
  if (!facts.hres || facts.aux_kernel) return "";
  const UpdateRecord* state = StateOf(call.begin_seq / 2);
  if (state == nullptr) return "";
  const uint64_t mask = state->tk.tkr_mono.mask;
  const uint64_t last = state->tk.tkr_mono.cycle_last;
  const uint64_t delta = (call.counter - last) & mask;
  if (delta > (mask >> 1)) {
    return absl::StrFormat(
        "; its counter read (%#x) was %d cycles behind the page's "
        "cycle_last (%#x): negative motion, which the x86 vDSO clamps to "
        "the base time",
        call.counter, (last - call.counter) & mask, last);
  }
  if (delta > state->tk.tkr_mono.clock->max_cycles) {
    return absl::StrFormat(
        "; its counter read (%#x) was %d cycles past the page's cycle_last, "
        "beyond max_cycles (%d), where delta * mult may pass 64 bits",
        call.counter, delta, state->tk.tkr_mono.clock->max_cycles);
  }
  return "";
}

bool Checker::CheckLoops(const CallRecord& call) {
  // A reader that goes on after may_retry() said stop (the budget spent)
  // is livelocked as much as one that returns VDSOLAB_ABANDONED: the
  // simulation counted every iteration it asked for.
  if (call.result && call.iterations > scenario_.checks.livelock_budget) {
    ++coverage_.livelocks;
    Report(Property::kLivelock, Verdict::kDefect,
           "the reader went on looping after its loop budget was spent",
           absl::StrFormat("%s returned after %d loop iterations; "
                           "may_retry() said stop after %d",
                           Name(call.clock), call.iterations,
                           scenario_.checks.livelock_budget),
           call);
  }
  // A vDSO call makes its fallback system call once; one that makes them
  // in a loop (each charged the syscall's simulated time until the budget
  // is spent) is livelocked too.
  if (call.result && call.fallbacks > scenario_.checks.livelock_budget) {
    ++coverage_.livelocks;
    Report(Property::kLivelock, Verdict::kDefect,
           "the reader made the fallback system call in a loop",
           absl::StrFormat("%s returned after %d fallback system calls "
                           "(a vDSO call makes one; the loop budget is %d)",
                           Name(call.clock), call.fallbacks,
                           scenario_.checks.livelock_budget),
           call);
  }
  if (!call.result) {
    ++coverage_.livelocks;
    // A reader gives up when may_retry() says stop, which it says once the
    // budget is spent; a plugin may give up before it asks.
    const bool spent = call.iterations > scenario_.checks.livelock_budget;
    Report(Property::kLivelock, Verdict::kDefect,
           spent ? "the reader kept looping"
                 : "the reader gave up without an answer",
           spent ? absl::StrFormat(
                       "%s abandoned after %d loop iterations%s",
                       Name(call.clock), call.iterations,
                       // The namespace page's seq never turns even: a
                       // reader that spins on it without lib/vdso's
                       // namespace path never reads the counter.
                       call.timens && !call.read_counter
                           ? "; the reader is in a time namespace, whose "
                             "page's seq stays odd (clock_mode "
                             "VDSO_CLOCKMODE_TIMENS): without "
                             "do_hres_timens()'s path to the time page it "
                             "spins there for ever (docs/plugins.md)"
                           : "")
                 : absl::StrFormat(
                       "%s gave up (VDSOLAB_ABANDONED) after %d retr%s, "
                       "before may_retry() said stop (it says so after %d)",
                       Name(call.clock), call.iterations,
                       call.iterations == 1 ? "y" : "ies",
                       scenario_.checks.livelock_budget),
           call);
    return false;
  }
  return true;
}

void Checker::OnCall(const CallRecord& call) {
  if (call.timens && call.result && call.result->ret == 0) {
    ++coverage_.timens_calls;
    timens_call_ = &call;
    OnCall(Unshift(call));
    timens_call_ = nullptr;
    return;
  }
  if (call.fell_back) {
    CheckFallbackAnswer(call);
    CheckFallbackCause(call);
  }
  ++coverage_.calls;
  if (call.iterations > 1) ++coverage_.retries;
  if (call.stores_during > 0) ++coverage_.raced;
  if (call.migrated_before) ++coverage_.migrations;
  if (call.migrated_midcall) ++coverage_.midcall_migrations;
  if (call.preempted) ++coverage_.preemptions;
  coverage_.reordered_loads += call.reordered_loads;
  if (call.pvclock_read) ++coverage_.pvclock_reads;
  if (call.pvclock_read && call.pvclock_stores_during != 0) {
    ++coverage_.pvclock_raced;
  }
  if (call.read_counter &&
      call.counter_cpu != scenario_.kernel.timekeeping_cpu) {
    ++coverage_.cross_cpu_reads;
  }
  // Below its boot value by a wrap past the width, not by a CPU whose
  // counter is behind (skew, a step back): the unwrapped counter is past
  // the mask (or below zero).
  if (call.read_counter && call.counter < boot_counter_ &&
      writer_->LatestStartedAt(call.counter_ns).source ==
          CounterSource::kMachine) {
    const __int128 ideal =
        machine_->IdealCounter(call.counter_cpu, call.counter_ns);
    if (ideal < 0 || ideal > static_cast<__int128>(machine_->mask())) {
      ++coverage_.counter_wrapped;
    }
  }

  if (!stall_reported_ && writer_->timekeeping().stalled_loop() != nullptr) {
    CheckTimekeeperLoops(call);
  }
  // 8 and 9: termination.
  PropertyStats& live = stats_[static_cast<int>(Property::kLivelock) - 1];
  ++live.checked;
  ++stats_[static_cast<int>(Property::kCrash) - 1].checked;
  if (call.fault && call.fault->kind == vdso::CallFault::Kind::kCrash) {
    ++coverage_.crashes;
    if (call.fault->called != nullptr) {
      const std::string what = vdso::FaultCause(*call.fault);
      // `what` is a call the code made ("fork()"), or how it returned
      // ("returned with the direction flag set"); `place` where it loaded
      // (outside the vvar area).
      const std::string place = vdso::FaultPlace(*call.fault);
      std::string detail = absl::StrFormat(
          "%s %s%s%s after %d loop iteration(s)", Name(call.clock),
          call.fault->returned ? "" : "called ", what,
          place.empty() ? "" : " at address " + place, call.iterations);
      if (call.fault->why != nullptr) {
        absl::StrAppend(&detail, " (", call.fault->why,
                        "); vdsolab dropped the call's answer");
      } else {
        absl::StrAppend(
            &detail, "; vdsolab stopped it",
            what == "fork()" ? " (a forked child ends at once)" : "",
            " and dropped the call's answer");
      }
      Report(Property::kCrash, Verdict::kDefect,
             absl::StrCat("the call did what a vDSO call cannot (", what, ")"),
             std::move(detail), call);
      return;
    }
    if (call.fault->exit_status >= 0) {
      Report(Property::kCrash, Verdict::kDefect,
             absl::StrFormat("the call tried to end the process (%s)",
                             vdso::FaultCause(*call.fault)),
             absl::StrFormat("%s called %s after %d loop iteration(s); "
                             "vdsolab stopped it there",
                             Name(call.clock), vdso::FaultCause(*call.fault),
                             call.iterations),
             call);
      return;
    }
    const std::string place = vdso::FaultPlace(*call.fault);
    Report(Property::kCrash, Verdict::kDefect,
           absl::StrFormat("the call crashed (%s)",
                           SignalName(call.fault->signal)),
           absl::StrFormat("%s died of %s%s after %d loop iteration(s)%s",
                           Name(call.clock), SignalName(call.fault->signal),
                           place.empty() ? "" : " at address " + place,
                           call.iterations, UnusualDelta(call)),
           call);
    return;
  }
  if (call.fault) {
    ++coverage_.livelocks;
    if (call.fault->blocked && call.fault->returned) {
      Report(Property::kLivelock, Verdict::kDefect,
             absl::StrFormat("the call blocked for over %.0f ms before it "
                             "returned",
                             call.fault->seconds * 1000),
             absl::StrFormat("%s returned after the watchdog saw it asleep "
                             "in the kernel (a sleep, a futex or I/O wait) "
                             "for over %.0f ms (%d loop iteration(s) seen), "
                             "which a vDSO call never is: a quarter of the "
                             "--call-timeout bound counts, as for a spin",
                             Name(call.clock), call.fault->seconds * 1000,
                             call.iterations),
             call);
      return;
    }
    if (call.fault->blocked) {
      Report(Property::kLivelock, Verdict::kDefect,
             absl::StrFormat("the call blocked for %.1f s without returning",
                             call.fault->seconds),
             absl::StrFormat("%s stopped by the watchdog after %.1f s asleep "
                             "in the kernel (a sleep, a futex or I/O wait), "
                             "which a vDSO call never is (%d loop "
                             "iteration(s) seen)",
                             Name(call.clock), call.fault->seconds,
                             call.iterations),
             call);
      return;
    }
    if (call.fault->returned) {
      Report(Property::kLivelock, Verdict::kDefect,
             absl::StrFormat("the call ran for over %.0f ms before it returned",
                             call.fault->seconds * 1000),
             absl::StrFormat("%s returned after over %.0f ms of CPU (%d loop "
                             "iteration(s) seen), where a vDSO call takes "
                             "microseconds: a spin, as a quarter of the "
                             "--call-timeout bound counts, whether or not "
                             "the machine finishes it under the bound",
                             Name(call.clock), call.fault->seconds * 1000,
                             call.iterations),
             call);
      return;
    }
    Report(Property::kLivelock, Verdict::kDefect,
           absl::StrFormat("the call spun for %.1f s without returning",
                           call.fault->seconds),
           absl::StrFormat("%s stopped by the watchdog after %.1f s "
                           "(%d loop iteration(s) seen)%s",
                           Name(call.clock), call.fault->seconds,
                           call.iterations, UnusualDelta(call)),
           call);
    return;
  }
  // 8: loops past the budget, or no answer. Out of line: a call that
  // answered within its budget is nearly every call.
  const uint32_t budget = scenario_.checks.livelock_budget;
  if (!call.result || call.iterations > budget || call.fallbacks > budget)
      [[unlikely]] {
    if (!CheckLoops(call)) return;
  }
  const ClockResult& r = *call.result;
  if (call.fell_back) {
    ++coverage_.fallbacks;
  } else {
    ++coverage_.vdso_answers;
  }
  std::array<uint64_t, 3>* per_clock =
      call.clock >= 0 && call.clock < kFactIds
          ? per_clock_[static_cast<size_t>(call.clock)]
          : nullptr;
  if (per_clock == nullptr) {
    per_clock = &coverage_.per_clock[call.clock];
    if (call.clock >= 0 && call.clock < kFactIds) {
      per_clock_[static_cast<size_t>(call.clock)] = per_clock;
    }
  }
  ++(*per_clock)[call.fell_back ? 1 : (r.ret != 0 ? 2 : 0)];
  if (r.ret != 0) {
    ++coverage_.errors;
    if (!call.fell_back) CheckVdsoError(call);
    return;
  }

  const ClockFacts& facts = Facts(call.clock);
  // Looked up once: every check below keeps its state here.
  PerReader& reader = ReaderState(call.reader);
  if (facts.aux_kernel) {
    OnAuxCall(call, reader);
    return;
  }
  const uint32_t state_id =
      call.fell_back ? call.fallback_update : call.begin_seq / 2;
  const UpdateRecord* state = StateOf(state_id);
  bool negative_motion = false;
  if (state != nullptr && call.read_counter && facts.hres) {
    const uint64_t mask = state->tk.tkr_mono.mask;
    const uint64_t delta =
        (call.counter - state->tk.tkr_mono.cycle_last) & mask;
    if (delta > (mask >> 1)) {
      ++coverage_.negative_motion;
      negative_motion = true;
    } else if (delta > state->tk.tkr_mono.clock->max_cycles) {
      ++coverage_.beyond_max_cycles;
    }
  }

  const variants::ClockDef* own_def = facts.own;
  // The value is exactly the era's (and not the modern kernel's): later
  // checks that trip over it are explained by the era.
  const char* era_why =
      state != nullptr && call.read_counter && !call.fell_back
          ? oracle_.ExplainAnswer(state->tk, call.clock, call.counter, r)
          : nullptr;
  // What `counter` is: the state's clocksource, but the TSC for a
  // variant's own clock (it reads the TSC itself) and kvm-clock for a call
  // that read the pvclock page whatever state it was judged by (a torn
  // one).
  const CounterSource source = call.pvclock_read  ? CounterSource::kKvmClock
                               : state == nullptr ? CounterSource::kMachine
                               : own_def != nullptr && !facts.alias &&
                                       state->source == CounterSource::kKvmClock
                                   ? CounterSource::kMachine
                                   : state->source;
  const KvmSkew skew =
      source == CounterSource::kKvmClock ? KvmSkewOf(call, source) : KvmSkew{};
  // Every field given: a default-initialised Seen is zeroed first, a
  // string instruction that cost more than the fields' own stores.
  const Seen seen{
      .value_ns =
          facts.count_in_tv_sec
              ? static_cast<__int128>(static_cast<uint64_t>(r.ts.tv_sec))
              : ToNs(r.ts),
      .call_index = call.index,
      .reader = call.reader,
      .reader_call = call.reader_call,
      .end_ns = call.end_ns,
      .generation =
          (state != nullptr && facts.settable) ? state->clock_was_set_seq : 0,
      .coarse_off = state != nullptr &&
                    oracle_.ShowsCoarseOffBySecond(state->coarse_off_by_second),
      .counter = call.counter,
      .counter_cpu = call.counter_cpu,
      .read_counter = call.read_counter,
      .counter_ns = call.counter_ns,
      .counter_step_ns = call.counter_step_ns,
      .negative_motion = negative_motion,
      .cycle_last = state != nullptr ? state->tk.tkr_mono.cycle_last : 0,
      .cycle_last_ideal = state != nullptr ? state->cycle_last_ideal : 0,
      .wrap_losses = state != nullptr ? state->wrap_losses : 0,
      .clock = call.clock,
      .era_why = era_why,
      .ntp_generation = state != nullptr ? state->ntp_generation : 0,
      .source = source,
      .kvm_skew_cpu = skew.cpu,
      .kvm_skew_cycles = skew.cycles,
  };

  // 4: sane values (a clock that encodes a count by design is not a
  // timespec: not checked).
  PropertyStats& sane = stats_[static_cast<int>(Property::kSane) - 1];
  const bool timespec = facts.timespec;
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

  if (call.pvclock_read && !call.fell_back && facts.hres) {
    CheckPvclockStable(call);
  }
  if (!call.fell_back && facts.unserved) {
    CheckUnservedAnswer(call);
  } else if (!call.fell_back && (call.begin_seq & 1) == 0 && state != nullptr) {
    CheckExactAndTorn(call, facts, state);
  } else if (!call.fell_back) {
    CheckExactAndTorn(call, facts, nullptr);
  }

  // Where CheckMonotonic() stored `seen` (-1: nowhere).
  int stored_at = -1;
  if (facts.monotonic) {
    stored_at = CheckMonotonic(call, seen, reader);
    if (causal_on_) CheckCausal(call, seen);
  }
  if (own_def != nullptr) {
    // An alias has its kernel clock's oracle: nothing to measure.
    if (!facts.alias) MeasureDivergence(call, seen);
    return;  // RAW's rate and cross-clock offsets are kernel-clock facts.
  }
  // RAW's exactness and MONOTONIC's rate (the other clocks have none).
  if (call.clock == kClockMonotonicRaw || call.clock == kClockMonotonic) {
    CheckRawRate(call, seen, state, reader);
  }
  if (!PaceRecentlyChecked(call.end_ns)) CheckPace(call);
  // The reader's previous call is read, then replaced. Its value's slot
  // in `last` is looked up here, after CheckMonotonic() may have grown it.
  CheckCrossClock(call, seen, state,
                  reader.has_previous ? &reader.previous : nullptr,
                  reader.has_previous ? &reader.PreviousSeen() : nullptr);
  reader.has_previous = true;
  reader.previous =
      PreviousCall{call.clock, call.result && call.result->ret == 0,
                   call.fell_back ? call.fallback_update : call.begin_seq / 2,
                   call.start_ns, call.end_ns};
  reader.previous_slot = stored_at;
  if (stored_at < 0) reader.previous_seen = seen;
}

}  // namespace vdsolab::sim
