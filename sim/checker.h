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
//                 contained: variants/plugin/call_guard.h).
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
#include "sim/machine.h"
#include "sim/properties.h"
#include "sim/scenario.h"
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
  size_t retained_divergence_points() const;
  // --accept=known: documented kernel behaviours pass.
  void AcceptKnown(bool accept) { accept_known_ = accept; }

 private:
  struct Seen {  // A returned value and what is needed to explain it.
    __int128 value_ns = 0;
    uint64_t call_index = 0;
    int reader = 0;
    uint64_t reader_call = 0;
    uint64_t end_ns = 0;
    uint32_t generation = 0;
    bool coarse_off = false;
    bool read_counter = false;
    uint64_t counter = 0;
    int counter_cpu = 0;
    uint64_t counter_ns = 0;
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
  };
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

  void Report(Property p, Verdict v, std::string why, std::string detail,
              const CallRecord& call);
  void OnAuxCall(const CallRecord& call);
  CallRecord Unshift(const CallRecord& call) const;
  void CheckExactAndTorn(const CallRecord& call, const UpdateRecord* state);
  void CheckMonotonic(const CallRecord& call, const Seen& seen);
  void CheckCausal(const CallRecord& call, const Seen& seen);
  void CheckRawRate(const CallRecord& call, const Seen& seen,
                    const UpdateRecord* state);
  // `previous`: the reader's previous call, or nullptr for its first.
  void CheckCrossClock(const CallRecord& call, const Seen& seen,
                       const UpdateRecord* state,
                       const std::pair<PreviousCall, Seen>* previous);
  // checker_pace.cc: the timekeeper's clocks against true time at the
  // call's end, and its loops' termination.
  void CheckPace(const CallRecord& call);
  void CheckTimekeeperLoops(const CallRecord& call);
  // Why one read disagrees with another, if a violated precondition of the
  // design (counter skew, backwards or narrow counters) or a known kernel
  // behaviour explains it; nullopt means a defect.
  std::optional<std::pair<Verdict, std::string>> Explain(const Seen& a,
                                                         const Seen& b) const;
  std::optional<std::string> BrokenPrecondition(const Seen& s) const;
  void MeasureDivergence(const CallRecord& call, const Seen& seen);
  void CheckVdsoError(const CallRecord& call);
  // checker_aux.cc: exact and torn for an aux clock's page answer; the
  // aux state it validated, or nullptr.
  const AuxRecord* CheckAuxExactAndTorn(const CallRecord& call);
  std::string Name(ClockId clock) const;
  variants::ClockKind Kind(ClockId clock) const;
  uint32_t Generation(ClockId clock, const UpdateRecord* state) const;

  const Scenario& scenario_;
  const Machine* machine_;
  const Writer* writer_;
  const variants::Variant* variant_;
  bool tsc_;
  bool wide_;  // A 64-bit counter.
  variants::EraOracle oracle_;
  bool accept_known_ = false;
  uint64_t boot_counter_;
  std::array<PropertyStats, kNumProperties> stats_{};
  Coverage coverage_;
  std::vector<Violation> violations_;
  size_t kept_failures_ = 0;
  size_t kept_preconditions_ = 0;
  std::array<std::array<bool, 3>, kNumProperties> first_of_kind_{};
  struct PerReader;  // Defined after the class: it holds Seens.
  // The reader's state, found through a one-entry cache (most runs have
  // one reader, or call the same one again) before the id's slot.
  PerReader& ReaderState(int reader);
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
  bool has_previous = false;
  std::pair<PreviousCall, Seen> previous;
  bool has_rate_anchor = false;
  RateAnchor rate_anchor;
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_CHECKER_H_
