#include "timekeeper/clocksource.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace vdsolab::timekeeper {
namespace {

// This project's development host (Linux 6.18, Firecracker) logged at boot:
//   clocksource: kvm-clock: mask: 0xffffffffffffffff max_cycles:
//   0x1cd42e4dffb, max_idle_ns: 881590591483 ns
// and its vvar page held mult 8388608, shift 23 for kvm-clock, which the
// kernel registers with clocksource_register_hz(&kvm_clock, NSEC_PER_SEC).
TEST(ClocksourceRegisterScale, ReproducesTheHostsKvmClockBootLine) {
  auto cs = ClocksourceRegisterScale("kvm-clock", ClocksourceMask(64), 1,
                                     1000000000u, kVdsoClockmodePvclock, 400);
  ASSERT_TRUE(cs.ok()) << cs.status();
  EXPECT_EQ(cs->mult, 8388608u);
  EXPECT_EQ(cs->shift, 23u);
  EXPECT_EQ(cs->max_cycles, 0x1cd42e4dffbull);
  EXPECT_EQ(cs->max_idle_ns, 881590591483ull);
}

// ../shared/docs/live-vvar-x86-6.18.md: a 6.18 TSC host published mult
// 6462365, shift 24, max_cycles 2571610966296 (about a 2.596 GHz TSC).
TEST(ClocksourceRegisterScale, ReproducesAPublishedTscMaxCycles) {
  bool found = false;
  for (uint32_t khz = 2595000; khz < 2598000; ++khz) {
    auto cs = MakeTscClocksource(khz);
    ASSERT_TRUE(cs.ok());
    if (cs->mult != 6462365u) continue;
    found = true;
    EXPECT_EQ(cs->shift, 24u);
    EXPECT_EQ(cs->max_cycles, 2571610966296ull);
  }
  EXPECT_TRUE(found) << "no tsc_khz near 2.596 GHz gives mult 6462365";
}

// 1 GHz with scale 1000 and scale 1 describe the same counter.
TEST(ClocksourceRegisterScale, KhzAndHzRegistrationAgree) {
  auto khz = ClocksourceRegisterScale("a", ClocksourceMask(64), 1000, 1000000u,
                                      kVdsoClockmodeTsc, 1);
  auto hz = ClocksourceRegisterScale("b", ClocksourceMask(64), 1, 1000000000u,
                                     kVdsoClockmodeTsc, 1);
  ASSERT_TRUE(khz.ok() && hz.ok());
  EXPECT_EQ(khz->mult, hz->mult);
  EXPECT_EQ(khz->shift, hz->shift);
}

TEST(ClocksourceRegisterScale, RejectsAZeroFrequency) {
  auto cs = ClocksourceRegisterScale("x", ClocksourceMask(64), 1000, 0,
                                     kVdsoClockmodeTsc, 1);
  EXPECT_FALSE(cs.ok());
  EXPECT_NE(cs.status().message().find("frequency"), std::string::npos);
}

TEST(ClocksourceRegisterScale, NarrowCountersAreLimitedByTheirMask) {
  // The ACPI PM timer: 24 bits at 3.579545 MHz wraps in under 5 s.
  auto pm = ClocksourceRegisterScale("acpi_pm", ClocksourceMask(24), 1,
                                     3579545u, kVdsoClockmodeNone, 200);
  ASSERT_TRUE(pm.ok());
  EXPECT_EQ(pm->max_cycles, ClocksourceMask(24));
  EXPECT_EQ(pm->max_raw_delta, 0xdffffdull);  // ~7/8 of the mask.
}

RC_GTEST_PROP(ClocksourceRegisterScale, TscMultShiftInvariants, ()) {
  // 1 MHz .. 10 GHz, biased to common TSC frequencies.
  const auto khz = *rc::gen::oneOf(
      rc::gen::inRange<uint32_t>(1000, 10000001),
      rc::gen::element<uint32_t>(1000000, 2400000, 2600000, 2596005, 3000000,
                                 4000000, 4294967));
  auto cs = MakeTscClocksource(khz);
  RC_ASSERT(cs.ok());
  RC_CLASSIFY(cs->shift >= 24, "shift >= 24");
  // NTP may steer mult by maxadj either way without leaving u32.
  RC_ASSERT(static_cast<uint64_t>(cs->mult) + cs->maxadj <= UINT32_MAX);
  RC_ASSERT(cs->mult > cs->maxadj);
  // max_cycles is the largest delta whose product with the fastest allowed
  // mult still fits in u64.
  const unsigned __int128 fastest = cs->mult + cs->maxadj;
  RC_ASSERT(static_cast<unsigned __int128>(cs->max_cycles) * fastest <= ~0ull);
  RC_ASSERT(static_cast<unsigned __int128>(cs->max_cycles + 1) * fastest >
            ~0ull);
  // The conversion is accurate to the rounding of mult: |error| <= 0.5 ulp,
  // i.e. |mult * khz - 1e6 << shift| <= khz / 2 + 1.
  const __int128 err = static_cast<__int128>(cs->mult) * khz -
                       (static_cast<__int128>(1000000) << cs->shift);
  RC_ASSERT((err < 0 ? -err : err) <= khz / 2 + 1);
  // The maxsec rule: ten minutes of counter fit mult, so even with the 11%
  // headroom taken out at least 600 / 1.11 s convert without overflow.
  RC_ASSERT(cs->max_cycles / khz / 1000 >= 540);
}

}  // namespace
}  // namespace vdsolab::timekeeper
