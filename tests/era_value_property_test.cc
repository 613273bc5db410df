// The era oracle (variants/era_oracle.h: what the checker expects of an
// era's reader) against each era's own reader, on generated timekeeper
// states and counters on every side of the era's counter rules: behind
// cycle_last, just ahead, around and past max_cycles, bit 62 of the delta,
// the counter's top bit set ahead of and behind cycle_last, near 2^64, and
// anywhere.
//
// Where EraValue() names an answer (pre-6.10 arithmetic wrapping in 64
// bits), the reader must give exactly it, from the page. Where it names
// none, the reader must give the syscall's answer at the counter the era's
// arithmetic uses, and Expected() must be that answer too. The counter
// rules are written out here from each era's x86 code, not taken from the
// variant records: 5.3-6.4 send a counter with its top bit set to the
// syscall ((s64)cycles < 0) and clamp one behind cycle_last to it; 6.5+
// mask the counter to 63 bits and treat a delta with bit 62 set as
// negative motion (clamped to cycle_last).

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/math64.h"
#include "common/timespec.h"
#include "testing/fixed_counter_hooks.h"
#include "testing/publish_bed.h"
#include "tests/generators.h"
#include "timekeeper/timekeeping.h"
#include "variants/era_oracle.h"
#include "variants/registry.h"
#include "variants/variant.h"

namespace vdsolab {
namespace {

struct EraRules {
  const char* name;
  bool masked_counter;      // 6.5+: & S64_MAX, bit 62 of the delta a sign.
  bool overflow_protected;  // 6.10+: no wrap of delta * mult.
};

const std::vector<EraRules> kEras = {{"5.3", false, false},
                                     {"6.1", false, false},
                                     {"6.5", true, false},
                                     {"6.10", true, true},
                                     {"6.15", true, true}};

const std::vector<ClockId> kHresIds = {kClockRealtime, kClockMonotonic,
                                       kClockMonotonicRaw, kClockBoottime,
                                       kClockTai};

rc::Gen<uint64_t> Small() { return rc::gen::inRange<uint64_t>(0, 1u << 20); }

// A counter in one of the domains named above, as (domain, counter).
rc::Gen<std::pair<std::string, uint64_t>> GenCounter(uint64_t last,
                                                     uint64_t max_cycles,
                                                     uint64_t interval) {
  using P = std::pair<std::string, uint64_t>;
  const auto at = [](const char* name, rc::Gen<uint64_t> g) {
    return rc::gen::map(std::move(g), [name](uint64_t c) {
      return P{name, c};
    });
  };
  const auto plus = [last](rc::Gen<uint64_t> g) {
    return rc::gen::map(std::move(g), [last](uint64_t d) { return last + d; });
  };
  return rc::gen::oneOf(
      at("behind cycle_last",
         rc::gen::map(rc::gen::inRange<uint64_t>(1, uint64_t{1} << 40),
                      [last](uint64_t d) { return last - d; })),
      at("within two ticks", plus(rc::gen::inRange<uint64_t>(0, 2 * interval))),
      at("around max_cycles",
         plus(rc::gen::inRange<uint64_t>(max_cycles - 2, max_cycles + 3))),
      at("past max_cycles",
         plus(rc::gen::inRange<uint64_t>(max_cycles, 8 * max_cycles))),
      at("delta bit 62", plus(rc::gen::map(Small(),
                                           [](uint64_t d) {
                                             return (uint64_t{1} << 62) -
                                                    (1u << 19) + d;
                                           }))),
      at("top bit ahead", rc::gen::map(Small(),
                                       [last](uint64_t d) {
                                         return (uint64_t{1} << 63) + last + d;
                                       })),
      at("top bit behind", rc::gen::map(Small(),
                                        [last](uint64_t d) {
                                          return (uint64_t{1} << 63) + last -
                                                 d - 1;
                                        })),
      at("near 2^64",
         rc::gen::map(Small(), [](uint64_t d) { return ~uint64_t{0} - d; })),
      at("anywhere", rc::gen::arbitrary<uint64_t>()));
}

RC_GTEST_PROP(EraValue, TheOracleNamesExactlyWhatEachErasReaderAnswers, ()) {
  const EraRules era = *rc::gen::elementOf(kEras);
  const variants::Variant& variant =
      testing::VariantNamed(variants::AllVariants(), era.name);
  const uint32_t khz = *testing::GenTscKhz();
  testing::PublishBed bed(variant, testing::Tsc(khz), {}, *testing::GenHz());
  uint64_t now = *rc::gen::inRange<uint64_t>(1, uint64_t{1} << 44);
  bed.tk().Init(now, Timespec64{*rc::gen::inRange<int64_t>(0, 1ll << 32), 0},
                Timespec64{*rc::gen::inRange<int64_t>(0, 100000), 0});
  const uint64_t ci = bed.state().cycle_interval;
  const int ticks = *rc::gen::inRange(0, 6);
  for (int i = 0; i < ticks; ++i) {
    now += ci + *rc::gen::inRange<uint64_t>(0, ci);
    bed.tk().Advance(timekeeper::AdvanceMode::kTick, now);
  }
  const timekeeper::Timekeeper& tk = bed.state();
  const uint64_t last = tk.tkr_mono.cycle_last;
  const auto [domain, counter] =
      *GenCounter(last, tk.tkr_mono.clock->max_cycles, ci);
  const ClockId clock = *rc::gen::elementOf(kHresIds);
  RC_TAG(std::string(era.name), domain);

  const variants::EraOracle oracle(variant, bed.context(),
                                   variants::CounterFacts{});
  const std::optional<ClockResult> got = bed.Read(clock, counter);
  RC_ASSERT(got.has_value());
  const size_t fallbacks = bed.hooks().fallbacks().size();
  const std::string at = absl::StrFormat(
      "%s, %s at counter %#x (cycle_last %#x): the reader gave %s", era.name,
      ClockName(clock), counter, last, FormatClockResult(*got));

  const std::optional<ClockResult> wrapped =
      oracle.EraValue(tk, clock, counter);
  RC_CLASSIFY(wrapped.has_value(), "the oracle names a wrap");
  if (wrapped.has_value()) {
    if (era.overflow_protected) {
      RC_FAIL(at + "; the oracle names a wrap for an era without one");
    }
    if (*got != *wrapped || fallbacks != 0) {
      RC_FAIL(absl::StrFormat("%s (%d fallbacks); the oracle says %s", at,
                              fallbacks, FormatClockResult(*wrapped)));
    }
    return;
  }
  uint64_t used = counter;  // The counter the era's arithmetic uses.
  bool fallback = false;
  if (era.masked_counter) {
    const uint64_t delta = (counter - last) & kS64Max;
    used = (delta >> 62) != 0 ? last : last + delta;
  } else if ((counter >> 63) != 0) {
    fallback = true;  // The syscall at the counter read.
  } else if (counter <= last) {
    used = last;
  }
  // BOOTTIME and TAI go through ktime_t in the syscall and sec + ns in the
  // vDSO: more than 2^32 s after the update (the u32 carry) they cannot
  // agree (see reader_oracle_property_test); such counters are not judged.
  const long double elapsed_s =
      static_cast<long double>(used - last) / (khz * 1000.0L);
  RC_PRE(!((clock == kClockBoottime || clock == kClockTai) &&
           elapsed_s >= 2147483648.0L));
  // Pre-6.10, delta * mult may wrap: the reader then differs from the
  // syscall, and only EraValue() (asked above) may excuse it.
  const ClockResult want = bed.Syscall(clock, used);
  if (*got != want || fallbacks != (fallback ? 1u : 0u)) {
    RC_FAIL(
        absl::StrFormat("%s (%d fallbacks); the syscall at %#x gives %s "
                        "and the oracle names no wrap",
                        at, fallbacks, used, FormatClockResult(want)));
  }
  const ClockResult expected = oracle.Expected(tk, clock, counter);
  if (expected != *got) {
    RC_FAIL(at + "; the oracle expects " + FormatClockResult(expected));
  }
}

}  // namespace
}  // namespace vdsolab
