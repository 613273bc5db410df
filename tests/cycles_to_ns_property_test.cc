// The syscall path's counter conversion (timekeeping_cycles_to_ns(), 6.15:
// "Handles negative motion and overflow") at the edges of its domain, on
// clocksources of every width as their drivers register them: a delta up
// to max_cycles takes the 64-bit product (max_cycles is chosen so that
// delta * mult cannot overflow); one past it converts exactly in 128 bits
// unless its top bit (of the mask) is set, which is negative motion and
// answers the base time. The edges are where a comparison or a mask that
// is one off shows: max_cycles - 1 .. + 1, the mask's top bit, the mask
// itself (a counter one step behind cycle_last), with xtime_nsec anywhere
// in its range.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
#include "tests/generators.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/readers.h"
#include "timekeeper/timekeeper.h"

namespace vdsolab {
namespace {

using u128 = unsigned __int128;

timekeeper::Clocksource GenClocksource() {
  const int bits = *rc::gen::element(64, 64, 56, 40, 32, 24, 16);
  absl::StatusOr<timekeeper::Clocksource> cs =
      bits == 64
          ? timekeeper::MakeTscClocksource(*testing::GenTscKhz())
          : timekeeper::ClocksourceRegisterScale(
                "narrow", timekeeper::ClocksourceMask(bits), 1,
                *rc::gen::element<uint32_t>(
                    32768, 1000000, 3579545, 14318180, 24000000, 1000000000,
                    *rc::gen::inRange<uint32_t>(1000, 0xffffffff)),
                timekeeper::kVdsoClockmodeNone, 100);
  RC_ASSERT(cs.ok());
  return *cs;
}

RC_GTEST_PROP(CyclesToNs, ExactToMaxCyclesOverflowSafePastItBaseWhenBehind,
              ()) {
  const timekeeper::Clocksource cs = GenClocksource();
  timekeeper::TkReadBase tkr;
  tkr.clock = &cs;
  tkr.mask = cs.mask;
  tkr.mult = cs.mult;
  tkr.shift = cs.shift;
  tkr.cycle_last = *rc::gen::arbitrary<uint64_t>() & cs.mask;
  const uint64_t nsec_range = uint64_t{1000000000} << cs.shift;
  tkr.xtime_nsec = *rc::gen::weightedOneOf<uint64_t>(
      {{3, rc::gen::inRange<uint64_t>(0, nsec_range)},
       {1, rc::gen::element<uint64_t>(0, nsec_range - 1)}});
  const uint64_t top = cs.mask & ~(cs.mask >> 1);
  const uint64_t delta =
      *rc::gen::weightedOneOf<uint64_t>(
          {{3, rc::gen::element<uint64_t>(cs.max_cycles - 1, cs.max_cycles,
                                          cs.max_cycles + 1, top - 1, top,
                                          top + 1, cs.mask, cs.mask - 1, 0, 1)},
           {1, rc::gen::arbitrary<uint64_t>()}}) &
      cs.mask;
  const uint64_t got =
      timekeeper::TimekeepingCyclesToNs(tkr, tkr.cycle_last + delta);

  const bool behind = (delta & top) != 0;
  const u128 exact =
      (static_cast<u128>(delta) * tkr.mult + tkr.xtime_nsec) >> tkr.shift;
  uint64_t want = 0;
  if (delta <= cs.max_cycles) {
    // The fast path: delta * mult + xtime_nsec in 64 bits.
    want = (delta * tkr.mult + tkr.xtime_nsec) >> tkr.shift;
    RC_CLASSIFY(want != exact, "the 64-bit fast path wrapped");
    RC_TAG(delta == cs.max_cycles ? "delta == max_cycles"
                                  : "within max_cycles");
  } else if (behind) {
    want = tkr.xtime_nsec >> tkr.shift;
    RC_TAG("negative motion");
  } else {
    want = static_cast<uint64_t>(exact);
    RC_TAG("past max_cycles, overflow-safe");
  }
  RC_CLASSIFY(cs.max_cycles == cs.mask, "max_cycles is the mask");
  RC_CLASSIFY(delta <= cs.max_cycles && behind,
              "top bit set within max_cycles (narrow counter)");
  if (got != want) {
    RC_FAIL(absl::StrFormat(
        "%d-bit mask %#x, max_cycles %#x, mult %d, shift %d, xtime_nsec %#x: "
        "delta %#x converts to %d ns, want %d",
        __builtin_popcountll(cs.mask), cs.mask, cs.max_cycles, tkr.mult,
        tkr.shift, tkr.xtime_nsec, delta, got, want));
  }
}

}  // namespace
}  // namespace vdsolab
