// proc_timens_set_offset()'s domain (kernel/time/namespace.c, 6.12), what
// clock_gettime() adds in a namespace, and the namespace's page
// (timens_setup_vdso_data()). Expected values are the kernel's, by hand.

#include "timekeeper/timens.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "timekeeper/vsyscall.h"
#include "vdso/datapage.h"
#include "vdso/vvar_page.h"

namespace vdsolab::timekeeper {
namespace {

// KTIME_SEC_MAX = KTIME_MAX / NSEC_PER_SEC = 9223372036 s.
constexpr int64_t kSecMax = 9223372036;

int Set(ClockId clock, Timespec64 val, Timespec64 now, TimensOffsets* o) {
  return TimensSetOffset(clock, val, now, o);
}

TEST(TimensSetOffset, OnlyMonotonicAndBoottimeHaveOffsets) {
  TimensOffsets o;
  for (ClockId c : {kClockRealtime, kClockMonotonicRaw, kClockMonotonicCoarse,
                    kClockBoottimeAlarm, kClockTai, kClockAux, -1}) {
    EXPECT_EQ(Set(c, {5, 0}, {100, 0}, &o), -22) << c;
  }
  EXPECT_EQ(o, TimensOffsets{});
  EXPECT_EQ(Set(kClockMonotonic, {5, 1}, {100, 0}, &o), 0);
  EXPECT_EQ(Set(kClockBoottime, {-7, 2}, {100, 0}, &o), 0);
  EXPECT_EQ(o.monotonic, (Timespec64{5, 1}));
  EXPECT_EQ(o.boottime, (Timespec64{-7, 2}));
}

TEST(TimensSetOffset, NsecOutsideASecondIsEinvalBeforeRange) {
  TimensOffsets o;
  EXPECT_EQ(Set(kClockMonotonic, {0, -1}, {100, 0}, &o), -22);
  EXPECT_EQ(Set(kClockMonotonic, {0, 1000000000}, {100, 0}, &o), -22);
  // -EINVAL wins over a seconds value that is also out of range.
  EXPECT_EQ(Set(kClockBoottime, {kSecMax + 1, 1000000000}, {100, 0}, &o), -22);
  EXPECT_EQ(Set(kClockMonotonic, {0, 999999999}, {100, 0}, &o), 0);
  EXPECT_EQ(o.monotonic, (Timespec64{0, 999999999}));
}

TEST(TimensSetOffset, RangeIsErangeAndLeavesTheOffsetAlone) {
  TimensOffsets o;
  ASSERT_EQ(Set(kClockMonotonic, {3, 0}, {100, 0}, &o), 0);
  // |sec| > KTIME_SEC_MAX.
  EXPECT_EQ(Set(kClockMonotonic, {kSecMax + 1, 0}, {0, 0}, &o), -34);
  EXPECT_EQ(Set(kClockMonotonic, {-kSecMax - 1, 0}, {0, 0}, &o), -34);
  // The shifted clock may not be negative now...
  EXPECT_EQ(Set(kClockMonotonic, {-101, 0}, {100, 0}, &o), -34);
  EXPECT_EQ(Set(kClockMonotonic, {-101, 500000000}, {100, 400000000}, &o),
            -34);  // 99.9 s - 100.5 s
  EXPECT_EQ(Set(kClockMonotonic, {-101, 600000000}, {100, 400000000}, &o),
            0);  // exactly 0
  EXPECT_EQ(o.monotonic, (Timespec64{-101, 600000000}));
  // ...nor beyond KTIME_SEC_MAX / 2 = 4611686018 s.
  EXPECT_EQ(Set(kClockBoottime, {4611686018 - 100, 999999999}, {100, 0}, &o),
            0);
  EXPECT_EQ(Set(kClockBoottime, {4611686018 - 100, 0}, {100, 999999999}, &o),
            0);
  EXPECT_EQ(Set(kClockBoottime, {4611686018 - 100, 0}, {101, 0}, &o), -34);
  EXPECT_EQ(Set(kClockBoottime, {4611686018 - 100, 1}, {100, 999999999}, &o),
            -34);  // the nsec carry crosses the limit
  EXPECT_EQ(o.boottime, (Timespec64{4611686018 - 100, 0}));
}

TEST(TimensAdd, ShiftsTheMonotonicAndBoottimeFamiliesOnly) {
  const TimensOffsets o{{-10, 600000000}, {86400, 999999999}};
  const Timespec64 t{100, 500000000};
  EXPECT_EQ(TimensAdd(kClockMonotonic, o, t), (Timespec64{91, 100000000}));
  EXPECT_EQ(TimensAdd(kClockMonotonicRaw, o, t), (Timespec64{91, 100000000}));
  EXPECT_EQ(TimensAdd(kClockMonotonicCoarse, o, t),
            (Timespec64{91, 100000000}));
  EXPECT_EQ(TimensAdd(kClockBoottime, o, t), (Timespec64{86501, 499999999}));
  EXPECT_EQ(TimensAdd(kClockBoottimeAlarm, o, t),
            (Timespec64{86501, 499999999}));
  for (ClockId c : {kClockRealtime, kClockRealtimeCoarse, kClockTai,
                    kClockRealtimeAlarm, kClockAux + 2}) {
    EXPECT_EQ(TimensAdd(c, o, t), t) << c;
  }
}

TEST(BuildTimensPage, EveryRecordDivertsAndCarriesItsClocksOffset) {
  const TimensOffsets o{{-3, 7}, {1000, 999999999}};
  std::map<uint32_t, std::pair<uint8_t, uint64_t>> stores;
  for (const vdso::VvarStore& s : BuildTimensPage(o).stores) {
    stores[s.offset] = {s.size, s.value};
  }
  auto at = [&](uint32_t off) {
    auto it = stores.find(off);
    return it == stores.end() ? std::pair<uint8_t, uint64_t>{0, 0} : it->second;
  };
  std::vector<uint32_t> records;
  for (int cs = 0; cs < vdso::kCsBases; ++cs) {
    records.push_back(vdso::ClockDataOffset(cs));
  }
  for (int i = 0; i < kMaxAuxClocks; ++i) {
    records.push_back(vdso::AuxClockDataOffset(i));
  }
  for (uint32_t vc : records) {
    EXPECT_EQ(at(vc + vdso::kVcSeq), (std::pair<uint8_t, uint64_t>{4, 1}));
    EXPECT_EQ(at(vc + vdso::kVcClockMode),
              (std::pair<uint8_t, uint64_t>{4, 0x7fffffff}));
    // offset[] shares the union with basetime[]: s64 sec, u64 nsec.
    for (ClockId c :
         {kClockMonotonic, kClockMonotonicRaw, kClockMonotonicCoarse}) {
      EXPECT_EQ(at(vc + vdso::VcOffsetSec(c)).second, uint64_t(-3));
      EXPECT_EQ(at(vc + vdso::VcOffsetNsec(c)).second, 7u);
    }
    for (ClockId c : {kClockBoottime, kClockBoottimeAlarm}) {
      EXPECT_EQ(at(vc + vdso::VcOffsetSec(c)).second, 1000u);
      EXPECT_EQ(at(vc + vdso::VcOffsetNsec(c)).second, 999999999u);
    }
    EXPECT_EQ(at(vc + vdso::VcOffsetSec(kClockRealtime)).second, 0u);
    EXPECT_EQ(at(vc + vdso::VcOffsetSec(kClockTai)).second, 0u);
  }
  // Without aux records (before 6.17) only clock_data[] is written.
  for (const vdso::VvarStore& s : BuildTimensPage(o, false).stores) {
    EXPECT_LT(s.offset, vdso::AuxClockDataOffset(0));
  }
}

TEST(TimensView, StoresToTheAreaShowThroughTheNamespaceView) {
  auto page = vdso::VvarPage::CreateWithTimensView();
  ASSERT_TRUE(page.ok());
  const uint8_t* view = (*page)->timens_data();
  ASSERT_NE(view, nullptr);
  (*page)->Store(vdso::kVcSeq, 4, 42);
  (*page)->StoreTimens(vdso::kVcSeq, 4, 1);
  uint32_t seen = 0;
  std::memcpy(&seen, view + vdso::kPageSize + vdso::kVcSeq, 4);
  EXPECT_EQ(seen, 42u);
  std::memcpy(&seen, view + vdso::kVcSeq, 4);
  EXPECT_EQ(seen, 1u);
  EXPECT_EQ((*page)->Load(vdso::kVcSeq, 4), 42u);
  EXPECT_EQ(vdso::VvarPage::Find((*page)->data()), page->get());
}

}  // namespace
}  // namespace vdsolab::timekeeper
