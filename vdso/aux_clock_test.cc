// The 6.17+ aux clocks end to end: the timekeeper model's aux timekeepers,
// vdso_time_update_aux() into aux_clock_data[], and the upstream reader's
// do_aux(), against the syscall (aux_get_timespec()).

#include <gtest/gtest.h>

#include <array>
#include <memory>

#include "testing/fixed_counter_hooks.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/vsyscall.h"
#include "vdso/access.h"
#include "vdso/upstream_reader.h"
#include "vdso/vvar_page.h"

namespace vdsolab::vdso {
namespace {

using timekeeper::AdvanceMode;
using timekeeper::Timekeeper;
using timekeeper::Timekeeping;

class AuxClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto page = VvarPage::Create();
    ASSERT_TRUE(page.ok());
    page_ = std::move(*page);
    publisher_ = std::make_unique<timekeeper::VvarPublisher>(page_.get(), 1);
    auto tsc = timekeeper::MakeTscClocksource(2600000);
    ASSERT_TRUE(tsc.ok());
    tk_ = std::make_unique<Timekeeping>(*tsc, 250, publisher_.get());
    tk_->Init(1000, {1764460800, 0}, {1, 0});
  }
  // The vDSO's and the syscall's answer at `counter`.
  std::pair<ClockResult, ClockResult> Both(ClockId clock, uint64_t counter) {
    for (int i = 0; i < kMaxAuxClocks; ++i) {
      aux_[static_cast<size_t>(i)] = tk_->aux_timekeeper(i);
    }
    timekeeper::SyscallContext ctx;
    ctx.aux_timekeepers = aux_.data();
    testing::FixedCounterHooks hooks(counter);
    hooks.UseSyscallOf(&tk_->timekeeper(), ctx);
    HookedAccess access(page_->data(), &hooks);
    const auto vdso = upstream::ClockGettime(access, page_->data(), clock);
    ctx.cycles = counter;
    return {vdso.value_or(ClockResult::Error(-1)),
            timekeeper::SysClockGettime(tk_->timekeeper(), clock, ctx)};
  }

  std::unique_ptr<VvarPage> page_;
  std::unique_ptr<timekeeper::VvarPublisher> publisher_;
  std::unique_ptr<Timekeeping> tk_;
  std::array<Timekeeper, kMaxAuxClocks> aux_;
};

int64_t Ns(const Timespec64& t) { return t.tv_sec * 1000000000 + t.tv_nsec; }

TEST_F(AuxClockTest, TheVdsoReadsAnEnabledAuxClockWithinANanosecond) {
  tk_->EnableAux(3, 1000);
  ASSERT_EQ(tk_->AuxSetTime(3, {1700000000, 999999999}, 5000), 0);
  timekeeper::Timex txc;
  txc.modes = timekeeper::kAdjFrequency;
  txc.freq = int64_t{321} << 16;
  ASSERT_GE(tk_->AuxAdjtimex(3, &txc, 7000), 0);
  uint64_t c = 7000;
  int below = 0;
  for (int tick = 1; tick <= 500; ++tick) {
    c += 10400000;
    tk_->Advance(AdvanceMode::kTick, c);
    for (uint64_t probe : {c, c + 1, c + 5200000, c + 10399999}) {
      const auto [vdso, sys] = Both(kClockAux + 3, probe);
      ASSERT_EQ(vdso.ret, 0);
      ASSERT_EQ(sys.ret, 0);
      // vdso_time_update_aux() drops xtime_nsec's sub-ns bits: the vDSO
      // is the syscall's value or 1 ns below it, never above.
      const int64_t d = Ns(sys.ts) - Ns(vdso.ts);
      ASSERT_GE(d, 0) << probe;
      ASSERT_LE(d, 1) << probe;
      below += d == 1;
    }
  }
  EXPECT_GT(below, 0);  // The truncation shows.
}

TEST_F(AuxClockTest, ADisabledAuxClockFallsBackToENodev) {
  tk_->EnableAux(0, 1000);
  tk_->DisableAux(0);
  const auto [vdso, sys] = Both(kClockAux, 20000);
  EXPECT_EQ(vdso, ClockResult::Error(-kEnodev));
  EXPECT_EQ(sys, ClockResult::Error(-kEnodev));
  // Never enabled: the same answer.
  EXPECT_EQ(Both(kClockAux + 7, 20000).second, ClockResult::Error(-kEnodev));
}

TEST_F(AuxClockTest, TheCoreClocksAreUntouched) {
  tk_->EnableAux(1, 1000);
  const auto [vdso, sys] = Both(kClockMonotonic, 30000);
  EXPECT_EQ(vdso, sys);
  EXPECT_EQ(page_->Load(AuxClockDataOffset(1) + kVcSeq, 4), 2u);
  EXPECT_EQ(page_->Load(AuxClockDataOffset(0) + kVcSeq, 4), 0u);
}

}  // namespace
}  // namespace vdsolab::vdso
