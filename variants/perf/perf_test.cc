// Tests of the perf-mmap variant: the page layout against the uapi header's
// offsets, the cyc2ns scale against set_cyc2ns_scale()'s arithmetic written
// out here, the reader against the header's conversion formula, the lock
// retry, and the measured divergence from CLOCK_MONOTONIC_RAW.

#include "variants/perf/perf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "testing/fixed_counter_hooks.h"
#include "testing/publish_bed.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeping.h"
#include "variants/perf/perf_mmap_page.h"
#include "variants/perf/perf_mmap_reader.h"
#include "variants/perf/perf_mmap_writer.h"
#include "vdso/access.h"
#include "vdso/vvar_page.h"

namespace vdsolab::variants {
namespace {

using perf::kClockPerfTime;
using testing::FixedCounterHooks;
using u128 = unsigned __int128;

constexpr uint64_t kNsPerMsec = 1000000;

// A fixed counter, the accesses recorded, 10 retries at most; the
// fallback answers -EINVAL.
FixedCounterHooks TestHooks(uint64_t counter = 0) {
  FixedCounterHooks hooks(counter);
  hooks.retry_budget = 10;
  return hooks;
}

std::unique_ptr<vdso::VvarPage> NewPage() {
  auto page = vdso::VvarPage::Create();
  EXPECT_TRUE(page.ok());
  return std::move(*page);
}

std::optional<ClockResult> ReadPerfClock(vdso::VvarPage& page,
                                         FixedCounterHooks& hooks) {
  vdso::HookedAccess access(page.data(), &hooks);
  std::unique_ptr<SimReader> reader = PerfMmapVariant().make_sim_reader();
  return reader->Call(access, page.data(), kClockPerfTime);
}

uint64_t Ns(const Timespec64& ts) {
  return static_cast<uint64_t>(ts.tv_sec) * kNsecPerSec +
         static_cast<uint64_t>(ts.tv_nsec);
}

// set_cyc2ns_scale()'s arithmetic, written out from the kernel's description:
// clocks_calc_mult_shift(&mul, &shift, khz, NSEC_PER_MSEC, 0) with maxsec 0
// has 32 bits of room for mult, so shift is the largest s <= 32 for which
// round(10^6 * 2^s / khz) fits in 32 bits; then shift 32 becomes 31 and
// mult is halved (truncating).
struct Scale {
  uint32_t mult;
  uint32_t shift;
};
Scale ExpectedCyc2nsScale(uint32_t khz) {
  uint32_t s = 32;
  u128 m = 0;
  for (; s > 0; --s) {
    m = ((u128{kNsPerMsec} << s) + khz / 2) / khz;
    if (m <= UINT32_MAX) break;
  }
  uint32_t mult = static_cast<uint32_t>(m);
  if (s == 32) {
    s = 31;
    mult >>= 1;
  }
  return {mult, s};
}

// The header's timestamp formula in 128-bit arithmetic, with time_zero =
// cyc2ns_offset = 0 - (boot * mult >> shift) (sched_clock() is 0 at boot).
uint64_t ExpectedPerfNs(const Scale& sc, uint64_t boot, uint64_t cyc) {
  const uint64_t time_zero =
      0 - static_cast<uint64_t>((u128{boot} * sc.mult) >> sc.shift);
  return time_zero + static_cast<uint64_t>((u128{cyc} * sc.mult) >> sc.shift);
}

// A timekeeper state at counter `cycle_last` (the writer reads only that).
timekeeper::Timekeeper TkAt(uint64_t cycle_last) {
  timekeeper::Timekeeper tk;
  tk.tkr_mono.cycle_last = cycle_last;
  tk.tkr_raw.cycle_last = cycle_last;
  return tk;
}

PublishContext Ctx(uint32_t khz, uint64_t boot) {
  PublishContext ctx;
  ctx.tsc_khz = khz;
  ctx.boot_counter = boot;
  return ctx;
}

// --- Layout -----------------------------------------------------------------

TEST(PerfMmapLayout, FieldsSitAtTheUapiHeaderOffsets) {
  // struct perf_event_mmap_page, include/uapi/linux/perf_event.h: two u32,
  // lock and index, then s64 offset, three u64, u16 pmc_width, u16
  // time_shift, u32 time_mult, u64 time_offset, u64 time_zero, u32 size,
  // u32 __reserved_1, u64 time_cycles, u64 time_mask.
  struct Expected {
    const char* name;
    uint32_t offset;
    uint8_t size;
    FieldKind kind;
  };
  const std::vector<Expected> expected = {
      {"version", 0, 4, FieldKind::kData},
      {"compat_version", 4, 4, FieldKind::kData},
      {"lock", 8, 4, FieldKind::kSeq},
      {"index", 12, 4, FieldKind::kData},
      {"offset", 16, 8, FieldKind::kData},
      {"time_enabled", 24, 8, FieldKind::kData},
      {"time_running", 32, 8, FieldKind::kData},
      {"capabilities", 40, 8, FieldKind::kData},
      {"pmc_width", 48, 2, FieldKind::kData},
      {"time_shift", 50, 2, FieldKind::kData},
      {"time_mult", 52, 4, FieldKind::kData},
      {"time_offset", 56, 8, FieldKind::kData},
      {"time_zero", 64, 8, FieldKind::kData},
      {"size", 72, 4, FieldKind::kData},
      {"time_cycles", 80, 8, FieldKind::kData},
      {"time_mask", 88, 8, FieldKind::kData},
  };
  const std::vector<Field>& fields = PerfMmapLayout().fields();
  ASSERT_EQ(fields.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].name);
    EXPECT_EQ(fields[i].name, expected[i].name);
    EXPECT_EQ(fields[i].offset, expected[i].offset);
    EXPECT_EQ(fields[i].size, expected[i].size);
    EXPECT_EQ(fields[i].kind, expected[i].kind);
  }
  // The header's "Header size up to __reserved[] fields".
  EXPECT_EQ(perf::kPcHeaderSize, 96u);
  // cap_bit0, cap_bit0_is_deprecated, cap_user_rdpmc, cap_user_time,
  // cap_user_time_zero, cap_user_time_short: bits 0..5.
  EXPECT_EQ(perf::kCapUserTime, 8u);
  EXPECT_EQ(perf::kCapUserTimeZero, 16u);
  EXPECT_EQ(perf::kCapUserTimeShort, 32u);
}

TEST(PerfMmapVariant, IsAUserspaceClockOnItsOwnPage) {
  const Variant& v = PerfMmapVariant();
  EXPECT_EQ(v.name, "perf-mmap");
  EXPECT_TRUE(v.vdso_clocks.empty());
  ASSERT_EQ(v.own_clocks.size(), 1u);
  EXPECT_EQ(v.own_clocks[0].id, kClockPerfTime);
  EXPECT_EQ(v.own_clocks[0].name, "perf_time");
  EXPECT_EQ(v.own_clocks[0].kind, ClockKind::kUserspace);
  EXPECT_TRUE(v.own_clocks_only);
  EXPECT_EQ(v.counter_read, vdso::CounterRead::kPlain);
  EXPECT_EQ(v.syscall, nullptr);
  EXPECT_NE(v.native_loop, nullptr);
  ASSERT_EQ(PerfVariants().size(), 1u);
  EXPECT_EQ(PerfVariants()[0], &v);
}

// --- Writer -----------------------------------------------------------------

TEST(PerfMmapWriter, Cyc2nsScaleIsSetCyc2nsScalesArithmetic) {
  // Above 1 GHz the 32-bit shift fits and is clamped to 31; at and below
  // 1 GHz the shift is 31 or less from the start.
  for (uint32_t khz :
       {2600000u, 2893300u, 3000000u, 4000123u, 1000000u, 999999u, 100000u}) {
    SCOPED_TRACE(khz);
    const Scale want = ExpectedCyc2nsScale(khz);
    const uint64_t boot = 123456789;
    const perf::Cyc2nsData got = perf::SetCyc2nsScale(khz, boot);
    EXPECT_EQ(got.cyc2ns_mul, want.mult);
    EXPECT_EQ(got.cyc2ns_shift, want.shift);
    EXPECT_LE(got.cyc2ns_shift, 31u);
    // mult / 2^shift is 10^6 / khz to within 2^-shift.
    const __int128 err =
        static_cast<__int128>(u128{got.cyc2ns_mul} * khz) -
        static_cast<__int128>(u128{kNsPerMsec} << got.cyc2ns_shift);
    EXPECT_LT(err < 0 ? -err : err, static_cast<__int128>(khz));
    // Continuity at boot: sched_clock(boot) = 0.
    EXPECT_EQ(perf::Cycles2Ns(got, boot), 0u);
  }
  // 2^32 / 2.6 = 1651910498.46 rounds to 1651910498 at shift 32, which
  // halves to 825955249 at shift 31.
  const perf::Cyc2nsData ghz26 = perf::SetCyc2nsScale(2600000, 0);
  EXPECT_EQ(ghz26.cyc2ns_mul, 825955249u);
  EXPECT_EQ(ghz26.cyc2ns_shift, 31u);
}

TEST(PerfMmapWriter, UpdateIsLockedByTheSeqcountOnBothSides) {
  const PublishContext ctx = Ctx(2600000, 1000);
  const vdso::VvarUpdate u =
      perf::BuildPerfUpdate(TkAt(1000 + 2600000000ull), 4, ctx);
  ASSERT_GE(u.stores.size(), 3u);
  EXPECT_EQ(u.stores.front(), (vdso::VvarStore{perf::kPcLock, 4, 5, false}));
  EXPECT_EQ(u.stores.back(), (vdso::VvarStore{perf::kPcLock, 4, 6, true}));
  EXPECT_TRUE(u.stores[1].wmb_before);
  for (size_t i = 1; i + 1 < u.stores.size(); ++i) {
    EXPECT_NE(u.stores[i].offset, perf::kPcLock) << i;
    if (i > 1) {
      EXPECT_FALSE(u.stores[i].wmb_before) << i;
    }
  }
}

TEST(PerfMmapWriter, PublishesTimeZeroAndTimeOffsetRelativeToNow) {
  const uint32_t khz = 2600000;
  const uint64_t boot = 5000000000ull;
  const uint64_t at = boot + 7 * 2600000000ull + 12345;
  const PublishContext ctx = Ctx(khz, boot);
  std::unique_ptr<vdso::VvarPage> page = NewPage();
  page->Apply(perf::BuildPerfUpdate(TkAt(boot), 0, ctx));
  page->Apply(perf::BuildPerfUpdate(TkAt(at), 2, ctx));

  const Scale sc = ExpectedCyc2nsScale(khz);
  const uint64_t now = ExpectedPerfNs(sc, boot, at);
  EXPECT_EQ(page->Load(perf::kPcLock, 4), 4u);
  EXPECT_EQ(page->Load(perf::kPcSize, 4), 96u);
  EXPECT_EQ(page->Load(perf::kPcCapabilities, 8), perf::kCapBit0IsDeprecated |
                                                      perf::kCapUserTime |
                                                      perf::kCapUserTimeZero);
  EXPECT_EQ(page->Load(perf::kPcPmcWidth, 2), 48u);
  EXPECT_EQ(page->Load(perf::kPcTimeMult, 4), sc.mult);
  EXPECT_EQ(page->Load(perf::kPcTimeShift, 2), sc.shift);
  EXPECT_EQ(page->Load(perf::kPcTimeZero, 8), ExpectedPerfNs(sc, boot, 0));
  // Enabled at boot and always running: both are local_clock() at the
  // update; enabled + time_offset is the time_zero origin again.
  EXPECT_EQ(page->Load(perf::kPcTimeEnabled, 8), now);
  EXPECT_EQ(page->Load(perf::kPcTimeRunning, 8), now);
  EXPECT_EQ(
      page->Load(perf::kPcTimeEnabled, 8) + page->Load(perf::kPcTimeOffset, 8),
      page->Load(perf::kPcTimeZero, 8));
  // x86 never uses the short-counter fields.
  EXPECT_EQ(page->Load(perf::kPcTimeCycles, 8), 0u);
  EXPECT_EQ(page->Load(perf::kPcTimeMask, 8), 0u);
}

TEST(PerfMmapWriter, UnstableTscWithdrawsUserTime) {
  PublishContext ctx = Ctx(2600000, 0);
  ctx.counters_synced = false;  // mark_tsc_unstable(): sched clock unstable.
  std::unique_ptr<vdso::VvarPage> page = NewPage();
  page->Apply(perf::BuildPerfUpdate(TkAt(0), 0, ctx));
  EXPECT_EQ(page->Load(perf::kPcCapabilities, 8), perf::kCapBit0IsDeprecated);
  FixedCounterHooks hooks = TestHooks(2600000000ull);
  EXPECT_EQ(ReadPerfClock(*page, hooks),
            ClockResult::Error(-perf::kEopnotsupp));
  EXPECT_TRUE(hooks.counter_reads().empty());  // No rdtsc without the cap.
}

// --- Reader -----------------------------------------------------------------

TEST(PerfMmapReader, TimestampIsTheHeadersFormula) {
  for (uint32_t khz : {2600000u, 999999u, 100000u}) {
    const uint64_t boot = 987654321;
    const PublishContext ctx = Ctx(khz, boot);
    std::unique_ptr<vdso::VvarPage> page = NewPage();
    page->Apply(perf::BuildPerfUpdate(TkAt(boot), 0, ctx));
    const Scale sc = ExpectedCyc2nsScale(khz);
    const std::vector<uint64_t> counters = {0,
                                            1,
                                            boot,
                                            boot + 1,
                                            (uint64_t{1} << 32) - 1,
                                            uint64_t{1} << 32,
                                            (uint64_t{1} << 32) + 1,
                                            (uint64_t{1} << 62) + 12345,
                                            uint64_t{1} << 63,
                                            ~uint64_t{0}};
    for (uint64_t cyc : counters) {
      SCOPED_TRACE(::testing::Message() << "khz " << khz << " cyc " << cyc);
      FixedCounterHooks hooks = TestHooks(cyc);
      const uint64_t ns = ExpectedPerfNs(sc, boot, cyc);
      const Timespec64 want{static_cast<int64_t>(ns / kNsecPerSec),
                            static_cast<int64_t>(ns % kNsecPerSec)};
      EXPECT_EQ(ReadPerfClock(*page, hooks), ClockResult::Ok(want));
      EXPECT_EQ(hooks.retries(), 0);
      // A bare rdtsc, as the header's example: no ordering fence.
      ASSERT_EQ(hooks.counter_reads().size(), 1u);
      EXPECT_EQ(hooks.counter_reads()[0], vdso::CounterRead::kPlain);
    }
    // One second of counter after boot reads as one second of perf time.
    FixedCounterHooks hooks = TestHooks(boot + uint64_t{khz} * 1000);
    const std::optional<ClockResult> r = ReadPerfClock(*page, hooks);
    ASSERT_TRUE(r.has_value());
    EXPECT_LE(std::llabs(static_cast<long long>(Ns(r->ts)) - 1000000000ll), 1)
        << khz;
  }
}

TEST(PerfMmapReader, RetriesWhenTheLockMovesMidRead) {
  const uint64_t boot = 1000;
  const PublishContext ctx = Ctx(2600000, boot);
  std::unique_ptr<vdso::VvarPage> page = NewPage();
  page->Apply(perf::BuildPerfUpdate(TkAt(boot), 0, ctx));
  const uint64_t old_zero = page->Load(perf::kPcTimeZero, 8);
  const uint64_t new_zero = old_zero + 777;

  FixedCounterHooks hooks = TestHooks(boot + 2600000000ull);
  // After the reader has loaded time_zero, a whole update lands: lock
  // moves from 2 to 4 and time_zero changes. Only a retry sees the new one.
  bool bumped = false;
  hooks.before_load = [&](size_t, uint32_t offset) {
    if (offset == perf::kPcTimeShift && !bumped) {
      bumped = true;
      page->Store(perf::kPcLock, 4, 4);
      page->Store(perf::kPcTimeZero, 8, new_zero);
    }
  };
  const std::optional<ClockResult> r = ReadPerfClock(*page, hooks);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(hooks.retries(), 1);
  const Scale sc = ExpectedCyc2nsScale(2600000);
  EXPECT_EQ(Ns(r->ts), ExpectedPerfNs(sc, boot, hooks.counter) + 777);
  // Two passes: the counter was read twice.
  EXPECT_EQ(hooks.counter_reads().size(), 2u);
}

TEST(PerfMmapReader, GivesUpWhenTheAccessPolicySaysSo) {
  const PublishContext ctx = Ctx(2600000, 0);
  std::unique_ptr<vdso::VvarPage> page = NewPage();
  page->Apply(perf::BuildPerfUpdate(TkAt(0), 0, ctx));
  FixedCounterHooks hooks = TestHooks();
  hooks.retry_budget = 0;
  uint32_t lock = 2;
  hooks.before_load = [&](size_t, uint32_t offset) {
    if (offset == perf::kPcTimeZero) page->Store(perf::kPcLock, 4, lock += 2);
  };
  EXPECT_EQ(ReadPerfClock(*page, hooks), std::nullopt);
}

TEST(PerfMmapReader, DocumentedLoopAcceptsAnOddLockThatDoesNotMove) {
  // The header's loop compares lock before and after, nothing more: the
  // kernel's writer runs on the reader's CPU, so a self-monitoring reader
  // cannot land inside a write. A reader elsewhere that does keeps what it
  // read (here a time_mult the writer has not published yet).
  std::unique_ptr<vdso::VvarPage> page = NewPage();
  page->Store(perf::kPcLock, 4, 1);
  page->Store(
      perf::kPcCapabilities, 8,
      perf::kCapBit0IsDeprecated | perf::kCapUserTime | perf::kCapUserTimeZero);
  page->Store(perf::kPcTimeZero, 8, 50);
  FixedCounterHooks hooks = TestHooks(1ull << 40);
  EXPECT_EQ(ReadPerfClock(*page, hooks), ClockResult::Ok({0, 50}));
  EXPECT_EQ(hooks.retries(), 0);
}

TEST(PerfMmapReader, OtherClockIdsGoToTheSyscall) {
  std::unique_ptr<vdso::VvarPage> page = NewPage();
  FixedCounterHooks hooks = TestHooks();
  vdso::HookedAccess access(page->data(), &hooks);
  EXPECT_EQ(perf::PerfClockGettime(access, page->data(), kClockMonotonicRaw),
            ClockResult::Error(-kEinval));
  EXPECT_EQ(hooks.fallbacks().size(), 1u);
  EXPECT_TRUE(hooks.load_offsets().empty());
}

// --- "Do not mix clocks": perf time against CLOCK_MONOTONIC_RAW -------------

struct Divergence {
  int64_t perf_ns;  // perf_time delta.
  int64_t raw_ns;   // CLOCK_MONOTONIC_RAW delta.
  int64_t diff_ns;  // perf - raw.
  Scale perf_scale;
  Scale raw_scale;
  uint64_t cycles;
};

// One simulated hour of a `khz` counter, the timekeeper ticking each
// second, perf time read from the page and MONOTONIC_RAW from the syscall
// model, both at the hour's first and last counter value.
Divergence MeasureOneHour(uint32_t khz) {
  const uint64_t boot = 1000000007;
  testing::PublishBed bed(PerfMmapVariant(), testing::Tsc(khz), Ctx(khz, boot));
  bed.tk().Init(boot, Timespec64{1700000000, 0}, Timespec64{});

  auto perf_at = [&](uint64_t cyc) {
    const std::optional<ClockResult> r = bed.Read(kClockPerfTime, cyc);
    EXPECT_TRUE(r.has_value() && r->ret == 0);
    return r ? Ns(r->ts) : 0;
  };
  auto raw_at = [&](uint64_t cyc) {
    const ClockResult r = bed.Syscall(kClockMonotonicRaw, cyc);
    EXPECT_EQ(r.ret, 0);
    return Ns(r.ts);
  };

  const uint64_t per_sec = uint64_t{khz} * 1000;
  const uint64_t c0 = boot;
  const uint64_t perf0 = perf_at(c0);
  const uint64_t raw0 = raw_at(c0);
  for (uint64_t s = 1; s <= 3600; ++s) {
    bed.tk().Advance(timekeeper::AdvanceMode::kTick, boot + s * per_sec);
  }
  const uint64_t c1 = boot + 3600 * per_sec;
  Divergence d;
  d.perf_ns = static_cast<int64_t>(perf_at(c1) - perf0);
  d.raw_ns = static_cast<int64_t>(raw_at(c1) - raw0);
  d.diff_ns = d.perf_ns - d.raw_ns;
  d.perf_scale = ExpectedCyc2nsScale(khz);
  d.raw_scale = {bed.state().tkr_raw.mult, bed.state().tkr_raw.shift};
  d.cycles = c1 - c0;
  return d;
}

// What the two mult/shift pairs predict for the divergence over `cycles`:
// cycles * (mp / 2^sp - mr / 2^sr) ns, exactly (as a long double).
long double PredictedDivergence(const Divergence& d) {
  const __int128 num = static_cast<__int128>(u128{d.cycles} * d.perf_scale.mult
                                             << d.raw_scale.shift) -
                       static_cast<__int128>(u128{d.cycles} * d.raw_scale.mult
                                             << d.perf_scale.shift);
  return static_cast<long double>(num) /
         std::ldexp(1.0L,
                    static_cast<int>(d.perf_scale.shift + d.raw_scale.shift));
}

TEST(PerfMmapDivergence, OneHourAt2600MHzDriftsFromMonotonicRaw) {
  const Divergence d = MeasureOneHour(2600000);
  const double ppb =
      static_cast<double>(d.diff_ns) * 1e9 / static_cast<double>(d.raw_ns);
  std::printf(
      "perf-mmap vs CLOCK_MONOTONIC_RAW, 1 h at 2.6 GHz: perf %u/2^%u, raw "
      "%u/2^%u: perf %lld ns, raw %lld ns, divergence %lld ns = %.3f ppb\n",
      d.perf_scale.mult, d.perf_scale.shift, d.raw_scale.mult,
      d.raw_scale.shift, static_cast<long long>(d.perf_ns),
      static_cast<long long>(d.raw_ns), static_cast<long long>(d.diff_ns), ppb);
  RecordProperty("divergence_ns", std::to_string(d.diff_ns));

  // Each conversion floors once at each end: the measured divergence is the
  // mults' prediction to within 2 ns.
  const long double predicted = PredictedDivergence(d);
  EXPECT_LE(std::fabs(static_cast<long double>(d.diff_ns) - predicted), 2.0L);
  // Each mult is 10^6/khz rounded: perf's to within 2^-sp (rounded at
  // 2^-32, then halved with truncation), the clocksource's to within
  // 2^-(sr+1) (rounded to nearest). Their difference over the hour can be
  // no larger, plus the 2 ns of flooring.
  const long double bound =
      static_cast<long double>(d.cycles) *
          (std::ldexp(1.0L, -static_cast<int>(d.perf_scale.shift)) +
           std::ldexp(1.0L, -static_cast<int>(d.raw_scale.shift) - 1)) +
      2.0L;
  EXPECT_LE(std::fabs(static_cast<long double>(d.diff_ns)), bound);
  // The two ratios differ (mp * 2^sr != mr * 2^sp), and over 9.36e12
  // cycles their difference exceeds the flooring: the clocks drift apart.
  ASSERT_NE(u128{d.perf_scale.mult} << d.raw_scale.shift,
            u128{d.raw_scale.mult} << d.perf_scale.shift);
  ASSERT_GT(std::fabs(predicted), 2.0L);
  EXPECT_NE(d.diff_ns, 0);
  EXPECT_EQ(d.diff_ns > 0, predicted > 0);
}

TEST(PerfMmapDivergence, AnExactOneGigahertzRatioDoesNotDrift) {
  // At 1 GHz both roundings are exact (perf 2^31/2^31, raw 2^23/2^23): the
  // same clock, so the hour ends with no divergence at all.
  const Divergence d = MeasureOneHour(1000000);
  EXPECT_EQ(PredictedDivergence(d), 0.0L);
  EXPECT_EQ(d.diff_ns, 0);
  EXPECT_EQ(d.perf_ns, 3600000000000ll);
}

}  // namespace
}  // namespace vdsolab::variants
