#include "timekeeper/vsyscall.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <vector>

#include "timekeeper/clocksource.h"
#include "vdso/datapage.h"

namespace vdsolab::timekeeper {
namespace {

using vdso::ClockDataOffset;
using vdso::kCsHresCoarse;
using vdso::kCsRaw;

// Keeps the timekeeper of every update_vsyscall() before passing it on (to
// `next`, if any), so that a test can build each update's store list.
class Recorder : public VsyscallSink {
 public:
  explicit Recorder(VsyscallSink* next = nullptr) : next_(next) {}
  void UpdateVsyscall(const Timekeeper& tk) override {
    updates.push_back(tk);
    if (next_ != nullptr) next_->UpdateVsyscall(tk);
  }
  std::vector<Timekeeper> updates;

 private:
  VsyscallSink* next_;
};

class VsyscallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto page = vdso::VvarPage::Create();
    ASSERT_TRUE(page.ok());
    page_ = std::move(*page);
    publisher_ = std::make_unique<VvarPublisher>(page_.get(), 1);
    recorder_ = std::make_unique<Recorder>(publisher_.get());
    auto cs = MakeTscClocksource(2600000);
    ASSERT_TRUE(cs.ok());
    tk_ = std::make_unique<Timekeeping>(*cs, 250, recorder_.get());
    tk_->Init(1000, {1700000000, 5}, {3, 0});
  }
  uint64_t PageU64(uint32_t offset) const { return page_->Load(offset, 8); }
  uint32_t PageU32(uint32_t offset) const {
    return static_cast<uint32_t>(page_->Load(offset, 4));
  }

  std::unique_ptr<vdso::VvarPage> page_;
  std::unique_ptr<VvarPublisher> publisher_;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<Timekeeping> tk_;
};

constexpr uint32_t kHresSeq = ClockDataOffset(kCsHresCoarse) + vdso::kVcSeq;
constexpr uint32_t kRawSeq = ClockDataOffset(kCsRaw) + vdso::kVcSeq;

TEST_F(VsyscallTest, UpdateIsBracketedBySeqBumpsWithBarriers) {
  ASSERT_EQ(recorder_->updates.size(), 1u);
  const std::vector<vdso::VvarStore> stores =
      BuildUpdateVsyscall(recorder_->updates[0], 0, 0, 1).stores;
  ASSERT_GE(stores.size(), 6u);
  // Begin: both seqs odd, then a write barrier before any data.
  EXPECT_EQ(stores[0], (vdso::VvarStore{kHresSeq, 4, 1, false}));
  EXPECT_EQ(stores[1], (vdso::VvarStore{kRawSeq, 4, 1, false}));
  EXPECT_TRUE(stores[2].wmb_before);
  // End: a write barrier, then both seqs even again.
  const size_t n = stores.size();
  EXPECT_EQ(stores[n - 2], (vdso::VvarStore{kHresSeq, 4, 2, true}));
  EXPECT_EQ(stores[n - 1], (vdso::VvarStore{kRawSeq, 4, 2, false}));
  // Every data store lies inside the bracket and none touches seq.
  for (size_t i = 2; i + 2 < n; ++i) {
    EXPECT_NE(stores[i].offset, kHresSeq);
    EXPECT_NE(stores[i].offset, kRawSeq);
  }
}

TEST_F(VsyscallTest, SecondUpdateContinuesTheSeq) {
  EXPECT_EQ(PageU32(kHresSeq), 2u);
  EXPECT_EQ(PageU32(kRawSeq), 2u);
  tk_->Advance(AdvanceMode::kTick, 1000 + tk_->timekeeper().cycle_interval);
  ASSERT_EQ(recorder_->updates.size(), 2u);
  EXPECT_EQ(publisher_->updates_published(), 2u);
  // The publisher went on from the page's seq 2: 3 during, 4 after.
  const std::vector<vdso::VvarStore> second =
      BuildUpdateVsyscall(recorder_->updates[1], 2, 2, 1).stores;
  EXPECT_EQ(second.front().value, 3u);
  EXPECT_EQ(second.back().value, 4u);
  EXPECT_EQ(PageU32(kHresSeq), 4u);
  EXPECT_EQ(PageU32(kRawSeq), 4u);
}

TEST(VvarPublisher, ContinuesFromTheSeqOnThePage) {
  auto page = vdso::VvarPage::Create();
  ASSERT_TRUE(page.ok());
  (*page)->Store(kHresSeq, 4, 8);
  (*page)->Store(kRawSeq, 4, 6);
  VvarPublisher publisher(page->get(), 1);
  auto cs = MakeTscClocksource(2600000);
  ASSERT_TRUE(cs.ok());
  Timekeeping tk(*cs, 250, &publisher);
  tk.Init(1000, {1700000000, 5}, {3, 0});
  EXPECT_EQ((*page)->Load(kHresSeq, 4), 10u);
  EXPECT_EQ((*page)->Load(kRawSeq, 4), 8u);
}

TEST_F(VsyscallTest, AppliedUpdateHoldsTheTimekeeperInKernelLayout) {
  const Timekeeper& tk = tk_->timekeeper();
  const uint32_t hres = ClockDataOffset(kCsHresCoarse);
  const uint32_t raw = ClockDataOffset(kCsRaw);
  EXPECT_EQ(PageU32(hres + vdso::kVcSeq), 2u);
  EXPECT_EQ(PageU32(hres + vdso::kVcClockMode),
            static_cast<uint32_t>(kVdsoClockmodeTsc));
  EXPECT_EQ(PageU64(hres + vdso::kVcCycleLast), 1000u);
  EXPECT_EQ(PageU64(hres + vdso::kVcMaxCycles), tk_->clocksource().max_cycles);
  EXPECT_EQ(PageU64(hres + vdso::kVcMask), ~0ull);
  EXPECT_EQ(PageU32(hres + vdso::kVcMult), tk.tkr_mono.mult);
  EXPECT_EQ(PageU32(hres + vdso::kVcShift), tk.tkr_mono.shift);
  EXPECT_EQ(PageU32(raw + vdso::kVcMult), tk.tkr_raw.mult);
  // REALTIME: shifted ns; the coarse clocks: plain ns.
  EXPECT_EQ(PageU64(hres + vdso::VcBasetimeSec(kClockRealtime)), 1700000000u);
  EXPECT_EQ(PageU64(hres + vdso::VcBasetimeNsec(kClockRealtime)),
            5ull << tk.tkr_mono.shift);
  EXPECT_EQ(PageU64(hres + vdso::VcBasetimeNsec(kClockRealtimeCoarse)), 5u);
  // MONOTONIC = 3 s after boot; MONOTONIC_COARSE likewise.
  EXPECT_EQ(PageU64(hres + vdso::VcBasetimeSec(kClockMonotonic)), 3u);
  EXPECT_EQ(PageU64(hres + vdso::VcBasetimeNsec(kClockMonotonic)), 0u);
  EXPECT_EQ(PageU64(hres + vdso::VcBasetimeSec(kClockMonotonicCoarse)), 3u);
  EXPECT_EQ(PageU64(raw + vdso::VcBasetimeSec(kClockMonotonicRaw)), 0u);
  EXPECT_EQ(PageU32(vdso::kHrtimerRes), 1u);
  // Bases the kernel never writes stay zero.
  EXPECT_EQ(PageU64(hres + vdso::VcBasetimeSec(kClockProcessCputimeId)), 0u);
  EXPECT_EQ(PageU64(raw + vdso::VcBasetimeSec(kClockRealtime)), 0u);
}

TEST(BuildUpdateVsyscall, ModeNoneLeavesTheHresPartsAlone) {
  auto cs = ClocksourceRegisterScale("acpi_pm", ClocksourceMask(24), 1, 3579545,
                                     kVdsoClockmodeNone, 200);
  ASSERT_TRUE(cs.ok());
  Recorder capture;
  Timekeeping tk(*cs, 100, &capture);
  tk.Init(0, {1000, 0}, {0, 0});
  ASSERT_EQ(capture.updates.size(), 1u);
  const vdso::VvarUpdate update =
      BuildUpdateVsyscall(capture.updates[0], 8, 8, 1);
  std::set<uint32_t> written;
  for (const auto& store : update.stores) written.insert(store.offset);
  const uint32_t hres = ClockDataOffset(kCsHresCoarse);
  EXPECT_TRUE(written.count(hres + vdso::kVcClockMode));
  EXPECT_TRUE(written.count(hres + vdso::VcBasetimeSec(kClockRealtime)));
  EXPECT_FALSE(written.count(hres + vdso::kVcCycleLast));
  EXPECT_FALSE(written.count(hres + vdso::VcBasetimeSec(kClockMonotonic)));
  EXPECT_EQ(update.stores.front().value, 9u);
}

}  // namespace
}  // namespace vdsolab::timekeeper
