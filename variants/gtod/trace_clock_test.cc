// CLOCK_TRACE (seed 002) in the vDSO and in the variant's syscall, from the
// RFC's formula written out: at 2.6 GHz the page holds cpu_khz >> 10 =
// 2600000 / 1024 = 2539, USEC_PER_SEC / 2539 = 393, and the clock is
// (cycles * 393) >> 10 in 64-bit arithmetic.

#include "variants/gtod/trace_clock.h"

#include <gtest/gtest.h>

#include <string>

#include "common/clock_result.h"
#include "testing/publish_bed.h"
#include "variants/gtod/gtod.h"

namespace vdsolab::variants::gtod {
namespace {

const Variant& GetVariant(std::string_view name) {
  return testing::VariantNamed(GtodVariants(), name);
}

using testing::PublishBed;
using testing::Tsc;

uint64_t Trace2600(uint64_t cycles) { return (cycles * 393) >> 10; }

class TraceClockTest : public ::testing::TestWithParam<const char*> {
 protected:
  bool reviewed() const {
    return std::string(GetParam()).find("reviewed") != std::string::npos;
  }
  // The RFC puts the count in tv_nsec (tv_sec 0); the review stores it over
  // the timespec, which on x86-64 is tv_sec (tv_nsec: the caller's 0).
  ClockResult Encoded(uint64_t count) const {
    const int64_t c = static_cast<int64_t>(count);
    return ClockResult::Ok(reviewed() ? Timespec64{c, 0} : Timespec64{0, c});
  }
};

TEST_P(TraceClockTest, VdsoAndSyscallFollowTheFormula) {
  const Variant& v = GetVariant(GetParam());
  PublishContext ctx;
  ctx.tsc_khz = 2600000;
  ctx.counters_synced = true;
  PublishBed bed(v, Tsc(2600000), ctx);
  bed.tk().Init(1000, {1700000000, 0}, {});
  EXPECT_EQ(bed.page().Load(128 + 112, 8), 2539u);  // gtod->cpu_khz
  EXPECT_EQ(bed.page().Load(128 + 104, 4), 1u);     // trace_clock_is_sync
  for (uint64_t c : {uint64_t{0}, uint64_t{1}, uint64_t{2600000000},
                     uint64_t{5000000000000}, uint64_t{1} << 60}) {
    const ClockResult want = Encoded(Trace2600(c));
    EXPECT_EQ(bed.Read(kClockTrace, c), want) << c;
    EXPECT_TRUE(bed.hooks().fallbacks().empty());
    EXPECT_EQ(bed.hooks().counter_reads(),
              std::vector<vdso::CounterRead>{vdso::CounterRead::kOrdered});
    EXPECT_EQ(v.syscall(kClockTrace, c, ctx), want) << c;
  }
  // 2^60 * 393 wraps: 393 = 24 * 16 + 9, so the u64 product is 9 * 2^60.
  EXPECT_EQ(Trace2600(uint64_t{1} << 60), uint64_t{9} << 50);
  // One second of cycles: 393/1024 ns per cycle, not 1/2.6 (the factor is
  // truncated twice): 997.8 ms.
  EXPECT_EQ(Trace2600(2600000000), 997851562u);
}

TEST_P(TraceClockTest, UnsyncedCountersGiveEperm) {
  const Variant& v = GetVariant(GetParam());
  PublishContext ctx;
  ctx.tsc_khz = 2600000;
  ctx.counters_synced = false;
  PublishBed bed(v, Tsc(2600000), ctx);
  bed.tk().Init(1000, {1700000000, 0}, {});
  EXPECT_EQ(bed.page().Load(128 + 104, 4), 0u);
  EXPECT_EQ(bed.Read(kClockTrace, 5000), ClockResult::Error(-kEperm));
  EXPECT_TRUE(
      bed.hooks().counter_reads().empty());  // Refused before the counter.
  EXPECT_EQ(v.syscall(kClockTrace, 5000, ctx), ClockResult::Error(-kEperm));
}

TEST_P(TraceClockTest, ScaledKhzOfZeroIsEinvalNotADivideFault) {
  const Variant& v = GetVariant(GetParam());
  PublishContext ctx;
  ctx.tsc_khz = 1000;  // 1000 >> 10 == 0.
  PublishBed bed(v, Tsc(1000), ctx);
  bed.tk().Init(1000, {1700000000, 0}, {});
  EXPECT_EQ(bed.Read(kClockTrace, 5000), ClockResult::Error(-kEinval));
  EXPECT_EQ(v.syscall(kClockTrace, 5000, ctx), ClockResult::Error(-kEinval));
}

TEST_P(TraceClockTest, RecordDefinesClockTraceWithItsSyscall) {
  const Variant& v = GetVariant(GetParam());
  ASSERT_EQ(v.own_clocks.size(), 1u);
  EXPECT_EQ(v.own_clocks[0].id, 32);
  EXPECT_EQ(v.own_clocks[0].name, "CLOCK_TRACE");
  EXPECT_EQ(v.own_clocks[0].kind, ClockKind::kVariantSyscall);
  EXPECT_FALSE(v.own_clocks_only);
  EXPECT_EQ(v.counter_read, vdso::CounterRead::kOrdered);
  ASSERT_NE(v.syscall, nullptr);
  PublishContext ctx;
  ctx.tsc_khz = 2600000;
  EXPECT_EQ(v.syscall(kClockMonotonic, 5000, ctx),
            ClockResult::Error(-kEinval));
}

INSTANTIATE_TEST_SUITE_P(Both, TraceClockTest,
                         ::testing::Values("trace-clock",
                                           "trace-clock-reviewed"));

TEST(TraceClock, TheTwoEncodingsCarryTheSameCount) {
  PublishContext ctx;
  ctx.tsc_khz = 3000000;  // >> 10: 2929; 10^6 / 2929 = 341.
  const uint64_t c = 123456789012345;
  const ClockResult rfc =
      GetVariant("trace-clock").syscall(kClockTrace, c, ctx);
  const ClockResult rev =
      GetVariant("trace-clock-reviewed").syscall(kClockTrace, c, ctx);
  const int64_t count = static_cast<int64_t>((c * 341) >> 10);
  EXPECT_EQ(rfc, ClockResult::Ok({0, count}));
  EXPECT_EQ(rev, ClockResult::Ok({count, 0}));
}

}  // namespace
}  // namespace vdsolab::variants::gtod
