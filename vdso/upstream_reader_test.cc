#include "vdso/upstream_reader.h"

#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "testing/fixed_counter_hooks.h"
#include "vdso/access.h"
#include "vdso/datapage.h"
#include "vdso/vvar_page.h"

namespace vdsolab::vdso {
namespace {

class UpstreamReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto page = VvarPage::Create();
    ASSERT_TRUE(page.ok());
    page_ = std::move(*page);
    // A clean page: 1 ns per cycle (mult 2^24, shift 24), cycle_last 1000,
    // MONOTONIC at 5.999999990 s, REALTIME_COARSE at 77.000000123 s.
    for (int cs : {kCsHresCoarse, kCsRaw}) {
      const uint32_t vc = ClockDataOffset(cs);
      page_->Store(vc + kVcSeq, 4, 2);
      page_->Store(vc + kVcClockMode, 4, upstream::kClockModeTsc);
      page_->Store(vc + kVcCycleLast, 8, 1000);
      page_->Store(vc + kVcMaxCycles, 8, 1ull << 40);
      page_->Store(vc + kVcMask, 8, ~0ull);
      page_->Store(vc + kVcMult, 4, 1u << 24);
      page_->Store(vc + kVcShift, 4, 24);
    }
    SetBase(kCsHresCoarse, kClockMonotonic, 5, 999999990ull << 24);
    SetBase(kCsHresCoarse, kClockRealtimeCoarse, 77, 123);
  }
  void SetBase(int cs, ClockId clock, uint64_t sec, uint64_t nsec) {
    page_->Store(ClockDataOffset(cs) + VcBasetimeSec(clock), 8, sec);
    page_->Store(ClockDataOffset(cs) + VcBasetimeNsec(clock), 8, nsec);
  }
  std::optional<ClockResult> Read(ClockId clock) {
    HookedAccess access(page_->data(), &hooks_);
    return upstream::ClockGettime(access, page_->data(), clock);
  }

  std::unique_ptr<VvarPage> page_;
  // Every access in order, loads named as DescribeVvarOffset() names them.
  std::vector<std::string> Accesses() const {
    return hooks_.Described(DescribeVvarOffset);
  }

  testing::FixedCounterHooks hooks_;
};

TEST_F(UpstreamReaderTest, HresAddsTheConvertedDeltaAndNormalises) {
  hooks_.counter = 1020;  // 20 cycles = 20 ns past 5.999999990.
  EXPECT_EQ(Read(kClockMonotonic), ClockResult::Ok({6, 10}));
  EXPECT_TRUE(hooks_.fallbacks().empty());
}

TEST_F(UpstreamReaderTest, HresLoadsInKernelSourceOrder) {
  hooks_.counter = 1020;
  ASSERT_TRUE(Read(kClockMonotonic).has_value());
  const std::vector<std::string> expected = {
      "clock_data[0].seq",
      "clock_data[0].clock_mode",
      "COUNTER",
      "clock_data[0].basetime[CLOCK_MONOTONIC].nsec",
      "clock_data[0].cycle_last",
      "clock_data[0].max_cycles",
      "clock_data[0].mult",
      "clock_data[0].shift",
      "clock_data[0].basetime[CLOCK_MONOTONIC].sec",
      "clock_data[0].seq",
  };
  EXPECT_EQ(Accesses(), expected);
}

TEST_F(UpstreamReaderTest, NegativeMotionReturnsTheBaseTime) {
  hooks_.counter = 900;  // Behind cycle_last: another CPU's TSC lags.
  EXPECT_EQ(Read(kClockMonotonic), ClockResult::Ok({5, 999999990}));
}

TEST_F(UpstreamReaderTest, DeltaBeyondMaxCyclesTakesTheSafeMultiply) {
  page_->Store(ClockDataOffset(kCsHresCoarse) + kVcMaxCycles, 8, 10);
  hooks_.counter = 1020;
  EXPECT_EQ(Read(kClockMonotonic), ClockResult::Ok({6, 10}));
  // 2^40 cycles of 1 ns: the plain u64 product (2^64) would wrap to 0.
  hooks_.counter = 1000 + (1ull << 40);
  const int64_t ns = (1ll << 40) + 999999990;
  EXPECT_EQ(Read(kClockMonotonic),
            ClockResult::Ok({5 + ns / 1000000000, ns % 1000000000}));
}

TEST_F(UpstreamReaderTest, CounterBitSixtyThreeIsMaskedOff) {
  // The x86 reader clears the TSC's MSB: 2^63 + 1020 reads as 1020.
  hooks_.counter = (1ull << 63) + 1020;
  EXPECT_EQ(Read(kClockMonotonic), ClockResult::Ok({6, 10}));
}

TEST_F(UpstreamReaderTest, ClockModeNoneFallsBackToTheSyscall) {
  page_->Store(ClockDataOffset(kCsRaw) + kVcClockMode, 4, 0);
  EXPECT_EQ(Read(kClockMonotonicRaw), ClockResult::Error(-kEinval));
  EXPECT_EQ(hooks_.fallbacks(), std::vector<ClockId>{kClockMonotonicRaw});
}

TEST_F(UpstreamReaderTest, CoarseCopiesPlainNanoseconds) {
  EXPECT_EQ(Read(kClockRealtimeCoarse), ClockResult::Ok({77, 123}));
  const std::vector<std::string> expected = {
      "clock_data[0].seq",
      "clock_data[0].basetime[CLOCK_REALTIME_COARSE].sec",
      "clock_data[0].basetime[CLOCK_REALTIME_COARSE].nsec",
      "clock_data[0].seq",
  };
  EXPECT_EQ(Accesses(), expected);
}

TEST_F(UpstreamReaderTest, UnservedAndInvalidIdsGoToTheSyscall) {
  const std::vector<ClockId> ids = {kClockProcessCputimeId,
                                    kClockRealtimeAlarm,
                                    kClockSgiCycle,
                                    12,
                                    15,
                                    24,
                                    -1,
                                    INT_MIN,
                                    INT_MAX};
  for (ClockId id : ids) {
    EXPECT_EQ(Read(id), ClockResult::Error(-kEinval)) << id;
  }
  EXPECT_EQ(hooks_.fallbacks(), ids);
  EXPECT_TRUE(hooks_.accesses().empty());  // Decided without touching the page.
}

TEST_F(UpstreamReaderTest, DisabledAuxClockReadsItsRecordThenFallsBack) {
  EXPECT_EQ(Read(kClockAux + 2), ClockResult::Error(-kEinval));
  const std::vector<std::string> expected = {"aux_clock_data[2].seq",
                                             "aux_clock_data[2].clock_mode"};
  EXPECT_EQ(Accesses(), expected);
}

TEST_F(UpstreamReaderTest, RetriesWhenSeqChangesUnderneath) {
  hooks_.counter = 1020;
  // A whole update lands after the first data load: seq 2 -> 4 and a new
  // MONOTONIC base. The first pass is discarded; the second sees the update.
  hooks_.before_load = [&](size_t n, uint32_t) {
    if (n != 3) return;
    page_->Store(kVcSeq, 4, 4);
    SetBase(kCsHresCoarse, kClockMonotonic, 100, 0);
  };
  EXPECT_EQ(Read(kClockMonotonic), ClockResult::Ok({100, 20}));
  EXPECT_EQ(hooks_.accesses().size(), 20u);  // Two full passes.
}

TEST_F(UpstreamReaderTest, OddSeqSpinsUntilTheBudgetRunsOut) {
  page_->Store(kVcSeq, 4, 3);
  hooks_.retry_budget = 5;
  EXPECT_EQ(Read(kClockMonotonic), std::nullopt);
  EXPECT_EQ(hooks_.retries(), 6);
  // Each spin reads seq and, as the kernel's timens check, clock_mode.
  EXPECT_EQ(hooks_.accesses().size(), 12u);
}

// kvm-clock: the counter is the pvclock page's nanoseconds at the TSC.
class PvclockReaderTest : public UpstreamReaderTest {
 protected:
  void SetUp() override {
    UpstreamReaderTest::SetUp();
    for (int cs : {kCsHresCoarse, kCsRaw}) {
      const uint32_t vc = ClockDataOffset(cs);
      page_->Store(vc + kVcClockMode, 4, upstream::kClockModePvclock);
      page_->Store(vc + kVcCycleLast, 8, 5000000000);  // kvm-clock ns.
      page_->Store(vc + kVcMult, 4, 1u << 23);         // 1 ns per count.
      page_->Store(vc + kVcShift, 4, 23);
    }
    SetBase(kCsHresCoarse, kClockMonotonic, 10, 0);
    // mul 2^31 (x 0.5) after a left shift by one: 1 ns per TSC cycle.
    const uint32_t pv = kPvclockPageOffset;
    page_->Store(pv + kPvtiVersion, 4, 2);
    page_->Store(pv + kPvtiTscTimestamp, 8, 1000);
    page_->Store(pv + kPvtiSystemTime, 8, 5000000000);
    page_->Store(pv + kPvtiMul, 4, 1u << 31);
    page_->Store(pv + kPvtiShift, 1, 1);
    page_->Store(pv + kPvtiFlags, 1, kPvclockTscStableBit);
  }
};

TEST_F(PvclockReaderTest, ConvertsTheTscThroughThePvclockPage) {
  hooks_.counter = 1300;  // 300 cycles after tsc_timestamp: 300 ns.
  EXPECT_EQ(Read(kClockMonotonic), ClockResult::Ok({10, 300}));
  const std::vector<std::string> expected = {
      "clock_data[0].seq",
      "clock_data[0].clock_mode",
      "pvti.version",
      "pvti.flags",
      "COUNTER",
      "pvti.tsc_timestamp",
      "pvti.tsc_to_system_mul",
      "pvti.tsc_shift",
      "pvti.system_time",
      "pvti.version",
      "clock_data[0].basetime[CLOCK_MONOTONIC].nsec",
      "clock_data[0].cycle_last",
      "clock_data[0].max_cycles",
      "clock_data[0].mult",
      "clock_data[0].shift",
      "clock_data[0].basetime[CLOCK_MONOTONIC].sec",
      "clock_data[0].seq",
  };
  EXPECT_EQ(Accesses(), expected);
}

TEST_F(PvclockReaderTest, NegativeShiftDividesFirst) {
  page_->Store(kPvclockPageOffset + kPvtiShift, 1, 0xff);  // -1
  page_->Store(kPvclockPageOffset + kPvtiMul, 4, 0xffffffffu);
  hooks_.counter = 1000 + 2000;  // 2000 >> 1 = 1000, x (2^32-1)/2^32.
  EXPECT_EQ(Read(kClockMonotonic), ClockResult::Ok({10, 999}));
}

TEST_F(PvclockReaderTest, ATscBeforeTheTimestampScalesAsZero) {
  // A > 4 GHz TSC: shift -2. 500 cycles before tsc_timestamp would wrap to
  // a delta of ~2^64, scaled to just under 2^62 ns: no negative-motion bit,
  // a time ~146 years ahead. The host's vDSO clamps the delta to 0: the
  // answer is the pvclock system_time, which is cycle_last here.
  page_->Store(kPvclockPageOffset + kPvtiShift, 1, 0xfe);  // -2
  page_->Store(kPvclockPageOffset + kPvtiMul, 4, 0xffffffffu);
  hooks_.counter = 500;
  EXPECT_EQ(Read(kClockMonotonic), ClockResult::Ok({10, 0}));
}

TEST_F(PvclockReaderTest, UnstableTscSendsTheCallToTheSyscall) {
  page_->Store(kPvclockPageOffset + kPvtiFlags, 1, 0);
  EXPECT_EQ(Read(kClockMonotonic), ClockResult::Error(-kEinval));
  EXPECT_EQ(hooks_.fallbacks(), std::vector<ClockId>{kClockMonotonic});
}

TEST_F(PvclockReaderTest, AVersionChangeRetriesThePvclockRead) {
  hooks_.counter = 1300;
  int version_loads = 0;
  hooks_.before_load = [&](size_t, uint32_t offset) {
    if (offset != kPvclockPageOffset + kPvtiVersion) return;
    // The hypervisor updates between the first read's begin and retry.
    if (++version_loads == 2) {
      page_->Store(kPvclockPageOffset + kPvtiVersion, 4, 4);
      page_->Store(kPvclockPageOffset + kPvtiSystemTime, 8, 5000000100);
    }
  };
  EXPECT_EQ(Read(kClockMonotonic), ClockResult::Ok({10, 400}));
  EXPECT_EQ(version_loads, 4);
}

TEST(NativeAccess, ReadsThePagePlainly) {
  auto page = VvarPage::Create();
  ASSERT_TRUE(page.ok());
  (*page)->Store(
      ClockDataOffset(kCsHresCoarse) + VcBasetimeSec(kClockRealtimeCoarse), 8,
      42);
  (*page)->Store(
      ClockDataOffset(kCsHresCoarse) + VcBasetimeNsec(kClockRealtimeCoarse), 8,
      7);
  NativeAccess native;
  EXPECT_EQ(
      upstream::ClockGettime(native, (*page)->data(), kClockRealtimeCoarse),
      ClockResult::Ok({42, 7}));
}

}  // namespace
}  // namespace vdsolab::vdso
