// File: sim/checker.h
//
// The properties a simulation run checks, call by call (in start order):
//   1 exact       the vDSO's answer equals the syscall model's at the counter
//                 value it used, for the page state it validated;
//   2 monotonic   per reader and clock, no value below the previous one;
//   3 causal      a call that started after another ended (true time) does
//                 not return less;
//   4 sane        tv_nsec in [0, 1e9) and 0 <= tv_sec <= KTIME_SEC_MAX;
//   5 raw_rate    liveness: every clock keeps pace with true time. A
//                 reader's MONOTONIC_RAW is exactly the raw conversion of
//                 the counter since boot and its MONOTONIC advances at NTP's
//                 rate; the timekeeper's own clocks (checker_pace.cc), at
//                 every call: RAW exact from the unwrapped counter and the
//                 clocksource's mult/shift, MONOTONIC within NTP's rate and
//                 the error bound of its arithmetic, REALTIME with it, the
//                 coarse clock within the ticks' accumulation;
//   6 cross_clock BOOTTIME - MONOTONIC, REALTIME - MONOTONIC, TAI - REALTIME
//                 constant between events; coarse never ahead of fine;
//   7 torn        the answer is one some single consistent page state gives;
//   8 livelock    the call finished within the loop budget and, for foreign
//                 code, within the wall-time bound; the timekeeper's loops
//                 ended within theirs (tk_internal::LoopGuard);
//   9 crash       the call did not die of a signal (foreign code runs
//                 contained: variants/plugin/call_guard.h);
//  10 fast_path   a call of a clock the variant serves from the page went
//                 to the syscall only where its era's reader does: a page
//                 state in the call's window in clock mode NONE, kvm-clock
//                 without the stable bit (for a reader with the pvclock
//                 path), or (before 6.5) a counter read with bit 63 set.
//                 Never for a coarse clock: lib/vdso's do_coarse() has no
//                 fallback. Aux clocks are not judged.
//
// Each violation carries a verdict: a defect (of the reader, or the kernel
// model it reads), a violated precondition of the design (counters skewed
// or running backwards, a counter narrower than the x86 vDSO assumes), or a
// known kernel behaviour (docs/findings.md). What a correct reader answers,
// and which odd answers its era explains, the variant's era oracle says
// (variants/era_oracle.h): the checker knows no era itself.
//
// Files: checker.cc (the per-call flow), checker_properties.cc (one
// function per property), checker_verdicts.cc (preconditions and known
// behaviours); properties.h and coverage.h hold what a run reports.

#ifndef VDSOLAB_SIM_CHECKER_H_
#define VDSOLAB_SIM_CHECKER_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "sim/call.h"
#include "sim/coverage.h"
#include "sim/entry_points.h"
#include "sim/machine.h"
#include "sim/properties.h"
#include "sim/scenario.h"
#include "sim/settled_answers.h"
#include "sim/writer.h"
#include "variants/era_oracle.h"
#include "variants/variant.h"

namespace vdsolab::sim {

class Checker {
 public:
  Checker(const Scenario& scenario, const Machine* machine,
          const Writer* writer, const variants::Variant* variant);

  // Checks one call; calls must arrive in non-decreasing start order.
  void OnCall(const CallRecord& call);
  // Counts and reports a probe of the reader's other entry points
  // (sim/entry_points.h), judged there, as made just before `at`.
  void OnEntryPoints(const std::vector<EntryPointVerdict>& verdicts,
                     const CallRecord& at);

  const std::array<PropertyStats, kNumProperties>& stats() const {
    return stats_;
  }
  const Coverage& coverage() const { return coverage_; }
  const std::map<ClockId, Divergence>& divergence() const {
    return divergence_;
  }
  // The first violations of each kind (up to a cap), in the order found.
  const std::vector<Violation>& violations() const { return violations_; }
  // Any defect, or a known kernel behaviour unless those are accepted.
  bool HasFailure() const;
  // What the checker holds between calls, in records (RunResult::retained):
  // the per-(reader, clock), per-reader and per-clock state its properties
  // need (the last value, calls still in flight, anchors), and the points
  // of the divergence series. Neither grows with the calls checked.
  size_t retained_states() const;
  // How many expected answers came from a page state's base without the
  // syscall model, and whether a check against it turned that off
  // (ExpectedLine; tests show it is used and stays on).
  struct ShortcutStats {
    uint64_t answers = 0;
    bool off = false;
  };
  ShortcutStats expected_shortcut() const {
    return {shortcut_answers_, !expected_shortcut_};
  }
  size_t retained_divergence_points() const;
  // --accept=known: documented kernel behaviours pass.
  void AcceptKnown(bool accept) { accept_known_ = accept; }
  // Asked before a call is reported torn (sim/settled_answers.h); without
  // it every wrong answer no state gives is torn.
  void SetSettledAnswers(SettledAnswers* settled) { settled_ = settled; }

 private:
  struct Seen {  // A returned value and what is needed to explain it.
    __int128 value_ns = 0;
    uint64_t call_index = 0;
    int reader = 0;
    uint64_t reader_call = 0;
    uint64_t end_ns = 0;
    uint32_t generation = 0;
    // The bools apart: side by side, GCC 12 built them in a stack slot
    // byte by byte and copied them with one 2-byte load, which stalled on
    // store forwarding in every call.
    bool coarse_off = false;
    uint64_t counter = 0;
    int counter_cpu = 0;
    bool read_counter = false;
    uint64_t counter_ns = 0;
    uint64_t counter_step_ns = 0;   // CallRecord::counter_step_ns.
    bool negative_motion = false;   // The counter was behind cycle_last.
    uint64_t cycle_last = 0;        // Of the state the value came from,
    __int128 cycle_last_ideal = 0;  // and the unwrapped counter then.
    uint32_t wrap_losses = 0;       // UpdateRecord::wrap_losses of it.
    ClockId clock = 0;
    // Why the variant's era explains an odd value here (delta * mult
    // wrapped before 6.10; a counter past 2^64 frozen before 6.5), or
    // nullptr.
    const char* era_why = nullptr;
    uint32_t ntp_generation = 0;  // adjtimex()/settime calls before it.
    CounterSource source = CounterSource::kMachine;  // What `counter` is.
    // kvm-clock: the CPU whose TSC disagreed with vCPU 0's when the call
    // read it (the reader's, or the timekeeping CPU's), by how many cycles
    // (negative: behind); -1: none. Decided when the call is checked,
    // while the hypervisor still holds the state the read used.
    int kvm_skew_cpu = -1;
    int64_t kvm_skew_cycles = 0;
  };
  struct KvmSkew {
    int cpu = -1;
    int64_t cycles = 0;
  };
  // Where a call that read kvm-clock (source kKvmClock) broke the stable
  // bit's promise of synchronised TSCs.
  KvmSkew KvmSkewOf(const CallRecord& call, CounterSource source) const;
  struct LaterFirst {
    bool operator()(const Seen& a, const Seen& b) const {
      return a.end_ns > b.end_ns;
    }
  };
  // What the cross-clock check needs of a reader's previous call.
  struct PreviousCall {
    ClockId clock = 0;
    bool ok = false;  // Answered, without an error.
    uint32_t state_id = 0;
    uint64_t start_ns = 0;
    uint64_t end_ns = 0;
  };
  // Where the timekeeper's pace is measured from (checker_pace.cc): a new
  // anchor with each NTP setting, clock setting, RAW epoch or lost wrap.
  struct PaceAnchor {
    bool valid = false;
    uint32_t ntp_generation = 0;
    uint64_t ntp_tick = 0;  // The timekeeper's (timekeeping_adjust()'s).
    uint32_t clock_was_set_seq = 0;
    uint64_t epoch_counter = 0;
    uint64_t epoch_sec = 0;
    CounterSource source = CounterSource::kMachine;
    __int128 raw_ns = 0;
    __int128 mono_ns = 0;
    __int128 real_ns = 0;
    __int128 ntp_error_ns = 0;  // NTP - clock, at the last accumulation.
    __int128 mid_ns = 0;        // Clock - NTP since then (mult vs the tick).
    uint64_t t_ns = 0;
  };
  struct RateAnchor {
    uint32_t generation = 0;
    uint64_t counter = 0;
    __int128 value_ns = 0;
    int cpu = 0;
  };

  struct PerReader;  // Defined after the class: it holds Seens.
  // What the checks ask of a clock id on every call, worked out once per
  // run for ids in [0, kFactIds) (the kernel's, the aux clocks' and the
  // variants' own) and per call for the rest (CPU clocks, bad ids).
  struct ClockFacts {
    const variants::ClockDef* own = nullptr;  // The variant defines it.
    variants::ClockKind kind = variants::ClockKind::kKernel;
    // An own clock judged as a kernel clock (ClockDef::same_as): `hres`,
    // `monotonic` and `settable` are that clock's.
    bool alias = false;
    // Judged as a kernel clock (its own, or the one an alias stands for).
    bool kernel_judged = true;
    // Its answer follows the counter: a kernel hres clock or RAW (an alias
    // of one), or a clock the variant's own syscall answers.
    bool needs_counter = false;
    bool hres = false;        // checker_internal::IsHres().
    bool aux_kernel = false;  // An aux clock the kernel defines.
    bool monotonic = false;   // Checked for monotonicity and causality.
    bool timespec = true;     // A timespec checked for sanity (checks.sane).
    bool count_in_tv_sec = false;  // ClockEncoding::kCountInTvSec.
    bool settable = false;         // checker_internal::IsSettable().
    // A kernel clock id the vDSO cannot answer from the page (CPU time,
    // alarms, an invalid id): only the syscall can.
    bool unserved = false;
    // A kernel clock the variant answers from the page (vdso_clocks), or
    // an own clock standing for one (held to its fast path).
    bool served = false;
  };
  static constexpr ClockId kFactIds = 64;
  ClockFacts MakeFacts(ClockId clock) const;
  const ClockFacts& Facts(ClockId clock) {
    if (clock >= 0 && clock < kFactIds) {
      return facts_[static_cast<size_t>(clock)];
    }
    other_facts_ = MakeFacts(clock);
    return other_facts_;
  }
  // writer_->Update(id) behind a one-entry cache: a call and the previous
  // call of its reader mostly read the same state. A cached record stays
  // valid until the writer retires updates (Writer::retired()).
  const UpdateRecord* StateOf(uint32_t id) {
    if (id != cached_update_id_ || writer_->retired() != cached_retired_) {
      cached_update_id_ = id;
      cached_retired_ = writer_->retired();
      cached_update_ = writer_->Update(id);
    }
    return cached_update_;
  }

  void Report(Property p, Verdict v, std::string why, std::string detail,
              const CallRecord& call);
  void OnAuxCall(const CallRecord& call, PerReader& reader);
  [[gnu::cold, gnu::noinline]] bool CheckLoops(const CallRecord& call);
  CallRecord Unshift(const CallRecord& call) const;
  // The namespace's offset for `clock` (its kernel clock's, for an alias).
  Timespec64 TimensOffsetOf(ClockId clock) const;
  // The namespace's offset for `clock` taken off a normalised answer.
  void UnshiftResult(ClockId clock, ClockResult* r) const;
  // 1: a call that fell back returns what the syscall answered it.
  void CheckFallbackAnswer(const CallRecord& call);
  // 10: whether the era's reader may fall back on this call (the causes
  // CheckFallbackCause() accepts; true where a state is no longer known).
  bool EraFallsBack(const CallRecord& call, const ClockFacts& facts);
  [[gnu::cold, gnu::noinline]] void CheckFallbackCause(const CallRecord& call);
  void CheckExactAndTorn(const CallRecord& call, const ClockFacts& facts,
                         const UpdateRecord* state);
  // Returns where in reader.last it stored `seen` (-1: the check is off).
  int CheckMonotonic(const CallRecord& call, const Seen& seen,
                     PerReader& reader);
  void CheckCausal(const CallRecord& call, const Seen& seen);
  // Out of line: its frame is set up only for a violation.
  [[gnu::noinline, gnu::cold]] void ReportCausal(const CallRecord& call,
                                                 const Seen& seen,
                                                 const Seen& matured);
  // The violations' reports, out of line: the checks run on every call and
  // rarely fail.
  [[gnu::noinline]] void ReportInexact(const CallRecord& call,
                                       const UpdateRecord& state,
                                       const ClockResult& want,
                                       bool width_issue);
  // Exactness of a variant's own clock read without a validated state.
  [[gnu::noinline]] void CheckExactAmong(const CallRecord& call,
                                         bool width_issue);
  // The torn check of a user-space clock without an oracle whose answer is
  // a function of the page and the counter (ClockDef::stateless): a call
  // that raced an update must answer as it does rerun on some state current
  // during it, whole.
  [[gnu::noinline]] void CheckTornByRerun(const CallRecord& call);
  // The torn check beyond the validated state: every state of [lo, last].
  // `validated`: the complete state the call validated, or nullptr.
  [[gnu::noinline]] void CheckTornAmong(const CallRecord& call, uint32_t lo,
                                        uint32_t last, bool width_issue,
                                        const UpdateRecord* validated);
  [[gnu::noinline]] void ReportBackwards(const CallRecord& call,
                                         const Seen& prev, const Seen& seen);
  void CheckRawRate(const CallRecord& call, const Seen& seen,
                    const UpdateRecord* state, PerReader& reader);
  // `prev`: the reader's previous call, or nullptr for its first;
  // `prev_seen` its value, which is read only when the clocks differ
  // (PerReader::previous_slot).
  void CheckCrossClock(const CallRecord& call, const Seen& seen,
                       const UpdateRecord* state, const PreviousCall* prev,
                       const Seen* prev_seen);
  [[gnu::noinline]] void ReportDrift(const CallRecord& call,
                                     const PreviousCall& prev,
                                     const Seen& prev_seen, const Seen& seen,
                                     __int128 diff, __int128 want,
                                     __int128 tol);
  // checker_pace.cc: the timekeeper's clocks against true time at the
  // call's end, and its loops' termination.
  void CheckPace(const CallRecord& call);
  // CheckPace() has nothing to do at `t_ns`: the state it last checked is
  // still the newest and less than kPaceEveryNs of true time has passed
  // (the start of its own test, without the state's lookup).
  bool PaceRecentlyChecked(uint64_t t_ns) const {
    return pace_.valid && writer_->latest_update() == pace_last_update_ &&
           t_ns >= pace_last_ns_ && t_ns < pace_last_ns_ + kPaceEveryNs;
  }
  static constexpr uint64_t kPaceEveryNs = 100000;
  void CheckTimekeeperLoops(const CallRecord& call);
  // Why one read disagrees with another, if a violated precondition of the
  // design (counter skew, backwards or narrow counters) or a known kernel
  // behaviour explains it; nullopt means a defect.
  std::optional<std::pair<Verdict, std::string>> Explain(const Seen& a,
                                                         const Seen& b) const;
  std::optional<std::string> BrokenPrecondition(const Seen& s) const;
  // The verdict's reason for a wrong value no precondition or era
  // explains. With a kernel tree's kernel/time publishing the page
  // (--kernel-time) the tree's writer is as much in question as the
  // reader: its stores and barriers made the page the reader read.
  const char* ArithmeticWhy() const {
    return variant_->timekeeping == nullptr
               ? "the reader's arithmetic or protocol"
               : "the reader's arithmetic or protocol, or the tree writer's "
                 "stores (--kernel-time: the page is the tree's "
                 "update_vsyscall()'s)";
  }
  const char* TornWhy() const {
    return variant_->timekeeping == nullptr
               ? "mixed fields of different page states"
               : "mixed fields of different page states (--kernel-time: "
                 "the reader's protocol, or the tree writer's store order "
                 "and barriers)";
  }
  // For a call that crashed or spun: "; its counter read ... was N cycles
  // behind the page's cycle_last ..." (negative motion), or past
  // max_cycles, which explain the unusual arithmetic; else "".
  std::string UnusualDelta(const CallRecord& call);
  // How far `s`'s counter is ahead of (negative: behind) the timekeeping
  // CPU's at the same true time, for a TSC read on another CPU; nullopt
  // for a global counter, kvm-clock or a read on the timekeeping CPU.
  std::optional<int64_t> CrossCpuSkew(const Seen& s) const;
  // BrokenPrecondition()'s reason for that skew, if any.
  std::optional<std::string> SkewReason(const Seen& s) const;
  // Two reads on two CPUs, neither the timekeeping CPU, whose counters
  // disagree: the skew between them, which is what orders their answers
  // (each one's against the timekeeping CPU named the wrong pair).
  std::optional<std::string> PairSkew(const Seen& a, const Seen& b) const;
  void MeasureDivergence(const CallRecord& call, const Seen& seen);
  void CheckVdsoError(const CallRecord& call);
  void CheckUnservedAnswer(const CallRecord& call);
  // An aux clock the syscall refused at the call's start and at its end
  // (not enabled): only the syscall answers it then.
  bool AuxUnservedDuring(const CallRecord& call) const;
  // Whether a publication of the call's aux record current before its end
  // gives its answer (a relaxed-ordering reader may see one from before
  // the call, of a clock since disabled).
  bool AuxPublicationGives(const CallRecord& call) const;
  void CheckPvclockStable(const CallRecord& call);
  // The variant's syscall for the call's clock as the call ends (the
  // state and counter then, the scenario's RTC and aux clocks).
  ClockResult SyscallAtEnd(const CallRecord& call) const;
  // The syscall for the call's clock at `t_ns` on `cpu`.
  ClockResult SyscallAtTime(const CallRecord& call, uint64_t t_ns,
                            int cpu) const;
  // The model's syscall for the call's clock at the counter it read, in
  // `state` (no era's clamp or masking).
  ClockResult SyscallAt(const UpdateRecord& state,
                        const CallRecord& call) const;
  // oracle_.Expected() for the call's clock on `state`: through expected_
  // where it can (inline: every checked call asks), else
  // ExpectedSlow() (checker_expected.cc).
  ClockResult ExpectedOf(const CallRecord& call, const ClockFacts& facts,
                         const UpdateRecord& state) {
    if (call.clock >= 0 && call.clock < kFactIds) {
      ExpectedLine& line = expected_[static_cast<size_t>(call.clock)];
      if (line.state_id == state.id && line.usable && (++line.uses & 15) != 0) {
        const timekeeper::TkReadBase& tkr = call.clock == kClockMonotonicRaw
                                                ? state.tk.tkr_raw
                                                : state.tk.tkr_mono;
        if (InShortcutRange(tkr, call.counter)) {
          ++shortcut_answers_;
          return ExpectedFromBase(line, tkr, call.counter);
        }
      }
    }
    return ExpectedSlow(call, facts, state);
  }
  ClockResult ExpectedSlow(const CallRecord& call, const ClockFacts& facts,
                           const UpdateRecord& state);
  // checker_aux.cc: exact and torn for an aux clock's page answer; the
  // aux state it validated, or nullptr.
  const AuxRecord* CheckAuxExactAndTorn(const CallRecord& call);
  std::string Name(ClockId clock) const;

  const Scenario& scenario_;
  const Machine* machine_;
  const Writer* writer_;
  const variants::Variant* variant_;
  bool tsc_;
  bool wide_;  // A 64-bit counter.
  // Causality compares calls of different readers: with one reader the
  // check never runs.
  bool causal_on_;
  variants::EraOracle oracle_;
  bool accept_known_ = false;
  uint64_t boot_counter_;
  std::array<PropertyStats, kNumProperties> stats_{};
  Coverage coverage_;
  std::vector<Violation> violations_;
  size_t kept_failures_ = 0;
  // While a namespace reader's call is judged (OnCall() of its Unshift()):
  // the call as the reader answered it, for the violations' details.
  const CallRecord* timens_call_ = nullptr;
  SettledAnswers* settled_ = nullptr;
  size_t kept_preconditions_ = 0;
  std::array<std::array<bool, 3>, kNumProperties> first_of_kind_{};
  std::array<ClockFacts, kFactIds> facts_;
  // Per clock id, the expected answer on one page state as a base plus
  // the model's own TimekeepingCyclesToNs() at the counter: for a counter
  // at or past cycle_last by at most max_cycles, the syscall's answer is
  // normalise(base_ns + TimekeepingCyclesToNs(tkr, counter)) under every
  // era's counter rule, and computing it so skips the syscall model's
  // dispatch (~90 of a call's ~1400 instructions). base_ns is taken from
  // oracle_.Expected() at cycle_last when the state changes, and every
  // 16th answer (and the first on each state) is compared with
  // oracle_.Expected(): a mismatch (a model whose answers are not of that
  // form, as a mutant's may be) turns the shortcut off for the run.
  struct ExpectedLine {
    uint32_t state_id = 0;
    bool usable = false;  // base_ns holds for this state.
    uint32_t uses = 0;
    uint64_t base_ns = 0;
  };
  // Whether the shortcut may answer for `counter`: at or past cycle_last
  // (no era's clamp applies) by at most max_cycles (below 2^62, so no
  // era's 63-bit masking or sign changes it either).
  static bool InShortcutRange(const timekeeper::TkReadBase& tkr,
                              uint64_t counter) {
    return counter >= tkr.cycle_last &&
           counter - tkr.cycle_last <= tkr.clock->max_cycles;
  }
  static ClockResult ExpectedFromBase(const ExpectedLine& line,
                                      const timekeeper::TkReadBase& tkr,
                                      uint64_t counter);
  std::array<ExpectedLine, kFactIds> expected_{};
  bool expected_shortcut_ = true;
  uint64_t shortcut_answers_ = 0;
  ClockFacts other_facts_;
  uint32_t cached_update_id_ = 0;
  uint64_t cached_retired_ = 0;
  const UpdateRecord* cached_update_ = nullptr;
  // coverage_.per_clock's entries for ids in [0, kFactIds), found once (a
  // std::map's nodes stay put).
  std::array<std::array<uint64_t, 3>*, kFactIds> per_clock_{};
  // The reader's state, found through a one-entry cache (most runs have
  // one reader, or call the same one again) before the id's slot.
  PerReader& ReaderState(int reader) {
    if (cached_state_ != nullptr && cached_reader_ == reader) {
      return *cached_state_;
    }
    return NewReaderState(reader);
  }
  PerReader& NewReaderState(int reader);
  // Looked up on every call and never iterated (so hash order cannot reach
  // a report): hash maps. Each reader's state is held by pointer, so a
  // reference to it stays valid as readers come.
  absl::flat_hash_map<int, size_t> reader_slots_;
  std::vector<std::unique_ptr<PerReader>> readers_;
  int cached_reader_ = 0;
  PerReader* cached_state_ = nullptr;
  // Per clock, for the causal check: calls not yet ended at the latest
  // start, and the greatest value of those that had.
  struct Causal {
    std::priority_queue<Seen, std::vector<Seen>, LaterFirst> in_flight;
    bool has_matured = false;
    Seen matured;
  };
  absl::flat_hash_map<ClockId, Causal> causal_;
  PaceAnchor pace_;
  uint64_t pace_last_ns_ = 0;      // The true time last checked,
  uint32_t pace_last_update_ = 0;  // and the state it read.
  bool stall_reported_ = false;
  absl::flat_hash_map<ClockId, std::pair<__int128, __int128>>
      divergence_anchor_;
  std::map<ClockId, Divergence> divergence_;  // Reported in clock order.
};

// What the checker keeps per reader: its last value per clock (a reader
// calls a handful of clocks, searched in order), its previous call (the
// cross-clock check) and its MONOTONIC rate anchor.
struct Checker::PerReader {
  std::vector<std::pair<ClockId, Seen>> last;
  // Where in `last` each clock id below kFactIds is (-1: not yet).
  std::array<int8_t, kFactIds> last_slot;
  PerReader() { last_slot.fill(-1); }
  bool has_previous = false;
  PreviousCall previous;
  // Where the previous call's value is: last[previous_slot].second when
  // the monotonic check stored it there (its clock's entry, which only a
  // later call of the same clock overwrites, and the cross-clock check
  // reads it only for a call of another clock), else previous_seen. Kept
  // once instead of copied twice per call.
  int previous_slot = -1;
  Seen previous_seen;
  const Seen& PreviousSeen() const {
    return previous_slot >= 0 ? last[static_cast<size_t>(previous_slot)].second
                              : previous_seen;
  }
  bool has_rate_anchor = false;
  RateAnchor rate_anchor;
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_CHECKER_H_
