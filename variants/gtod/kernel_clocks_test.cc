// The kernel clocks of every variant against the timekeeper's syscall model
// (SysClockGettime) on pages its writer published from a timekeeper driven
// through ticks, idle gaps and adjtimex() frequency changes: the served
// clocks at counters ahead of cycle_last, the base time for a counter
// behind it, the syscall for the clocks not served (-EINVAL, without the
// syscall, for the trace-clock variants, as the RFC's switch does), and the
// era's coarse values (xtime_nsec >> shift at the last update).

#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/math64.h"
#include "testing/publish_bed.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/ntp.h"
#include "variants/gtod/gtod.h"

namespace vdsolab::variants::gtod {
namespace {

const Variant& GetVariant(std::string_view name) {
  return testing::VariantNamed(GtodVariants(), name);
}

using testing::PublishBed;
using testing::Tsc;

struct Case {
  const char* name;
  std::vector<ClockId> hres;  // Served from the page with the counter.
  bool unserved_einval;       // The RFC's "default: return -EINVAL".
  bool rdtscp_raw;            // RAW reads with rdtscp when has_rdtscp.
};

std::vector<Case> Cases() {
  const std::vector<ClockId> k416 = {kClockRealtime, kClockMonotonic};
  const std::vector<ClockId> k416Raw = {kClockRealtime, kClockMonotonic,
                                        kClockMonotonicRaw};
  return {
      {"x86-4.16", k416, false, false},
      {"vasdias-v1", k416Raw, false, false},
      {"vasdias-rdtscp", k416Raw, false, true},
      {"vasdias-rc5-2", k416Raw, false, false},
      {"sverdlin-v2",
       {kClockRealtime, kClockMonotonic, kClockTai, kClockMonotonicRaw},
       false,
       false},
      {"tsc-calibration", k416Raw, false, true},
      {"trace-clock", k416, true, false},
      {"trace-clock-reviewed", k416, true, false},
  };
}

bool Contains(const std::vector<ClockId>& v, ClockId c) {
  return std::find(v.begin(), v.end(), c) != v.end();
}

// The coarse clocks before 6.15, written out: REALTIME_COARSE is xtime at
// the last update, MONOTONIC_COARSE that plus wall_to_monotonic.
ClockResult EraCoarse(const timekeeper::Timekeeper& tk, ClockId clock) {
  const int64_t nsec =
      static_cast<int64_t>(tk.tkr_mono.xtime_nsec >> tk.tkr_mono.shift);
  const int64_t sec = static_cast<int64_t>(tk.xtime_sec);
  if (clock == kClockRealtimeCoarse) return ClockResult::Ok({sec, nsec});
  int64_t msec = sec + tk.wall_to_monotonic.tv_sec;
  int64_t mnsec = nsec + tk.wall_to_monotonic.tv_nsec;
  if (mnsec >= 1000000000) {
    mnsec -= 1000000000;
    ++msec;
  }
  return ClockResult::Ok({msec, mnsec});
}

class KernelClocksTest : public ::testing::TestWithParam<Case> {
 protected:
  // Checks every clock id on the current page.
  void CheckAll(PublishBed& bed) {
    const Case& c = GetParam();
    const timekeeper::Timekeeper& tk = bed.state();
    const uint64_t last = tk.tkr_mono.cycle_last;
    const uint64_t ci = tk.cycle_interval;
    const uint64_t max = tk.tkr_mono.clock->max_cycles;
    SCOPED_TRACE(testing_context_ + " cycle_last " + std::to_string(last));

    for (ClockId clk : c.hres) {
      for (uint64_t d : {uint64_t{0}, uint64_t{1}, uint64_t{997}, ci / 2, ci,
                         5 * ci + 3, max / 4}) {
        const uint64_t counter = last + d;
        EXPECT_EQ(bed.Read(clk, counter), bed.Syscall(clk, counter))
            << ClockName(clk) << " at cycle_last + " << d;
        EXPECT_TRUE(bed.hooks().fallbacks().empty()) << ClockName(clk);
        EXPECT_EQ(bed.hooks().counter_reads().size(), 1u) << ClockName(clk);
      }
      // Behind cycle_last (a lagging CPU): the base time, not a jump.
      for (uint64_t behind : {uint64_t{1}, uint64_t{123456}}) {
        EXPECT_EQ(bed.Read(clk, last - behind), bed.Syscall(clk, last))
            << ClockName(clk) << " at cycle_last - " << behind;
        EXPECT_TRUE(bed.hooks().fallbacks().empty());
      }
    }

    for (ClockId clk : {kClockRealtimeCoarse, kClockMonotonicCoarse}) {
      EXPECT_EQ(bed.Read(clk, last + ci), EraCoarse(tk, clk)) << ClockName(clk);
      EXPECT_TRUE(bed.hooks().counter_reads().empty());  // No counter read.
      if (tk.coarse_nsec == tk.tkr_mono.xtime_nsec >> tk.tkr_mono.shift) {
        EXPECT_EQ(bed.Read(clk, last), bed.Syscall(clk, last));
      }
    }

    const std::vector<ClockId> ids = {
        kClockProcessCputimeId,
        kClockThreadCputimeId,
        kClockMonotonicRaw,
        kClockBoottime,
        kClockRealtimeAlarm,
        kClockBoottimeAlarm,
        kClockSgiCycle,
        kClockTai,
        12,
        15,
        16,
        23,
        -6,  // MAKE_PROCESS_CPUCLOCK(0, CPUCLOCK_SCHED)
        -1,
        INT_MIN,
        INT_MAX};
    for (ClockId id : ids) {
      if (Contains(c.hres, id)) continue;
      const uint64_t counter = last + 4321;
      const std::optional<ClockResult> got = bed.Read(id, counter);
      if (c.unserved_einval) {
        EXPECT_EQ(got, ClockResult::Error(-kEinval)) << id;
        EXPECT_TRUE(bed.hooks().fallbacks().empty()) << id;
      } else {
        EXPECT_EQ(got, bed.Syscall(id, counter)) << id;
        EXPECT_EQ(bed.hooks().fallbacks(), std::vector<ClockId>{id});
      }
    }
  }

  std::string testing_context_;
};

TEST_P(KernelClocksTest, MatchesTheSyscallThroughTicksAndAdjtimex) {
  const Variant& v = GetVariant(GetParam().name);
  for (uint32_t khz : {2600000u, 3000000u, 2095998u}) {
    PublishContext ctx;
    ctx.tsc_khz = khz;
    PublishBed bed(v, Tsc(khz), ctx);
    uint64_t now = 5000000000000ull;
    bed.tk().Init(now, {1700000000, 987654321}, {12, 345678901});
    testing_context_ = std::to_string(khz) + " kHz, init";
    CheckAll(bed);
    const uint64_t ci = bed.state().cycle_interval;
    auto tick = [&](uint64_t gap, const char* what) {
      now += gap;
      bed.tk().Advance(timekeeper::AdvanceMode::kTick, now);
      testing_context_ = std::to_string(khz) + " kHz, " + what;
      CheckAll(bed);
    };
    auto adjtimex = [&](uint64_t gap, int64_t ppm) {
      now += gap;
      timekeeper::Timex txc;
      txc.modes = timekeeper::kAdjFrequency;
      txc.freq = ppm << 16;
      ASSERT_TRUE(bed.tk().Adjtimex(txc, now).ok());
      testing_context_ = std::to_string(khz) + " kHz, adjtimex";
      CheckAll(bed);
    };
    for (int i = 0; i < 3; ++i) tick(ci, "tick");
    adjtimex(ci / 3, 250);
    tick(ci - ci / 3 + 5, "tick after adjtimex");
    tick(7 * ci + 123, "idle");  // NO_HZ: several intervals at once.
    for (int i = 0; i < 20; ++i) tick(ci + 11, "steered tick");
    adjtimex(17, -400);
    for (int i = 0; i < 20; ++i) tick(ci - 3, "steered tick");
    // The steering moved the mono clock off the raw one, so a raw clock
    // computed with the mono mult would have failed above.
    EXPECT_NE(bed.state().tkr_mono.mult, bed.state().tkr_raw.mult);
  }
}

TEST_P(KernelClocksTest, RetriesWhenAnUpdateLandsDuringTheRead) {
  const Variant& v = GetVariant(GetParam().name);
  PublishContext ctx;
  ctx.tsc_khz = 2600000;
  PublishBed bed(v, Tsc(2600000), ctx);
  uint64_t now = 1000000000;
  bed.tk().Init(now, {1700000000, 0}, {5, 0});
  now += bed.state().cycle_interval;
  bed.tk().Advance(timekeeper::AdvanceMode::kTick, now);
  const uint64_t counter = now + 1000;
  for (ClockId clk : {kClockRealtime, kClockRealtimeCoarse}) {
    SCOPED_TRACE(ClockName(clk));
    const ClockResult before = clk == kClockRealtime
                                   ? bed.Syscall(clk, counter)
                                   : EraCoarse(bed.state(), clk);
    // settimeofday(): REALTIME jumps by about 100 s. The update is held
    // back, then applied in full just before the reader's retry check.
    bed.queue = true;
    ASSERT_EQ(
        bed.tk().SetTimeOfDay({before.ts.tv_sec + 100, before.ts.tv_nsec}, now),
        0);
    bed.queue = false;
    ASSERT_EQ(bed.pending().size(), 1u);
    const ClockResult after = clk == kClockRealtime
                                  ? bed.Syscall(clk, counter)
                                  : EraCoarse(bed.state(), clk);
    ASSERT_NE(before, after);
    int seq_loads = 0;
    const std::optional<ClockResult> got =
        bed.Read(clk, counter, [&](size_t, uint32_t offset) {
          if (offset == 128 && ++seq_loads == 2) {
            bed.page().Apply(bed.pending().front());
          }
        });
    bed.pending().clear();
    EXPECT_EQ(got, after);
    EXPECT_EQ(seq_loads, 4);  // begin, retry (changed), begin, retry.
  }
}

TEST_P(KernelClocksTest, OddSeqSpinsUntilTheBudgetRunsOut) {
  const Variant& v = GetVariant(GetParam().name);
  PublishContext ctx;
  ctx.tsc_khz = 2600000;
  PublishBed bed(v, Tsc(2600000), ctx);
  bed.tk().Init(1000000000, {1700000000, 0}, {});
  bed.page().Store(128, 4, 7);  // A writer stopped inside its update.
  EXPECT_EQ(bed.Read(kClockMonotonic, 1000000500), std::nullopt);
  EXPECT_EQ(bed.hooks().retries(), bed.hooks().retry_budget + 1);
  EXPECT_TRUE(bed.hooks().counter_reads().empty());
}

TEST_P(KernelClocksTest, ClockModeNoneAndPvclockGoToTheSyscall) {
  const Case& c = GetParam();
  const Variant& v = GetVariant(c.name);
  auto hpet = timekeeper::ClocksourceRegisterScale(
      "hpet", timekeeper::ClocksourceMask(32), 1, 14318180,
      timekeeper::kVdsoClockmodeNone, 250);
  auto kvm = timekeeper::ClocksourceRegisterScale(
      "kvm-clock", timekeeper::ClocksourceMask(64), 1, 1000000000,
      timekeeper::kVdsoClockmodePvclock, 400);
  ASSERT_TRUE(hpet.ok() && kvm.ok());
  // 4.11-5.5 numbering: VCLOCK_NONE 0, VCLOCK_PVCLOCK 2.
  for (const auto& [cs, mode] :
       {std::pair{*hpet, uint64_t{0}}, std::pair{*kvm, uint64_t{2}}}) {
    SCOPED_TRACE(cs.name);
    PublishContext ctx;
    PublishBed bed(v, cs, ctx);
    bed.tk().Init(100000, {1700000000, 0}, {3, 0});
    bed.tk().Advance(timekeeper::AdvanceMode::kTick,
                     100000 + 2 * bed.state().cycle_interval);
    EXPECT_EQ(bed.page().Load(128 + 4, 4), mode);
    const uint64_t counter = bed.state().tkr_mono.cycle_last + 77;
    for (ClockId clk : c.hres) {
      EXPECT_EQ(bed.Read(clk, counter), bed.Syscall(clk, counter))
          << ClockName(clk);
      EXPECT_EQ(bed.hooks().fallbacks(), std::vector<ClockId>{clk});
    }
    // The coarse clocks never look at the mode.
    EXPECT_EQ(bed.Read(kClockRealtimeCoarse, counter),
              EraCoarse(bed.state(), kClockRealtimeCoarse));
    EXPECT_TRUE(bed.hooks().fallbacks().empty());
  }
}

TEST_P(KernelClocksTest, RdtscpOnlyWhereThePatchAndThePageSaySo) {
  const Case& c = GetParam();
  const Variant& v = GetVariant(c.name);
  EXPECT_EQ(v.counter_read == vdso::CounterRead::kRdtscp, c.rdtscp_raw);
  for (bool has_rdtscp : {true, false}) {
    PublishContext ctx;
    ctx.tsc_khz = 2600000;
    ctx.has_rdtscp = has_rdtscp;
    PublishBed bed(v, Tsc(2600000), ctx);
    bed.tk().Init(1000000, {1700000000, 0}, {});
    const uint64_t counter = 1000000 + 1000;
    for (ClockId clk : c.hres) {
      ASSERT_TRUE(bed.Read(clk, counter).has_value());
      const bool rdtscp =
          clk == kClockMonotonicRaw && c.rdtscp_raw && has_rdtscp;
      EXPECT_EQ(
          bed.hooks().counter_reads(),
          std::vector<vdso::CounterRead>{rdtscp ? vdso::CounterRead::kRdtscp
                                                : vdso::CounterRead::kOrdered})
          << ClockName(clk) << " has_rdtscp " << has_rdtscp;
    }
  }
}

TEST_P(KernelClocksTest, VariantRecordListsWhatItServes) {
  const Case& c = GetParam();
  const Variant& v = GetVariant(c.name);
  for (ClockId clk : c.hres) EXPECT_TRUE(ServesFromPage(v, clk));
  EXPECT_TRUE(ServesFromPage(v, kClockRealtimeCoarse));
  EXPECT_TRUE(ServesFromPage(v, kClockMonotonicCoarse));
  EXPECT_FALSE(ServesFromPage(v, kClockBoottime));
  EXPECT_EQ(ServesFromPage(v, kClockMonotonicRaw),
            Contains(c.hres, kClockMonotonicRaw));
  EXPECT_EQ(v.semantics.counter, CounterSemantics::kClampToLast);
  EXPECT_FALSE(v.semantics.overflow_protected);
  EXPECT_FALSE(v.semantics.coarse_from_coarse_nsec);
  EXPECT_NE(v.native_loop, nullptr);
  EXPECT_NE(v.make_sim_reader, nullptr);
  EXPECT_FALSE(v.provenance.empty());
}

INSTANTIATE_TEST_SUITE_P(AllVariants, KernelClocksTest,
                         ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           std::string n = p.param.name;
                           std::replace(n.begin(), n.end(), '-', '_');
                           std::replace(n.begin(), n.end(), '.', '_');
                           return n;
                         });

// Seed 003 tests the counter's sign: (s64)cycles < 0 goes to the syscall.
TEST(Sverdlin, CounterWithBit63SetFallsBack) {
  PublishContext ctx;
  PublishBed bed(GetVariant("sverdlin-v2"), Tsc(2600000), ctx);
  bed.tk().Init(1000, {1700000000, 0}, {});
  const uint64_t counter = (1ull << 63) + 5;
  for (ClockId clk : {kClockMonotonic, kClockMonotonicRaw}) {
    EXPECT_EQ(bed.Read(clk, counter), bed.Syscall(clk, counter));
    EXPECT_EQ(bed.hooks().fallbacks(), std::vector<ClockId>{clk});
  }
}

// The seed's vread_tsc_raw() loads raw_cycle_last before the counter (and
// has_rdtscp, in the 2/2 revision); 4.16's vread_tsc() loads cycle_last
// after it.
TEST(VasDias, RawLoadsRawCycleLastBeforeTheCounter) {
  PublishContext ctx;
  ctx.has_rdtscp = true;
  PublishBed bed(GetVariant("vasdias-rdtscp"), Tsc(2600000), ctx);
  bed.tk().Init(1000, {1700000000, 0}, {});
  ASSERT_TRUE(bed.Read(kClockMonotonicRaw, 2000).has_value());
  // seq, vclock_mode, raw_sec, raw_nsec, vclock_mode (vgetsns_raw),
  // raw_cycle_last, has_rdtscp | counter | raw_cycle_last, raw_mask,
  // raw_mult, raw_shift, seq.
  const std::vector<uint32_t> want = {128,      128 + 4,  128 + 128, 128 + 136,
                                      128 + 4,  128 + 32, 128 + 56,  128 + 32,
                                      128 + 40, 128 + 48, 128 + 52,  128};
  EXPECT_EQ(bed.hooks().load_offsets(), want);
  EXPECT_EQ(bed.hooks().loads_before_counter(), 7u);

  ASSERT_TRUE(bed.Read(kClockMonotonic, 2000).has_value());
  // seq, vclock_mode, sec, snsec, vclock_mode | counter | cycle_last (the
  // clamp), cycle_last, mask, mult, shift, seq.
  const std::vector<uint32_t> mono = {128,      128 + 4,  128 + 80, 128 + 88,
                                      128 + 4,  128 + 8,  128 + 8,  128 + 16,
                                      128 + 24, 128 + 28, 128};
  EXPECT_EQ(bed.hooks().load_offsets(), mono);
  EXPECT_EQ(bed.hooks().loads_before_counter(), 5u);
}

}  // namespace
}  // namespace vdsolab::variants::gtod
