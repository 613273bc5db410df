// File: variants/era_oracle.h
//
// What a correct reader of a variant's era answers, and which of its
// answers that the modern kernel would not give its era explains. The
// checker (sim/checker.h) asks this instead of knowing any era itself; a
// variant brings its era through its Semantics (built-ins in their
// records, plugins by declaring them in ABI version 2).
//
// The expected answer is the timekeeper model's syscall path (6.15+
// arithmetic) at the counter value the era's reader effectively uses: the
// counter rules differ by era (63-bit masking with a bit-62 sign since 6.5,
// a clamp to cycle_last before), and so do the coarse clocks (coarse_nsec
// since 6.15). Where an era's arithmetic differs by design (the 64-bit
// delta * mult before 6.10), the era's exact value is computed here too, so
// that the checker can tell era behaviour from a defect.

#ifndef VDSOLAB_VARIANTS_ERA_ORACLE_H_
#define VDSOLAB_VARIANTS_ERA_ORACLE_H_

#include <cstdint>
#include <optional>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/math64.h"
#include "timekeeper/timekeeper.h"
#include "variants/variant.h"

namespace vdsolab::variants {

// What the oracle needs to know of the simulated counter.
struct CounterFacts {
  bool tsc = true;   // The TSC (the x86 vDSO's own counter arithmetic).
  bool wide = true;  // 64 bits wide, as the x86 vDSO assumes.
};

class EraOracle {
 public:
  // Era behaviours the checker reports as known (docs/findings.md).
  static constexpr const char* kOverflowWhy =
      "era behaviour: before 6.10 the vDSO multiplied delta * mult in 64 "
      "bits, which wraps once the delta passes 2^64 / mult (about 11% past "
      "max_cycles); the value is exactly that wrapped result. The era's "
      "syscall path wrapped too, but the model's syscall is 6.10+, so "
      "clocks it answers disagree with the vDSO's here";
  static constexpr const char* kWrapFreezeWhy =
      "era behaviour: before 6.5 the x86 vDSO compared cycles > cycle_last "
      "unmasked, so a counter that wrapped past 2^64 reads as behind "
      "cycle_last and time stands still until the next update (fixed by "
      "\"x86/vdso: Fix gettimeofday masking\", 6.5)";
  static constexpr const char* kCoarseBackWhy =
      "era behaviour: before 6.15 the coarse clocks read xtime_nsec, which "
      "timekeeping_apply_adjustment() moves back when adjtimex() speeds the "
      "clock up, so coarse time can step back a little (6.15 added "
      "coarse_nsec: \"timekeeping: Prevent coarse clocks going backwards\")";
  static constexpr const char* kCoarseOffBySecondWhy =
      "6.15+ kernels: coarse clocks are off by one second after an "
      "adjtimex() frequency change between ticks (docs/findings.md)";

  EraOracle(const Variant& variant, const PublishContext& ctx,
            CounterFacts counter);

  const Semantics& semantics() const { return variant_.semantics; }

  // The answer for `clock` on the page state published from `tk`, at
  // `counter`: the variant's own syscall for a clock it adds, the model's
  // syscall at the counter the era's reader effectively uses otherwise.
  ClockResult Expected(const timekeeper::Timekeeper& tk, ClockId clock,
                       uint64_t counter) const;

  // What a reader of this era returns where its arithmetic differs from
  // the modern kernel's by design (delta * mult wrapping in 64 bits before
  // 6.10); nullopt where the era agrees with Expected().
  std::optional<ClockResult> EraValue(const timekeeper::Timekeeper& tk,
                                      ClockId clock, uint64_t counter) const;

  // Why the era explains `got`, a page answer for a kernel clock at
  // `counter` on `tk`'s state, where the modern kernel would answer
  // otherwise (the wrapped multiply; time frozen at the base after a
  // counter wrap before 6.5); nullptr if it does not.
  const char* ExplainAnswer(const timekeeper::Timekeeper& tk, ClockId clock,
                            uint64_t counter, const ClockResult& got) const {
    if (has_aliases_) clock = JudgedAs(Own(clock), clock);
    // Every call asks; most eras explain nothing on most counters.
    if (!MayExplain(tk, clock, counter)) return nullptr;
    return ExplainOddAnswer(tk, clock, counter, got);
  }

  // Why a coarse clock stepping back by `back_ns` is the era's behaviour
  // (before 6.15, by at most one tick's NTP correction, after an
  // adjtimex() or settime); nullptr if it is not.
  const char* ExplainCoarseStepBack(__int128 back_ns,
                                    bool after_ntp_change) const;

  // Whether this era publishes the 6.15+ coarse clocks one second off on a
  // state where the model flagged it (coarse_nsec is 6.15+).
  bool ShowsCoarseOffBySecond(bool state_flagged) const {
    return state_flagged && variant_.semantics.coarse_from_coarse_nsec;
  }

 private:
  // Whether ExplainAnswer() can return anything: the era's multiply
  // wraps at this counter (EraValue()), or its counter rule can freeze
  // time at the base (a counter numerically behind cycle_last).
  bool MayExplain(const timekeeper::Timekeeper& tk, ClockId clock,
                  uint64_t counter) const {
    const timekeeper::TkReadBase& tkr =
        clock == kClockMonotonicRaw ? tk.tkr_raw : tk.tkr_mono;
    // The delta EraValue() multiplies is this one under every counter rule
    // where it multiplies at all (masked to 63 bits, or a counter ahead of
    // cycle_last below 2^63): no 64-bit overflow here, no era value. Asked
    // on every call, so kept inline and without the rest of EraValue().
    if (may_wrap_) {
      const unsigned __int128 product =
          static_cast<unsigned __int128>((counter - tkr.cycle_last) & kS64Max) *
          tkr.mult;
      if ((product >> 64) != 0) return true;
    }
    return clamps_to_last_ && counter < tkr.cycle_last;
  }
  const char* ExplainOddAnswer(const timekeeper::Timekeeper& tk, ClockId clock,
                               uint64_t counter, const ClockResult& got) const;
  // FindOwnClock() without the search for the ids below 64 the variant
  // does not define (every call of a run asks).
  const ClockDef* Own(ClockId clock) const {
    if (clock >= 0 && clock < 64 && ((own_ids_ >> clock) & 1) == 0) {
      return nullptr;
    }
    return FindOwnClock(variant_, clock);
  }

  const Variant& variant_;
  PublishContext ctx_;
  CounterFacts counter_;
  uint64_t own_ids_ = 0;      // Bit c: the variant defines clock id c < 64.
  bool has_aliases_ = false;  // Some own clock has a `same_as`.
  bool may_wrap_;             // EraValue() can return a value.
  bool clamps_to_last_;       // CounterSemantics::kClampToLast.
};

}  // namespace vdsolab::variants

#endif  // VDSOLAB_VARIANTS_ERA_ORACLE_H_
