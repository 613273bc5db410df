// Each era oracle's explanations of odd answers hold exactly on the domain
// their documentation gives (variants/era_oracle.h), for every built-in
// variant: a coarse clock stepping back is the era's behaviour only before
// 6.15 (coarse clocks from xtime_nsec), only after an adjtimex() or
// settime, and only for a step back of more than nothing and at most
// 1 ms; the 6.15+ coarse off-by-one-second only where the model flagged
// the state and the era reads coarse_nsec. A step of zero, or one just
// past the bound, is no step the era explains.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/timekeeping.h"
#include "variants/era_oracle.h"
#include "variants/registry.h"
#include "variants/variant.h"

namespace vdsolab::variants {
namespace {

constexpr __int128 kMaxBackNs = 1000000;  // era_oracle.h: 1 ms.

RC_GTEST_PROP(EraExplanations, CoarseStepBackOnlyOnItsDomain, ()) {
  const std::vector<const Variant*> all = AllVariants();
  const Variant& v = **rc::gen::elementOf(all);
  const EraOracle oracle(
      v, PublishContext{},
      CounterFacts{*rc::gen::arbitrary<bool>(), *rc::gen::arbitrary<bool>()});
  const __int128 back = *rc::gen::oneOf(
      rc::gen::element<__int128>(
          0, 1, -1, kMaxBackNs, kMaxBackNs + 1, kMaxBackNs - 1, -kMaxBackNs,
          static_cast<__int128>(1) << 100, -(static_cast<__int128>(1) << 100)),
      rc::gen::map(rc::gen::arbitrary<int64_t>(),
                   [](int64_t x) { return static_cast<__int128>(x); }),
      rc::gen::map(rc::gen::inRange<int64_t>(-10, 2000000),
                   [](int64_t x) { return static_cast<__int128>(x); }));
  const bool after_ntp = *rc::gen::arbitrary<bool>();
  const bool want = !v.semantics.coarse_from_coarse_nsec && after_ntp &&
                    back > 0 && back <= kMaxBackNs;
  RC_TAG(std::string(v.name));
  RC_CLASSIFY(want, "explained");
  RC_CLASSIFY(back == 0 || back == kMaxBackNs + 1, "at an edge");
  const char* why = oracle.ExplainCoarseStepBack(back, after_ntp);
  RC_ASSERT((why != nullptr) == want);
  if (want) RC_ASSERT(std::string(why) == EraOracle::kCoarseBackWhy);
  const bool flagged = *rc::gen::arbitrary<bool>();
  RC_ASSERT(oracle.ShowsCoarseOffBySecond(flagged) ==
            (flagged && v.semantics.coarse_from_coarse_nsec));
}

// An era explains odd answers of the kernel's clocks only: where a variant
// defines a clock id itself (its own reader and definition, here on an id
// the kernel's hres clocks use), no era behaviour explains its value, even
// on a counter where the era would explain the kernel clock's (the pre-6.5
// freeze at the base after a wrap past 2^64).
RC_GTEST_PROP(EraExplanations, NoneForAClockTheVariantDefinesItself, ()) {
  std::vector<const Variant*> clamping;
  for (const Variant* v : AllVariants()) {
    if (v->semantics.counter == CounterSemantics::kClampToLast &&
        !v->own_clocks_only) {
      clamping.push_back(v);
    }
  }
  RC_PRE(!clamping.empty());
  const Variant& base = **rc::gen::elementOf(clamping);
  const ClockId clock = *rc::gen::elementOf(
      std::vector<ClockId>{kClockRealtime, kClockMonotonic, kClockMonotonicRaw,
                           kClockBoottime, kClockTai});
  absl::StatusOr<timekeeper::Clocksource> tsc =
      timekeeper::MakeTscClocksource(2600000);
  RC_ASSERT(tsc.ok());
  timekeeper::Timekeeping k(*tsc, 250, nullptr);
  // cycle_last just below 2^64; the counter wrapped past it.
  const uint64_t last = ~0ull - *rc::gen::inRange<uint64_t>(0, 1u << 20);
  k.Init(last, Timespec64{1700000000, 0}, Timespec64{1, 0});
  const timekeeper::Timekeeper& tk = k.timekeeper();
  const uint64_t counter = *rc::gen::inRange<uint64_t>(0, 1u << 20);
  const PublishContext ctx;
  const EraOracle era(base, ctx, CounterFacts{true, true});
  const ClockResult got = era.Expected(tk, clock, counter);
  // The setup is one the era explains for the kernel's clock...
  RC_ASSERT(era.ExplainAnswer(tk, clock, counter, got) != nullptr);
  // ...and not for the same id defined by the variant.
  Variant own = base;
  ClockDef def;
  def.id = clock;
  def.name = "mine";
  def.kind = ClockKind::kUserspace;
  own.own_clocks = {def};
  const EraOracle mine(own, ctx, CounterFacts{true, true});
  RC_TAG(std::string(base.name));
  RC_ASSERT(mine.ExplainAnswer(tk, clock, counter, got) == nullptr);
}

}  // namespace
}  // namespace vdsolab::variants
