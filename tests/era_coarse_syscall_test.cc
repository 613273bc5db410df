// The syscall a variant falls back to is its era's kernel's: before 6.15
// ktime_get_coarse_*() read tk_xtime() (xtime_nsec >> shift), not
// coarse_nsec. A 6.12 tree patched to send its coarse clocks to the
// syscall was judged against 6.15's coarse clock (a second ahead in
// scenarios/coarse-step-back.toml) and failed monotonic and cross_clock.

#include <gtest/gtest.h>

#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeper.h"
#include "timekeeper/timens.h"
#include "variants/registry.h"
#include "variants/upstream.h"
#include "variants/variant.h"

namespace vdsolab::variants {
namespace {

// xtime_nsec >> shift is 7 ns, coarse_nsec 5 ns: the two eras differ.
timekeeper::Timekeeper State() {
  timekeeper::Timekeeper tk{};
  tk.xtime_sec = 100;
  tk.tkr_mono.shift = 8;
  tk.tkr_mono.xtime_nsec = uint64_t{7} << 8;
  tk.coarse_nsec = 5;
  tk.wall_to_monotonic = Timespec64{-90, 0};
  return tk;
}

TEST(EraCoarseSyscall, BeforeCoarseNsecTheSyscallReadsXtime) {
  absl::StatusOr<const Variant*> v610 = FindVariant("6.10");
  ASSERT_TRUE(v610.ok()) << v610.status();
  ASSERT_FALSE((*v610)->semantics.coarse_from_coarse_nsec);
  const timekeeper::Timekeeper tk = State();
  const timekeeper::SyscallContext sc;
  EXPECT_EQ(VariantSyscall(**v610, {}, tk, kClockRealtimeCoarse, sc),
            ClockResult::Ok(Timespec64{100, 7}));
  EXPECT_EQ(VariantSyscall(**v610, {}, tk, kClockMonotonicCoarse, sc),
            ClockResult::Ok(Timespec64{10, 7}));
  // 6.15+ (upstream): coarse_nsec.
  EXPECT_EQ(VariantSyscall(UpstreamVariant(), {}, tk, kClockRealtimeCoarse, sc),
            ClockResult::Ok(Timespec64{100, 5}));
}

TEST(EraCoarseSyscall, ATimeNamespaceStillAddsItsOffsets) {
  absl::StatusOr<const Variant*> v610 = FindVariant("6.10");
  ASSERT_TRUE(v610.ok()) << v610.status();
  const timekeeper::Timekeeper tk = State();
  const timekeeper::TimensOffsets offsets{Timespec64{1000, 0},
                                          Timespec64{0, 0}};
  timekeeper::SyscallContext sc;
  sc.timens = &offsets;
  EXPECT_EQ(VariantSyscall(**v610, {}, tk, kClockMonotonicCoarse, sc),
            ClockResult::Ok(Timespec64{1010, 7}));
}

}  // namespace
}  // namespace vdsolab::variants
