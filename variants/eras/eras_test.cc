// The era variants against the timekeeper's syscall model and against
// arithmetic written out here from each era's x86 formulas.

#include "variants/eras/eras.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/math64.h"
#include "testing/fixed_counter_hooks.h"
#include "testing/publish_bed.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/ntp.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeper.h"
#include "timekeeper/timekeeping.h"
#include "variants/era_oracle.h"
#include "variants/eras/datapage.h"
#include "variants/eras/era_layouts.h"
#include "variants/layout.h"
#include "variants/variant.h"
#include "vdso/access.h"
#include "vdso/vvar_page.h"

namespace vdsolab::variants {
namespace {

using eras::kNoField;
using eras::RecordOffsets;
using eras::VdsoData53;
using eras::VdsoData610;
using testing::FixedCounterHooks;
using timekeeper::Timekeeper;

// What each era's source says, written down independently of the variant
// records (so a wrong record cannot make its own test pass).
struct EraFacts {
  const char* name;
  bool masked_counter;      // 6.5+: rdtsc_ordered() & S64_MAX, bit-62 sign.
  bool overflow_protected;  // 6.10+: max_cycles slow path.
  bool coarse_nsec;         // 6.15+: coarse clocks from coarse_nsec.
  bool timens_check;        // 6.1+: clock_mode loaded on an odd seq.
  bool sign_check_late;     // 5.3: base and cycle_last loaded before it.
  bool vdso_clock_records;  // 6.15+: "clock_data[i]", else "vdso_data[i]".
  uint32_t hrtimer_res;     // Page offset of the (first) hrtimer_res.
  uint32_t raw_record;      // Page offset of the CS_RAW record.
};

// Offsets from kernel-reference.md §1.2/§1.3 plus vvar+128 before 6.15.
const EraFacts kEras[] = {
    {"5.3", false, false, false, false, true, false, 128 + 232, 128 + 240},
    {"6.1", false, false, false, true, false, false, 128 + 232, 128 + 240},
    {"6.5", true, false, false, true, false, false, 128 + 232, 128 + 240},
    {"6.10", true, true, false, true, false, false, 128 + 240, 128 + 248},
    {"6.15", true, true, true, true, false, true, 472, 232},
};

void PrintTo(const EraFacts& facts, std::ostream* os) { *os << facts.name; }

const Variant& FindEra(const std::string& name) {
  return testing::VariantNamed(EraVariants(), name);
}

// Every era reads the counter with rdtsc_ordered().
void ExpectOrderedReads(const FixedCounterHooks& hooks) {
  for (vdso::CounterRead kind : hooks.counter_reads()) {
    EXPECT_EQ(kind, vdso::CounterRead::kOrdered);
  }
}

// One reader call at a fixed counter (budget: 10 retries), the syscall
// model at the same counter as the fallback.
std::optional<ClockResult> ReadWith(testing::PublishBed& bed, ClockId clock,
                                    FixedCounterHooks& hooks) {
  const std::optional<ClockResult> got = bed.Read(clock, hooks);
  ExpectOrderedReads(hooks);
  return got;
}
FixedCounterHooks HooksAt(const testing::PublishBed& bed, uint64_t counter) {
  FixedCounterHooks hooks = bed.NewHooks(counter);
  hooks.retry_budget = 10;
  return hooks;
}

// The pre-6.10 answer where nothing guards the product: the u64 sum
// base + delta * mult wraps, then >> shift; the u32 carry of
// __iter_div_u64_rem() normalises.
ClockResult Wrapped(uint64_t sec, uint64_t base, uint64_t delta, uint32_t mult,
                    uint32_t shift) {
  const uint64_t ns = (base + delta * mult) >> shift;
  return ClockResult::Ok(
      {static_cast<int64_t>(sec + static_cast<uint32_t>(ns / kNsecPerSec)),
       static_cast<int64_t>(ns % kNsecPerSec)});
}

constexpr uint64_t kC0 = 5000000000000ull;  // ~2^42: room below bit 62.
constexpr ClockId kHresIds[] = {kClockRealtime, kClockMonotonic,
                                kClockMonotonicRaw, kClockBoottime, kClockTai};

class EraTest : public ::testing::TestWithParam<EraFacts> {
 protected:
  void SetUp() override {
    facts_ = GetParam();
    variant_ = &FindEra(facts_.name);
    bed_ =
        std::make_unique<testing::PublishBed>(*variant_, testing::Tsc(2600000));
    bed_->tk().Init(kC0, Timespec64{1700000000, 123456789},
                    Timespec64{12, 345000000});
    ci_ = tk().cycle_interval;
    now_ = kC0;
    for (uint64_t i = 0; i < 5; ++i) Tick(ci_ + 1234 * i);
  }

  const Timekeeper& tk() const { return bed_->state(); }
  uint64_t cycle_last() const { return tk().tkr_mono.cycle_last; }
  uint64_t max_cycles() const { return tk().tkr_mono.clock->max_cycles; }
  void Tick(uint64_t cycles) {
    now_ += cycles;
    bed_->tk().Advance(timekeeper::AdvanceMode::kTick, now_);
  }

  std::optional<ClockResult> Read(ClockId clock, FixedCounterHooks& hooks) {
    return ReadWith(*bed_, clock, hooks);
  }
  FixedCounterHooks Hooks(uint64_t counter) const {
    return HooksAt(*bed_, counter);
  }
  ClockResult Syscall(ClockId clock, uint64_t counter) const {
    return bed_->Syscall(clock, counter);
  }
  // The accesses, loads by the era layout's field names.
  std::vector<std::string> Accesses(const FixedCounterHooks& hooks) const {
    return hooks.Described(*variant_->layout);
  }

  // The coarse clocks before 6.15: REALTIME's ns part at the last update,
  // tkr_mono.xtime_nsec >> shift (5.3-6.14 update_vsyscall()).
  ClockResult CoarsePre615(ClockId clock) const {
    const uint64_t ns = tk().tkr_mono.xtime_nsec >> tk().tkr_mono.shift;
    if (clock == kClockRealtimeCoarse) {
      return ClockResult::Ok(
          {static_cast<int64_t>(tk().xtime_sec), static_cast<int64_t>(ns)});
    }
    const uint64_t n =
        ns + static_cast<uint64_t>(tk().wall_to_monotonic.tv_nsec);
    return ClockResult::Ok({static_cast<int64_t>(tk().xtime_sec) +
                                tk().wall_to_monotonic.tv_sec +
                                static_cast<int64_t>(n / kNsecPerSec),
                            static_cast<int64_t>(n % kNsecPerSec)});
  }

  // Every clock id at counters ahead of cycle_last within max_cycles.
  void ExpectAllClocks(const std::string& when) {
    const uint64_t deltas[] = {
        0, 1, 777, ci_ / 2, ci_, 5 * ci_ + 3, max_cycles() / 2, max_cycles()};
    for (uint64_t delta : deltas) {
      const uint64_t counter = cycle_last() + delta;
      for (ClockId id = 0; id <= kClockTai; ++id) {
        FixedCounterHooks hooks = Hooks(counter);
        const std::optional<ClockResult> got = Read(id, hooks);
        ASSERT_TRUE(got.has_value());
        const bool coarse =
            id == kClockRealtimeCoarse || id == kClockMonotonicCoarse;
        const ClockResult want = coarse && !facts_.coarse_nsec
                                     ? CoarsePre615(id)
                                     : Syscall(id, counter);
        EXPECT_EQ(*got, want) << when << ", " << ClockName(id) << " at delta "
                              << delta << ": got " << FormatClockResult(*got)
                              << ", want " << FormatClockResult(want);
        EXPECT_EQ(hooks.fallbacks().size(),
                  ServesFromPage(*variant_, id) ? 0u : 1u)
            << ClockName(id);
      }
      for (ClockId id : {-1, 16, 23, INT_MAX}) {
        FixedCounterHooks hooks = Hooks(counter);
        EXPECT_EQ(Read(id, hooks), Syscall(id, counter)) << id;
        EXPECT_EQ(hooks.fallbacks(), std::vector<ClockId>{id});
        EXPECT_TRUE(hooks.accesses().empty()) << id;  // Decided from the id.
      }
    }
  }

  // The page offset of field `name` of record `cs` (CS_HRES_COARSE 0,
  // CS_RAW 1).
  uint32_t RecordField(int cs, const std::string& name) const {
    const std::string full = absl::StrFormat(
        "%s[%d].%s", facts_.vdso_clock_records ? "clock_data" : "vdso_data", cs,
        name);
    for (const Field& f : variant_->layout->fields()) {
      if (f.name == full) return f.offset;
    }
    ADD_FAILURE() << "no field " << full;
    return 0;
  }

  EraFacts facts_;
  const Variant* variant_ = nullptr;
  std::unique_ptr<testing::PublishBed> bed_;
  uint64_t ci_ = 0;
  uint64_t now_ = 0;
};

TEST_P(EraTest, MatchesTheSyscallThroughTicksAndAFrequencyChange) {
  // After a tick coarse_nsec is xtime_nsec >> shift: every era agrees with
  // the 6.15+ syscall model on every clock.
  ASSERT_EQ(tk().coarse_nsec, tk().tkr_mono.xtime_nsec >> tk().tkr_mono.shift);
  ExpectAllClocks("after 5 ticks");

  // adjtimex() between ticks moves xtime_nsec (keeping the fine clocks
  // continuous) but not coarse_nsec: here the eras' coarse formulas part.
  timekeeper::Timex txc;
  txc.modes = timekeeper::kAdjFrequency;
  txc.freq = 100ll << 16;  // +100 ppm.
  now_ += ci_ / 3;
  ASSERT_TRUE(bed_->tk().Adjtimex(txc, now_).ok());
  ASSERT_NE(tk().coarse_nsec, tk().tkr_mono.xtime_nsec >> tk().tkr_mono.shift);
  ExpectAllClocks("between ticks, after adjtimex(ADJ_FREQUENCY)");

  Tick(ci_);
  ExpectAllClocks("one tick after adjtimex");
}

TEST_P(EraTest, CounterBehindCycleLastReadsTheBaseTime) {
  // A TSC slightly behind the CPU that updated cycle_last: 5.3/6.1 clamp
  // (cycles > last fails), 6.5 sees bit 62 of the 63-bit delta, 6.10+ takes
  // the max_cycles path and then the bit-62 branch. All stay at the base.
  const uint64_t counter = cycle_last() - 5000;
  for (ClockId id : kHresIds) {
    FixedCounterHooks hooks = Hooks(counter);
    EXPECT_EQ(Read(id, hooks), Syscall(id, cycle_last())) << ClockName(id);
    EXPECT_TRUE(hooks.fallbacks().empty());
  }
}

TEST_P(EraTest, DeltaPastMaxCycles) {
  const uint64_t delta = max_cycles() + max_cycles() / 2;
  const uint64_t counter = cycle_last() + delta;
  const auto& mono = tk().tkr_mono;
  const auto& raw = tk().tkr_raw;
  // The u64 product really overflows here.
  ASSERT_GE(static_cast<unsigned __int128>(delta) * mono.mult,
            static_cast<unsigned __int128>(1) << 64);
  if (facts_.overflow_protected) {
    // 6.10+: the 128-bit multiply gives what the syscall gives.
    for (ClockId id : kHresIds) {
      FixedCounterHooks hooks = Hooks(counter);
      EXPECT_EQ(Read(id, hooks), Syscall(id, counter)) << ClockName(id);
    }
    return;
  }
  // 5.3-6.9: (base + delta * mult) wraps in 64 bits (delta < 2^62, so 6.5's
  // bit-62 filter lets it through).
  FixedCounterHooks h1 = Hooks(counter);
  const std::optional<ClockResult> real = Read(kClockRealtime, h1);
  EXPECT_EQ(real, Wrapped(tk().xtime_sec, mono.xtime_nsec, delta, mono.mult,
                          mono.shift));
  EXPECT_NE(real, Syscall(kClockRealtime, counter));
  FixedCounterHooks h2 = Hooks(counter);
  EXPECT_EQ(Read(kClockMonotonicRaw, h2),
            Wrapped(tk().raw_sec, raw.xtime_nsec, delta, raw.mult, raw.shift));
  EXPECT_TRUE(h1.fallbacks().empty());
  EXPECT_TRUE(h2.fallbacks().empty());
}

// The era oracle (what the checker expects of this era) against the era's
// own reader, over counters on every side of the era's counter rules:
// behind cycle_last, the top bit set ahead of and behind it, bit 62 of the
// delta, around max_cycles, near 2^64. Where EraValue() names a wrapped
// answer the reader must give it from the page; where it names none the
// reader must give the syscall's answer at the counter the era uses,
// written out here from the era's facts, and Expected() must agree.
TEST_P(EraTest, TheOracleNamesExactlyTheWrapsTheReaderGives) {
  const EraOracle oracle(*variant_, PublishContext{}, CounterFacts{});
  const uint64_t last = cycle_last();
  const uint64_t m = max_cycles();
  const uint64_t counters[] = {last - 1,
                               last - 1000000,
                               last,
                               last + 1,
                               last + m,
                               last + m + 1,
                               last + m + m / 2,
                               last + 3 * m,
                               last + (1ull << 40),
                               last + (1ull << 62) - 1,
                               last + (1ull << 62) + 5,
                               (1ull << 63) + last + 1000,
                               (1ull << 63) + last - 1000,
                               (1ull << 63) - 1,
                               ~0ull};
  int wraps = 0;
  for (uint64_t counter : counters) {
    for (ClockId id : kHresIds) {
      FixedCounterHooks hooks = Hooks(counter);
      const std::optional<ClockResult> got = Read(id, hooks);
      ASSERT_TRUE(got.has_value());
      const std::optional<ClockResult> era = oracle.EraValue(tk(), id, counter);
      const std::string at = absl::StrFormat(
          "%s at counter %#x (cycle_last %#x): got %s", ClockName(id), counter,
          last, FormatClockResult(*got));
      if (era.has_value()) {
        ++wraps;
        EXPECT_EQ(*got, *era) << at << ", oracle " << FormatClockResult(*era);
        EXPECT_TRUE(hooks.fallbacks().empty()) << at;
        continue;
      }
      uint64_t used = counter;  // The counter the era's arithmetic uses.
      bool fallback = false;
      if (facts_.masked_counter) {
        const uint64_t delta = (counter - last) & kS64Max;
        used = (delta >> 62) != 0 ? last : last + delta;
      } else if ((counter >> 63) != 0) {
        fallback = true;  // (s64)cycles < 0: the syscall at the counter.
      } else if (counter <= last) {
        used = last;
      }
      const ClockResult want = Syscall(id, used);
      EXPECT_EQ(*got, want) << at << ", want " << FormatClockResult(want);
      EXPECT_EQ(oracle.Expected(tk(), id, counter), *got) << at;
      EXPECT_EQ(hooks.fallbacks().size(), fallback ? 1u : 0u) << at;
    }
  }
  // Only the eras before 6.10 wrap, and these counters reach their wraps.
  if (facts_.overflow_protected) {
    EXPECT_EQ(wraps, 0);
  } else {
    EXPECT_GT(wraps, 0);
  }
}

TEST_P(EraTest, CounterWithBitSixtyThreeSet) {
  const uint64_t counter = (1ull << 63) + cycle_last() + 1000;
  for (ClockId id : kHresIds) {
    FixedCounterHooks hooks = Hooks(counter);
    const std::optional<ClockResult> got = Read(id, hooks);
    if (facts_.masked_counter) {
      // 6.5+: the counter is masked to 63 bits before the sign test, so it
      // reads as cycle_last + 1000; the syscall is never asked.
      EXPECT_EQ(got, Syscall(id, cycle_last() + 1000)) << ClockName(id);
      EXPECT_TRUE(hooks.fallbacks().empty());
    } else {
      // 5.3/6.1: (s64)cycles < 0 sends the call to the syscall.
      EXPECT_EQ(got, Syscall(id, counter)) << ClockName(id);
      EXPECT_EQ(hooks.fallbacks(), std::vector<ClockId>{id});
    }
  }
}

TEST_P(EraTest, DeltaWithBitSixtyTwoSet) {
  const uint64_t delta = (1ull << 62) + 12345;
  const uint64_t counter = cycle_last() + delta;  // Below 2^63.
  if (facts_.masked_counter) {
    // 6.5+: bit 62 is the sign of the 63-bit delta: negative motion.
    for (ClockId id : kHresIds) {
      FixedCounterHooks hooks = Hooks(counter);
      EXPECT_EQ(Read(id, hooks), Syscall(id, cycle_last())) << ClockName(id);
    }
    return;
  }
  // 5.3/6.1: cycles > last, so the wrapped product is added.
  const auto& mono = tk().tkr_mono;
  const auto& raw = tk().tkr_raw;
  FixedCounterHooks h1 = Hooks(counter);
  EXPECT_EQ(Read(kClockRealtime, h1), Wrapped(tk().xtime_sec, mono.xtime_nsec,
                                              delta, mono.mult, mono.shift));
  FixedCounterHooks h2 = Hooks(counter);
  EXPECT_EQ(Read(kClockMonotonicRaw, h2),
            Wrapped(tk().raw_sec, raw.xtime_nsec, delta, raw.mult, raw.shift));
}

TEST_P(EraTest, RetriesWhenAnUpdateLandsMidRead) {
  bed_->queue = true;
  Tick(3 * ci_);
  ASSERT_EQ(bed_->pending().size(), 1u);
  const uint64_t counter = cycle_last() + 100;  // The new state's.
  // The whole update lands just before the first cycle_last load, so the
  // first pass pairs the old base with the new cycle_last.
  const uint32_t cl = RecordField(0, "cycle_last");
  bool applied = false;
  FixedCounterHooks hooks = Hooks(counter);
  hooks.before_load = [&](size_t, uint32_t offset) {
    if (offset == cl && !applied) {
      bed_->page().Apply(bed_->pending().front());
      applied = true;
    }
  };
  EXPECT_EQ(Read(kClockMonotonic, hooks), Syscall(kClockMonotonic, counter));
  EXPECT_TRUE(applied);
  const std::string seq =
      facts_.vdso_clock_records ? "clock_data[0].seq" : "vdso_data[0].seq";
  const std::vector<std::string> accesses = Accesses(hooks);
  EXPECT_EQ(std::count(accesses.begin(), accesses.end(), seq), 4)
      << "two passes";
}

TEST_P(EraTest, HresLoadsInKernelSourceOrder) {
  FixedCounterHooks hooks = Hooks(cycle_last() + 10);
  ASSERT_TRUE(Read(kClockMonotonic, hooks).has_value());
  const std::string p =
      facts_.vdso_clock_records ? "clock_data[0]" : "vdso_data[0]";
  std::vector<std::string> want = {p + ".seq", p + ".clock_mode", "COUNTER",
                                   p + ".basetime[CLOCK_MONOTONIC].nsec",
                                   p + ".cycle_last"};
  if (facts_.overflow_protected) want.push_back(p + ".max_cycles");
  for (const char* f :
       {".mult", ".shift", ".basetime[CLOCK_MONOTONIC].sec", ".seq"}) {
    want.push_back(p + f);
  }
  EXPECT_EQ(Accesses(hooks), want);
}

TEST_P(EraTest, ClockModeNoneGoesToTheSyscall) {
  ASSERT_EQ(RecordField(1, "seq"), facts_.raw_record);
  bed_->page().Store(RecordField(1, "clock_mode"), 4, 0);
  FixedCounterHooks hooks = Hooks(cycle_last() + 10);
  EXPECT_EQ(Read(kClockMonotonicRaw, hooks),
            Syscall(kClockMonotonicRaw, cycle_last() + 10));
  EXPECT_EQ(hooks.fallbacks(), std::vector<ClockId>{kClockMonotonicRaw});
  const std::string p =
      facts_.vdso_clock_records ? "clock_data[1]" : "vdso_data[1]";
  std::vector<std::string> want = {p + ".seq", p + ".clock_mode"};
  if (facts_.sign_check_late) {
    // 5.3 loads the base and cycle_last before testing the U64_MAX counter.
    want.push_back(p + ".basetime[CLOCK_MONOTONIC_RAW].nsec");
    want.push_back(p + ".cycle_last");
  }
  EXPECT_EQ(Accesses(hooks), want);
}

TEST_P(EraTest, OddSeqSpinsUntilTheBudgetRunsOut) {
  bed_->page().Store(RecordField(0, "seq"), 4, 7);
  FixedCounterHooks hooks = Hooks(cycle_last());
  hooks.retry_budget = 3;
  EXPECT_EQ(Read(kClockRealtimeCoarse, hooks), std::nullopt);
  // Four spins; 6.1+ also loads clock_mode on each (the timens check).
  EXPECT_EQ(hooks.accesses().size(), facts_.timens_check ? 8u : 4u);
}

TEST_P(EraTest, WriterStoresLandOnLayoutFields) {
  PublishContext ctx;
  ctx.hrtimer_res = 4000000;
  const vdso::VvarUpdate u = variant_->build_update(tk(), 6, ctx);
  ASSERT_GE(u.stores.size(), 6u);
  const Layout& layout = *variant_->layout;
  int seq_stores = 0;
  bool hrtimer_res_seen = false;
  for (size_t i = 0; i < u.stores.size(); ++i) {
    const vdso::VvarStore& s = u.stores[i];
    const Field* f = layout.FieldAt(s.offset);
    ASSERT_NE(f, nullptr) << s.offset;
    EXPECT_EQ(f->offset, s.offset) << f->name;
    EXPECT_EQ(f->size, s.size) << f->name;
    if (f->kind == FieldKind::kSeq) {
      // vdso_write_begin() first (7, 7), vdso_write_end() last (8, 8).
      const bool begin = i < 2;
      EXPECT_TRUE(begin || i >= u.stores.size() - 2) << f->name;
      EXPECT_EQ(s.value, begin ? 7u : 8u);
      ++seq_stores;
    }
    if (s.offset == facts_.hrtimer_res) {
      EXPECT_EQ(s.value, 4000000u);
      hrtimer_res_seen = true;
    }
  }
  EXPECT_EQ(seq_stores, 4);
  EXPECT_TRUE(hrtimer_res_seen);
  // smp_wmb() after the first seq pair and before the last.
  EXPECT_TRUE(u.stores[2].wmb_before);
  EXPECT_TRUE(u.stores[u.stores.size() - 2].wmb_before);
}

TEST_P(EraTest, ClocksourceWithoutVdsoMode) {
  auto hpet = timekeeper::ClocksourceRegisterScale(
      "hpet", timekeeper::ClocksourceMask(32), 1, 14318180,
      timekeeper::kVdsoClockmodeNone, 250);
  ASSERT_TRUE(hpet.ok());
  testing::PublishBed bed(*variant_, *hpet);
  bed.tk().Init(1000, Timespec64{1700000000, 0}, Timespec64{});
  bed.tk().Advance(timekeeper::AdvanceMode::kTick,
                   1000 + bed.state().cycle_interval);

  // 5.3 writes the hres data whatever the mode; 6.1+ leaves it stale
  // ("lib/vdso: Avoid highres update if clocksource is not VDSO capable").
  const vdso::VvarUpdate u =
      variant_->build_update(bed.state(), 4, PublishContext{});
  const uint32_t cl = RecordField(0, "cycle_last");
  bool writes_cycle_last = false;
  for (const vdso::VvarStore& s : u.stores) {
    writes_cycle_last |= s.offset == cl;
  }
  EXPECT_EQ(writes_cycle_last, facts_.sign_check_late);

  // Every hres clock goes to the syscall; the coarse ones are served.
  const uint64_t counter = bed.state().tkr_mono.cycle_last + 7;
  for (ClockId id : {kClockMonotonic, kClockRealtimeCoarse}) {
    FixedCounterHooks hooks = HooksAt(bed, counter);
    EXPECT_EQ(ReadWith(bed, id, hooks), bed.Syscall(id, counter))
        << ClockName(id);
    EXPECT_EQ(hooks.fallbacks().size(), id == kClockMonotonic ? 1u : 0u);
  }
}

TEST_P(EraTest, NativeLoopRunsOnThePage) {
  // The coarse clocks need no counter: the last of 10 reads is the page's.
  const uint64_t last =
      variant_->native_loop(bed_->page().data(), kClockRealtimeCoarse, 10);
  FixedCounterHooks hooks = Hooks(cycle_last());
  const std::optional<ClockResult> one = Read(kClockRealtimeCoarse, hooks);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(last, static_cast<uint64_t>(one->ts.tv_sec) * kNsecPerSec +
                      static_cast<uint64_t>(one->ts.tv_nsec));
}

INSTANTIATE_TEST_SUITE_P(
    Eras, EraTest, ::testing::ValuesIn(kEras),
    [](const ::testing::TestParamInfo<EraFacts>& param_info) {
      std::string n = param_info.param.name;
      for (char& c : n) {
        if (c == '.') c = '_';
      }
      return "v" + n;
    });

// 5.3's BOOTTIME adds offs_boot as shifted ns in u64: past ~2^64 >> shift
// ns of suspend it wraps (fixed in 5.4 by monotonic_to_boot). The model
// has no suspend, so the state is made by hand.
TEST(Era53, BoottimeWrapsPastLongSuspends) {
  auto page53 = vdso::VvarPage::Create();
  auto page61 = vdso::VvarPage::Create();
  ASSERT_TRUE(page53.ok() && page61.ok());
  auto tsc = timekeeper::MakeTscClocksource(2600000);
  ASSERT_TRUE(tsc.ok());
  timekeeper::Timekeeping tk(*tsc, 250, nullptr);
  tk.Init(kC0, Timespec64{1700000000, 0}, Timespec64{100, 0});
  Timekeeper t = tk.timekeeper();
  const int64_t sleep_s = 3000;  // 3000e9 << 22+ overflows u64.
  t.offs_boot = sleep_s * 1000000000ll;
  t.monotonic_to_boot = Timespec64{sleep_s, 0};
  const uint32_t shift = t.tkr_mono.shift;
  ASSERT_GE(static_cast<unsigned __int128>(t.offs_boot) << shift,
            static_cast<unsigned __int128>(1) << 64);

  (*page53)->Apply(FindEra("5.3").build_update(t, 0, PublishContext{}));
  (*page61)->Apply(FindEra("6.1").build_update(t, 0, PublishContext{}));
  auto read = [&](const char* era, vdso::VvarPage* page) {
    FixedCounterHooks hooks(t.tkr_mono.cycle_last);
    hooks.UseSyscallOf(&t);
    hooks.retry_budget = 10;
    vdso::HookedAccess access(page->data(), &hooks);
    const std::optional<ClockResult> got = FindEra(era).make_sim_reader()->Call(
        access, page->data(), kClockBoottime);
    ExpectOrderedReads(hooks);
    return got;
  };
  // 6.1: MONOTONIC + the sleep.
  timekeeper::SyscallContext ctx;
  ctx.cycles = t.tkr_mono.cycle_last;
  Timespec64 mono = timekeeper::SysClockGettime(t, kClockMonotonic, ctx).ts;
  EXPECT_EQ(read("6.1", page61->get()),
            ClockResult::Ok({mono.tv_sec + sleep_s, mono.tv_nsec}));
  // 5.3: the 5.3 formula with the u64 wrap.
  const uint64_t unit = kNsecPerSec << shift;
  uint64_t nsec =
      t.tkr_mono.xtime_nsec +
      (static_cast<uint64_t>(t.wall_to_monotonic.tv_nsec + t.offs_boot)
       << shift);
  uint64_t sec =
      t.xtime_sec + static_cast<uint64_t>(t.wall_to_monotonic.tv_sec);
  while (nsec >= unit) {
    nsec -= unit;
    ++sec;
  }
  EXPECT_EQ(read("5.3", page53->get()),
            ClockResult::Ok({static_cast<int64_t>(sec),
                             static_cast<int64_t>(nsec >> shift)}));
  EXPECT_NE(read("5.3", page53->get()), read("6.1", page61->get()));
}

// Every field of each era layout at its struct's offset, by name and kind.
void ExpectRecordFields(const Layout& layout, const std::string& prefix,
                        uint32_t base, const RecordOffsets& r, size_t* count) {
  auto expect = [&](const std::string& field, uint32_t offset, uint8_t size,
                    FieldKind kind) {
    const Field* f = layout.FieldAt(base + offset);
    ASSERT_NE(f, nullptr) << prefix << field;
    EXPECT_EQ(f->name, prefix + field);
    EXPECT_EQ(f->offset, base + offset) << f->name;
    EXPECT_EQ(f->size, size) << f->name;
    EXPECT_EQ(f->kind, kind) << f->name;
    ++*count;
  };
  expect(".seq", r.seq, 4, FieldKind::kSeq);
  expect(".clock_mode", r.clock_mode, 4, FieldKind::kData);
  expect(".cycle_last", r.cycle_last, 8, FieldKind::kCycleLast);
  if (r.max_cycles != kNoField) {
    expect(".max_cycles", r.max_cycles, 8, FieldKind::kData);
  }
  expect(".mask", r.mask, 8, FieldKind::kData);
  expect(".mult", r.mult, 4, FieldKind::kData);
  expect(".shift", r.shift, 4, FieldKind::kData);
  for (int i = 0; i < kVdsoBases; ++i) {
    const std::string b = absl::StrFormat(".basetime[%s]", ClockName(i));
    expect(b + ".sec", r.basetime + 16 * static_cast<uint32_t>(i), 8,
           FieldKind::kData);
    expect(b + ".nsec", r.basetime + 16 * static_cast<uint32_t>(i) + 8, 8,
           FieldKind::kData);
  }
  if (r.hrtimer_res != kNoField) {
    expect(".tz_minuteswest", r.tz_minuteswest, 4, FieldKind::kData);
    expect(".tz_dsttime", r.tz_dsttime, 4, FieldKind::kData);
    expect(".hrtimer_res", r.hrtimer_res, 4, FieldKind::kData);
  }
}

TEST(EraLayouts, FieldsSitAtTheirStructOffsets) {
  // struct vdso_data, by offsetof (static_asserted against §1.2).
  const RecordOffsets r53{offsetof(VdsoData53, seq),
                          offsetof(VdsoData53, clock_mode),
                          offsetof(VdsoData53, cycle_last),
                          kNoField,
                          offsetof(VdsoData53, mask),
                          offsetof(VdsoData53, mult),
                          offsetof(VdsoData53, shift),
                          offsetof(VdsoData53, basetime),
                          offsetof(VdsoData53, tz_minuteswest),
                          offsetof(VdsoData53, tz_dsttime),
                          offsetof(VdsoData53, hrtimer_res),
                          sizeof(VdsoData53)};
  const RecordOffsets r610{offsetof(VdsoData610, seq),
                           offsetof(VdsoData610, clock_mode),
                           offsetof(VdsoData610, cycle_last),
                           offsetof(VdsoData610, max_cycles),
                           offsetof(VdsoData610, mask),
                           offsetof(VdsoData610, mult),
                           offsetof(VdsoData610, shift),
                           offsetof(VdsoData610, basetime),
                           offsetof(VdsoData610, tz_minuteswest),
                           offsetof(VdsoData610, tz_dsttime),
                           offsetof(VdsoData610, hrtimer_res),
                           sizeof(VdsoData610)};
  const RecordOffsets r615{offsetof(vdso::VdsoClock, seq),
                           offsetof(vdso::VdsoClock, clock_mode),
                           offsetof(vdso::VdsoClock, cycle_last),
                           offsetof(vdso::VdsoClock, max_cycles),
                           offsetof(vdso::VdsoClock, mask),
                           offsetof(vdso::VdsoClock, mult),
                           offsetof(vdso::VdsoClock, shift),
                           offsetof(vdso::VdsoClock, basetime),
                           kNoField,
                           kNoField,
                           kNoField,
                           sizeof(vdso::VdsoClock)};
  struct Case {
    const Layout* layout;
    const char* prefix;
    RecordOffsets r;
    uint32_t first;  // _vdso_data[0] / clock_data[0].
  };
  const Case cases[] = {
      {&eras::VdsoDataLayout53(), "vdso_data", r53, 128},
      {&eras::VdsoDataLayout610(), "vdso_data", r610, 128},
      {&eras::VdsoTimeDataLayout615(), "clock_data", r615, 0},
  };
  for (const Case& c : cases) {
    size_t count = 0;
    for (int cs = 0; cs < 2; ++cs) {
      ExpectRecordFields(*c.layout, absl::StrFormat("%s[%d]", c.prefix, cs),
                         c.first + c.r.size * static_cast<uint32_t>(cs), c.r,
                         &count);
    }
    if (c.r.hrtimer_res == kNoField) {  // 6.15: the tail.
      for (auto [name, offset] :
           {std::pair<const char*, uint32_t>{"tz_minuteswest", 464},
            {"tz_dsttime", 468},
            {"hrtimer_res", 472}}) {
        const Field* f = c.layout->FieldAt(offset);
        ASSERT_NE(f, nullptr) << name;
        EXPECT_EQ(f->name, name);
        ++count;
      }
    }
    count += 6;  // pvti.*, checked by the upstream layout's tests.
    EXPECT_EQ(c.layout->fields().size(), count) << c.layout->name();
    // Fields do not overlap.
    const std::vector<Field>& fields = c.layout->fields();
    for (size_t i = 1; i < fields.size(); ++i) {
      EXPECT_GE(fields[i].offset, fields[i - 1].offset + fields[i - 1].size)
          << fields[i].name;
    }
  }
  // The same places as plain numbers (kernel-reference.md §1.2, vvar+128).
  EXPECT_EQ(eras::VdsoDataLayout53().DescribeOffset(128 + 240),
            "vdso_data[1].seq");
  EXPECT_EQ(eras::VdsoDataLayout53().DescribeOffset(128 + 232),
            "vdso_data[0].hrtimer_res");
  EXPECT_EQ(eras::VdsoDataLayout610().DescribeOffset(128 + 248),
            "vdso_data[1].seq");
  EXPECT_EQ(eras::VdsoDataLayout610().DescribeOffset(128 + 16),
            "vdso_data[0].max_cycles");
  EXPECT_EQ(eras::VdsoTimeDataLayout615().DescribeOffset(232 + 8),
            "clock_data[1].cycle_last");
}

TEST(EraVariants, RecordsSayWhatTheErasDid) {
  const std::vector<const Variant*> eras = EraVariants();
  ASSERT_EQ(eras.size(), std::size(kEras));
  for (size_t i = 0; i < eras.size(); ++i) {
    const Variant& v = *eras[i];
    const EraFacts& f = kEras[i];
    EXPECT_EQ(v.name, f.name);
    EXPECT_FALSE(v.provenance.empty());
    EXPECT_FALSE(v.summary.empty());
    EXPECT_NE(v.layout, nullptr);
    EXPECT_NE(v.build_update, nullptr);
    EXPECT_NE(v.make_sim_reader, nullptr);
    EXPECT_NE(v.native_loop, nullptr);
    EXPECT_EQ(v.semantics.counter, f.masked_counter
                                       ? CounterSemantics::kMasked63
                                       : CounterSemantics::kClampToLast)
        << v.name;
    EXPECT_EQ(v.semantics.overflow_protected, f.overflow_protected) << v.name;
    EXPECT_EQ(v.semantics.coarse_from_coarse_nsec, f.coarse_nsec) << v.name;
    EXPECT_EQ(v.vdso_clocks,
              (std::vector<ClockId>{kClockRealtime, kClockMonotonic,
                                    kClockMonotonicRaw, kClockRealtimeCoarse,
                                    kClockMonotonicCoarse, kClockBoottime,
                                    kClockTai}));
    EXPECT_TRUE(v.own_clocks.empty());
    EXPECT_FALSE(v.own_clocks_only);
    EXPECT_EQ(v.counter_read, vdso::CounterRead::kOrdered);
    EXPECT_EQ(v.syscall, nullptr);
  }
}

}  // namespace
}  // namespace vdsolab::variants
