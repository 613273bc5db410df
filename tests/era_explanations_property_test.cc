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

}  // namespace
}  // namespace vdsolab::variants
