// Clocksource registration (__clocksource_register_scale()) over every
// (mask, scale, freq): it refuses exactly what cannot be registered (no
// frequency, no counter bits, a scale finer than 1 ns, or a counter too
// fast for a 32-bit mult) and otherwise yields what the kernel's
// invariants require: a mult that NTP can steer by 11% either way without
// leaving 32 bits, max_cycles within the mask and within what converts
// without overflow at the fastest steered mult, max_raw_delta 7/8 of the
// mask, and one second of cycles converting to one second (as the kernel
// counts it: 10^9 / scale truncated, times scale), within the rounding of
// mult (at most freq * scale / 2^shift ns) and the shift's truncation.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <climits>
#include <cstdint>
#include <string>

#include "timekeeper/clocksource.h"

namespace vdsolab::timekeeper {
namespace {

rc::Gen<uint32_t> GenU32Edges(std::initializer_list<uint32_t> edges) {
  return rc::gen::oneOf(rc::gen::elementOf(std::vector<uint32_t>(edges)),
                        rc::gen::arbitrary<uint32_t>(),
                        rc::gen::inRange<uint32_t>(1, 100000));
}

RC_GTEST_PROP(ClocksourceRegistration, RefusesExactlyWhatCannotBeRegistered,
              ()) {
  const uint64_t mask = *rc::gen::oneOf(
      rc::gen::element<uint64_t>(0, 1, 0xffffff, 0xffffffff, ~0ull,
                                 (1ull << 56) - 1),
      rc::gen::map(rc::gen::inRange(1, 65),
                   [](int bits) { return ClocksourceMask(bits); }));
  const uint32_t scale =
      *GenU32Edges({0, 1, 1000, 1000000, 1000000000, 1000000001, UINT32_MAX});
  const uint32_t freq =
      *GenU32Edges({0, 1, 3579545, 14318180, 2600000, 10000000, UINT32_MAX});
  const absl::StatusOr<Clocksource> cs =
      ClocksourceRegisterScale("c", mask, scale, freq, kVdsoClockmodeNone, 100);
  const std::string why = cs.ok() ? "" : std::string(cs.status().message());
  RC_CLASSIFY(cs.ok(), "registered");
  if (freq == 0 || scale == 0) {
    RC_ASSERT(!cs.ok());
    RC_ASSERT(why.find("frequency must be positive") != std::string::npos);
    return;
  }
  if (mask == 0) {
    RC_ASSERT(!cs.ok());
    RC_ASSERT(why.find("mask") != std::string::npos);
    return;
  }
  if (scale > 1000000000) {
    RC_ASSERT(!cs.ok());
    RC_ASSERT(why.find("finer than 1 ns") != std::string::npos);
    return;
  }
  if (!cs.ok()) {
    // The one other refusal: no 32-bit mult converts this fast a counter.
    RC_ASSERT(why.find("too fast for a 32-bit mult") != std::string::npos);
    RC_TAG("too fast");
    return;
  }
  RC_ASSERT(cs->mult != 0u);
  RC_ASSERT(cs->maxadj == ClocksourceMaxAdjustment(cs->mult));
  RC_ASSERT(static_cast<uint64_t>(cs->mult) + cs->maxadj <= UINT32_MAX);
  RC_ASSERT(cs->maxadj <= cs->mult);
  RC_ASSERT(cs->max_cycles <= mask);
  RC_ASSERT(static_cast<unsigned __int128>(cs->max_cycles) *
                (cs->mult + cs->maxadj) <=
            static_cast<unsigned __int128>(UINT64_MAX));
  RC_ASSERT(cs->max_raw_delta == (mask >> 1) + (mask >> 2) + (mask >> 3));
  // One second of cycles. The kernel converts `freq` to NSEC_PER_SEC /
  // scale, truncated: that second is scale * (10^9 / scale) ns (10^9 for
  // the scales it uses, 1 and 1000).
  const unsigned __int128 hz = static_cast<unsigned __int128>(freq) * scale;
  const unsigned __int128 ns = (hz * cs->mult) >> cs->shift;
  const unsigned __int128 second =
      static_cast<unsigned __int128>(scale) * (1000000000u / scale);
  const unsigned __int128 err = ns > second ? ns - second : second - ns;
  const unsigned __int128 bound = (hz >> cs->shift) + 2;
  RC_CLASSIFY(hz >= 1000000000, "GHz");
  RC_ASSERT(err <= bound);
}

}  // namespace
}  // namespace vdsolab::timekeeper
