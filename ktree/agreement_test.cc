// The acceptance criterion of kernel-tree variants: the Debian 6.1 tree's
// own vDSO code agrees bit for bit with vdsolab's built-in 6.1 reader, and
// the 6.12 tree's with the built-in 6.10 reader, on random consistent pages
// (a timekeeper history published by the built-in era's writer) and random
// counters, in every regime: in range, delta past max_cycles (pre-6.10: the
// multiply wraps; 6.10+: the 128-bit path), negative motion (6.1: counter
// behind cycle_last; 6.12: bit 62 of the masked delta), a counter with bit
// 63 set, clocksources and clock modes the vDSO does not read (NONE, an
// unstable kvm-clock page, Hyper-V, garbage), for every clock id 0..15 and
// invalid ids. Both readers run through HookedAccess with a fixed counter;
// the results, the fallbacks and the counter reads (kind included) must be
// equal. The seed is printed; VDSOLAB_SEED replays another.

#include <gtest/gtest.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/math64.h"
#include "common/rng.h"
#include "ktree/testing/test_trees.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/ntp.h"
#include "variants/layout.h"
#include "variants/registry.h"
#include "vdso/datapage.h"
#include "vdso/upstream_reader.h"

namespace vdsolab::ktree {
namespace {

using testing::FixedCounterHooks;
using testing::PublishedPage;

constexpr int kPages = 20000;
constexpr int kCountersPerPage = 5;  // 100,000 cases per tree.

uint64_t Seed() {
  const char* s = std::getenv("VDSOLAB_SEED");
  return s != nullptr ? std::strtoull(s, nullptr, 0) : 0x6b74726565ull;
}

timekeeper::Clocksource GenClocksource(Rng& rng) {
  if (rng.Below(8) != 0) {
    static constexpr uint32_t kKhz[] = {2600000, 2400000, 3000000, 2596005,
                                        2095998, 3699999, 1000000};
    const uint32_t khz =
        rng.Below(3) == 0 ? static_cast<uint32_t>(rng.InRange(500000, 6000000))
                          : kKhz[rng.Below(7)];
    absl::StatusOr<timekeeper::Clocksource> tsc =
        timekeeper::MakeTscClocksource(khz);
    EXPECT_TRUE(tsc.ok());
    return *tsc;
  }
  // A clocksource the vDSO cannot read: the writer publishes mode NONE.
  absl::StatusOr<timekeeper::Clocksource> cs =
      timekeeper::ClocksourceRegisterScale(
          "hpet", timekeeper::ClocksourceMask(32), 1, 14318180,
          timekeeper::kVdsoClockmodeNone, 250);
  EXPECT_TRUE(cs.ok());
  return *cs;
}

uint64_t GenCounterStart(Rng& rng) {
  switch (rng.Below(8)) {
    case 0:
      return rng.InRange((1ull << 32) - (1ull << 26),
                         (1ull << 32) + (1ull << 26));
    case 1:
      return rng.InRange((1ull << 62) - (1ull << 40),
                         (1ull << 62) + (1ull << 20));
    case 2:
      return rng.InRange((1ull << 63) - (1ull << 40),
                         (1ull << 63) + (1ull << 20));
    case 3:
      return rng.InRange(~0ull - (1ull << 40), ~0ull);
    default:
      return rng.InRange(0, 1ull << 44);
  }
}

uint64_t GenTickGap(Rng& rng, uint64_t ci, uint64_t max_cycles) {
  switch (rng.Below(14)) {
    case 0:
    case 1:
      return rng.InRange(0, ci);
    case 2:
    case 3:
      return rng.InRange(ci, 64 * ci);
    case 4:
      return rng.InRange(max_cycles - 2, max_cycles + 3);
    case 5:
      return rng.InRange(max_cycles, 4 * max_cycles);
    default:
      return rng.InRange(ci - ci / 50, ci + ci / 50);
  }
}

// The probe counter's distance from cycle_last (two's complement).
uint64_t GenProbeDelta(Rng& rng, uint64_t ci, uint64_t max_cycles) {
  static constexpr uint64_t kSpecial[] = {0,
                                          1,
                                          ~0ull,
                                          ~0ull - 1,
                                          (1ull << 62) - 1,
                                          1ull << 62,
                                          (1ull << 62) + 1,
                                          (1ull << 63) - 1,
                                          1ull << 63,
                                          (1ull << 63) + 1,
                                          (1ull << 63) + (1ull << 62)};
  switch (rng.Below(20)) {
    case 0:
    case 1:
      return kSpecial[rng.Below(sizeof(kSpecial) / sizeof(kSpecial[0]))];
    case 2:
    case 3:
    case 4:
      return ~0ull - rng.InRange(0, 1ull << 24);  // Behind cycle_last.
    case 5:
    case 6:
      return max_cycles - 1 + rng.Below(4);
    case 7:
    case 8:
    case 9:
      return rng.InRange(max_cycles, 1ull << 62);
    case 10:
    case 11:
      return rng.Next();
    default:
      return rng.InRange(0, 2 * ci);
  }
}

// Page offset of a named field of the built-in layout.
uint32_t FieldOffset(const variants::Variant& v, const std::string& name) {
  for (const variants::Field& f : v.layout->fields()) {
    if (f.name == name) return f.offset;
  }
  ADD_FAILURE() << "no field " << name;
  return 0;
}

// The regime a case exercises, by the era's x86 arithmetic.
std::string Regime(bool masked63, int32_t mode, uint64_t counter,
                   uint64_t cycle_last, uint64_t max_cycles) {
  if (mode != 1) return "fallback: clock mode the vDSO does not read";
  if (!masked63) {
    if ((counter >> 63) != 0) return "fallback: counter bit 63 set";
    if (counter <= cycle_last) return "negative motion: clamped to cycle_last";
    if (counter - cycle_last > max_cycles) {
      return "delta past max_cycles: multiply wraps";
    }
    return "delta in range";
  }
  const uint64_t delta = (counter & kS64Max) - cycle_last;
  if (delta > max_cycles) {
    return (delta & (1ull << 62)) != 0 ? "negative motion: bit 62"
                                       : "delta past max_cycles: 128-bit path";
  }
  return "delta in range";
}

struct Tally {
  uint64_t cases = 0;
  uint64_t calls = 0;
  uint64_t vdso_answers = 0;
  uint64_t load_order_differs = 0;
  uint64_t load_order_differs_tsc = 0;  // In TSC mode.
  std::map<std::string, uint64_t> regimes;
};

// One tree against its built-in reader.
void Agree(const std::string& tarball, const char* builtin_name,
           bool masked63) {
  const uint64_t seed = Seed();
  std::printf("seed %#llx (VDSOLAB_SEED=... to replay another)\n",
              static_cast<unsigned long long>(seed));
  BuiltVariant built;
  const variants::Variant* tree = testing::BuildAndLoad(tarball, {}, &built);
  ASSERT_NE(tree, nullptr);
  absl::StatusOr<const variants::Variant*> builtin =
      variants::FindVariant(builtin_name);
  ASSERT_TRUE(builtin.ok()) << builtin.status();
  EXPECT_EQ(built.layout, builtin_name);
  EXPECT_EQ(tree->layout, (*builtin)->layout);
  EXPECT_EQ(tree->semantics.counter, (*builtin)->semantics.counter);
  EXPECT_EQ(tree->semantics.overflow_protected,
            (*builtin)->semantics.overflow_protected);
  EXPECT_EQ(tree->semantics.coarse_from_coarse_nsec,
            (*builtin)->semantics.coarse_from_coarse_nsec);
  EXPECT_EQ(tree->vdso_clocks, (*builtin)->vdso_clocks);

  std::unique_ptr<variants::SimReader> tree_reader = tree->make_sim_reader();
  std::unique_ptr<variants::SimReader> builtin_reader =
      (*builtin)->make_sim_reader();
  const uint32_t mode_offsets[] = {
      FieldOffset(**builtin, "vdso_data[0].clock_mode"),
      FieldOffset(**builtin, "vdso_data[1].clock_mode")};

  Rng rng(seed);
  PublishedPage pp(*builtin);
  Tally t;
  std::vector<ClockId> ids;
  for (ClockId id = -1; id <= kMaxClocks; ++id) ids.push_back(id);
  for (ClockId id : {23, INT_MAX, INT_MIN}) ids.push_back(id);
  int failures = 0;
  for (int p = 0; p < kPages && failures < 10; ++p) {
    const timekeeper::Clocksource cs = GenClocksource(rng);
    static constexpr int kHz[] = {100, 250, 300, 1000};
    pp.Start(cs, kHz[rng.Below(4)], GenCounterStart(rng) & cs.mask,
             Timespec64{static_cast<int64_t>(rng.InRange(0, 1ull << 34)),
                        static_cast<int64_t>(rng.InRange(0, 999999999))},
             Timespec64{static_cast<int64_t>(rng.InRange(0, 100000)),
                        static_cast<int64_t>(rng.InRange(0, 999999999))});
    const uint64_t ci = pp.tk().timekeeper().cycle_interval;
    uint64_t now = pp.tk().timekeeper().tkr_mono.cycle_last;
    const int steps = static_cast<int>(rng.Below(41));
    for (int i = 0; i < steps; ++i) {
      now = (now + GenTickGap(rng, ci, cs.max_cycles)) & cs.mask;
      if (rng.Below(10) == 0) {
        timekeeper::Timex txc;
        txc.modes = rng.Below(2) == 0 ? timekeeper::kAdjFrequency
                                      : timekeeper::kAdjTick;
        txc.freq =
            static_cast<int64_t>(rng.InRange(0, 1000ull << 16)) - (500ll << 16);
        txc.tick = static_cast<int64_t>(rng.InRange(9000, 11000));
        ASSERT_TRUE(pp.tk().Adjtimex(txc, now).ok());
      } else {
        pp.tk().Advance(timekeeper::AdvanceMode::kTick, now);
      }
    }
    // Clock modes the vDSO does not read: NONE, kvm-clock with an unstable
    // (zero) pvclock page, Hyper-V, garbage.
    int32_t mode = static_cast<int32_t>(pp.page().Load(mode_offsets[0], 4));
    if (rng.Below(10) == 0) {
      static constexpr int32_t kModes[] = {0, 2, 3, 7, -1};
      mode = kModes[rng.Below(5)];
      for (uint32_t off : mode_offsets) {
        pp.page().Store(off, 4, static_cast<uint32_t>(mode));
      }
    }
    const uint64_t cycle_last = pp.tk().timekeeper().tkr_mono.cycle_last;
    for (int c = 0; c < kCountersPerPage; ++c) {
      uint64_t counter = cycle_last + GenProbeDelta(rng, ci, cs.max_cycles);
      if (masked63) {
        // 6.10+ computes the full time of a delta past max_cycles, and the
        // kernel's __iter_div_u64_rem() then subtracts NSEC_PER_SEC once
        // per second of it: a delta of 2^61 cycles is ~10^9 iterations
        // (about a second per call, the same in a real vDSO). Far deltas
        // are drawn up to 16 max_cycles (~5 hours at 2.6 GHz).
        const uint64_t d = (counter & kS64Max) - cycle_last;
        if (d > 16 * cs.max_cycles && (d & (1ull << 62)) == 0) {
          counter = cycle_last + cs.max_cycles + rng.Below(15 * cs.max_cycles);
        }
      }
      ++t.cases;
      ++t.regimes[Regime(masked63, mode, counter, cycle_last, cs.max_cycles)];
      for (ClockId id : ids) {
        FixedCounterHooks th(&pp.tk(), counter);
        FixedCounterHooks bh(&pp.tk(), counter);
        const std::optional<ClockResult> got = pp.Read(*tree_reader, id, th);
        const std::optional<ClockResult> want =
            pp.Read(*builtin_reader, id, bh);
        ++t.calls;
        if (bh.fallbacks.empty()) ++t.vdso_answers;
        if (th.loads != bh.loads) {
          ++t.load_order_differs;
          if (mode == 1 && ++t.load_order_differs_tsc == 1) {
            std::string tl, bl;
            for (uint32_t o : th.loads) {
              tl += " " + (*builtin)->layout->DescribeOffset(o);
            }
            for (uint32_t o : bh.loads) {
              bl += " " + (*builtin)->layout->DescribeOffset(o);
            }
            std::printf(
                "  first load-order difference (clock %d):\n    "
                "tree:%s\n    built-in:%s\n",
                id, tl.c_str(), bl.c_str());
          }
        }
        const bool same =
            got == want && th.fallbacks == bh.fallbacks && th.reads == bh.reads;
        if (!same && ++failures <= 10) {
          ADD_FAILURE() << "page " << p << " counter " << std::hex << counter
                        << " cycle_last " << cycle_last << std::dec << " mode "
                        << mode << " clock " << id << ": tree "
                        << (got ? FormatClockResult(*got) : "abandoned") << " ("
                        << th.fallbacks.size() << " fallbacks, "
                        << th.reads.size() << " counter reads), built-in "
                        << (want ? FormatClockResult(*want) : "abandoned")
                        << " (" << bh.fallbacks.size() << " fallbacks, "
                        << bh.reads.size() << " counter reads)";
        }
      }
    }
  }
  std::printf(
      "%s vs built-in %s: %llu cases (pages x counters), %llu calls compared "
      "(%llu answered from the page), all equal unless reported above\n",
      built.name.c_str(), builtin_name,
      static_cast<unsigned long long>(t.cases),
      static_cast<unsigned long long>(t.calls),
      static_cast<unsigned long long>(t.vdso_answers));
  for (const auto& [regime, n] : t.regimes) {
    std::printf("  %7llu  %s\n", static_cast<unsigned long long>(n),
                regime.c_str());
    // Every regime the era has must be hit often enough to mean something.
    EXPECT_GE(n, 1000u) << regime;
  }
  // Informational: the compiled code may load fields in another order
  // than the transcription (or load the pvclock page in kvm-clock mode).
  std::printf(
      "  calls whose page loads differ from the built-in reader's: "
      "%llu (%llu in TSC mode)\n",
      static_cast<unsigned long long>(t.load_order_differs),
      static_cast<unsigned long long>(t.load_order_differs_tsc));
  EXPECT_EQ(failures, 0);
  EXPECT_GE(t.cases, static_cast<uint64_t>(kPages) * kCountersPerPage);
  EXPECT_EQ(t.regimes.size(), masked63 ? 4u : 5u);
}

TEST(TreeAgreement, Debian61TreeMatchesTheBuiltIn61Reader) {
  Agree(testing::kTarball61, "6.1", false);
}

TEST(TreeAgreement, Debian612TreeMatchesTheBuiltIn610Reader) {
  Agree(testing::kTarball612, "6.10", true);
}

// kvm-clock: the tree's own vread_pvclock() reads the simulated pvclock
// page through the glue's shadow. Its answer must be the built-in reader's
// in TSC mode at the counter __pvclock_read_cycles() makes of the TSC.
void KvmClock(const std::string& tarball, const char* builtin_name,
              bool masked63) {
  const variants::Variant* tree = testing::BuildAndLoad(tarball);
  ASSERT_NE(tree, nullptr);
  const variants::Variant* builtin = *variants::FindVariant(builtin_name);
  std::unique_ptr<variants::SimReader> tree_reader = tree->make_sim_reader();
  std::unique_ptr<variants::SimReader> builtin_reader =
      builtin->make_sim_reader();
  const uint32_t modes[] = {FieldOffset(*builtin, "vdso_data[0].clock_mode"),
                            FieldOffset(*builtin, "vdso_data[1].clock_mode")};
  Rng rng(Seed() ^ 0x6b766dull);
  PublishedPage pp(builtin);
  absl::StatusOr<timekeeper::Clocksource> cs =
      timekeeper::MakeTscClocksource(2600000);
  ASSERT_TRUE(cs.ok());
  int compared = 0, from_pvclock = 0;
  for (int p = 0; p < 2000; ++p) {
    pp.Start(*cs, 250, rng.InRange(0, 1ull << 44), Timespec64{1700000000, 0},
             Timespec64{10, 0});
    const uint64_t cl = pp.tk().timekeeper().tkr_mono.cycle_last;
    pp.tk().Advance(timekeeper::AdvanceMode::kTick,
                    cl + pp.tk().timekeeper().cycle_interval);
    // A stable pvclock page whose clock runs near the timekeeper's.
    const uint32_t pv = vdso::kPvclockPageOffset;
    const uint64_t tsc_ts = rng.InRange(0, 1ull << 44);
    const uint64_t cycle_last = pp.tk().timekeeper().tkr_mono.cycle_last;
    const uint64_t system_time =
        cycle_last + rng.InRange(0, 1ull << 30) - (1ull << 29);
    const uint32_t mul = static_cast<uint32_t>(rng.InRange(1u << 30, ~0u));
    const int8_t shift = static_cast<int8_t>(rng.InRange(0, 3)) - 1;
    pp.page().Store(pv + vdso::kPvtiVersion, 4, 2 * rng.Below(1000));
    pp.page().Store(pv + vdso::kPvtiTscTimestamp, 8, tsc_ts);
    pp.page().Store(pv + vdso::kPvtiSystemTime, 8, system_time);
    pp.page().Store(pv + vdso::kPvtiMul, 4, mul);
    pp.page().Store(pv + vdso::kPvtiShift, 1, static_cast<uint8_t>(shift));
    pp.page().Store(pv + vdso::kPvtiFlags, 1, vdso::kPvclockTscStableBit);
    for (int c = 0; c < 3; ++c) {
      const uint64_t tsc = tsc_ts + rng.InRange(0, 1ull << 34);
      // __pvclock_read_cycles() of 6.1 and 6.12 (the TSC is past
      // tsc_timestamp here, where all versions agree); 6.12 masks it.
      uint64_t cycles =
          system_time + vdso::upstream::upstream_internal::PvclockScaleDelta(
                            tsc - tsc_ts, mul, shift);
      if (masked63) cycles &= kS64Max;
      for (ClockId id : {kClockRealtime, kClockMonotonic, kClockBoottime,
                         kClockTai, kClockMonotonicRaw}) {
        for (uint32_t off : modes) pp.page().Store(off, 4, 2);  // PVCLOCK
        FixedCounterHooks th(&pp.tk(), tsc);
        const std::optional<ClockResult> got = pp.Read(*tree_reader, id, th);
        for (uint32_t off : modes) pp.page().Store(off, 4, 1);  // TSC
        FixedCounterHooks bh(&pp.tk(), cycles);
        const std::optional<ClockResult> want =
            pp.Read(*builtin_reader, id, bh);
        ASSERT_TRUE(got.has_value());
        EXPECT_EQ(*got, *want)
            << "clock " << id << " tsc " << tsc << ": tree "
            << FormatClockResult(*got) << ", want " << FormatClockResult(*want);
        EXPECT_EQ(th.fallbacks, bh.fallbacks);
        ++compared;
        if (th.fallbacks.empty()) ++from_pvclock;
        // The pvclock page was loaded through the hooks.
        bool loaded_pvti = false;
        for (uint32_t o : th.loads) loaded_pvti |= o >= pv && o < pv + 32;
        EXPECT_TRUE(loaded_pvti);
      }
    }
  }
  std::printf(
      "%s on kvm-clock: %d calls compared, %d answered from the "
      "pvclock page\n",
      tree->name.data(), compared, from_pvclock);
  EXPECT_GT(from_pvclock, compared / 2);
}

TEST(TreeAgreement, KvmClockThroughThe61TreesOwnVreadPvclock) {
  KvmClock(testing::kTarball61, "6.1", false);
}

TEST(TreeAgreement, KvmClockThroughThe612TreesOwnVreadPvclock) {
  KvmClock(testing::kTarball612, "6.10", true);
}

}  // namespace
}  // namespace vdsolab::ktree
