// Every layout's field table against offsets written out here from the
// kernel sources and the seeds' vgtod.h hunks (the struct at vvar+128;
// kernel-reference.md §9 for 4.16), and every writer's stores against its
// layout and the seq protocol.

#include "variants/gtod/layouts.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/clockid.h"
#include "testing/publish_bed.h"
#include "variants/gtod/gtod.h"
#include "variants/layout.h"
#include "vdso/datapage.h"

namespace vdsolab::variants::gtod {
namespace {

const Variant& GetVariant(std::string_view name) {
  return testing::VariantNamed(GtodVariants(), name);
}

using testing::PublishBed;
using testing::Tsc;

struct Want {
  std::string name;
  uint32_t offset;  // Within the struct; the struct is at vvar+128.
  int size;
  FieldKind kind = FieldKind::kData;
};

// `want`, then vCPU 0's pvclock page (vread_pvclock()) where the vvar
// area holds it, at vdso::kPvclockPageOffset.
void ExpectFields(const Layout& layout, const std::vector<Want>& want) {
  const std::vector<std::pair<std::string, uint32_t>> pvti = {
      {"pvti.version", vdso::kPvtiVersion},
      {"pvti.tsc_timestamp", vdso::kPvtiTscTimestamp},
      {"pvti.system_time", vdso::kPvtiSystemTime},
      {"pvti.tsc_to_system_mul", vdso::kPvtiMul},
      {"pvti.tsc_shift", vdso::kPvtiShift},
      {"pvti.flags", vdso::kPvtiFlags}};
  ASSERT_EQ(layout.fields().size(), want.size() + pvti.size()) << layout.name();
  for (size_t i = 0; i < pvti.size(); ++i) {
    const Field& got = layout.fields()[want.size() + i];
    EXPECT_EQ(got.name, pvti[i].first) << layout.name();
    EXPECT_EQ(got.offset, vdso::kPvclockPageOffset + pvti[i].second)
        << got.name;
  }
  for (size_t i = 0; i < want.size(); ++i) {
    const Field& got = layout.fields()[i];
    EXPECT_EQ(got.name, "gtod." + want[i].name) << layout.name() << " #" << i;
    EXPECT_EQ(got.offset, 128 + want[i].offset) << got.name;
    EXPECT_EQ(got.size, want[i].size) << got.name;
    EXPECT_EQ(got.kind, want[i].kind) << got.name;
  }
}

constexpr FieldKind kSeq = FieldKind::kSeq;
constexpr FieldKind kLast = FieldKind::kCycleLast;

// seq .. shift: the same in every layout.
std::vector<Want> Head() {
  return {
      {"seq", 0, 4, kSeq}, {"vclock_mode", 4, 4}, {"cycle_last", 8, 8, kLast},
      {"mask", 16, 8},     {"mult", 24, 4},       {"shift", 28, 4}};
}

// wall_time_snsec .. monotonic_time_coarse_nsec from `at`.
void AddTimes(std::vector<Want>& w, uint32_t at) {
  for (const char* name :
       {"wall_time_snsec", "wall_time_sec", "monotonic_time_sec",
        "monotonic_time_snsec", "wall_time_coarse_sec", "wall_time_coarse_nsec",
        "monotonic_time_coarse_sec", "monotonic_time_coarse_nsec"}) {
    w.push_back({name, at, 8});
    at += 8;
  }
}

TEST(GtodLayouts, Linux416MatchesTheKernelTable) {
  std::vector<Want> w = Head();
  AddTimes(w, 32);
  w.push_back({"tz_minuteswest", 96, 4});
  w.push_back({"tz_dsttime", 100, 4});
  ExpectFields(Layout416(), w);
}

TEST(GtodLayouts, VasDiasV1InsertsRawFieldsAsThePatchDoes) {
  std::vector<Want> w = Head();
  w.push_back({"raw_cycle_last", 32, 8, kLast});
  w.push_back({"raw_mask", 40, 8});
  w.push_back({"raw_mult", 48, 4});
  w.push_back({"raw_shift", 52, 4});
  AddTimes(w, 56);
  w.push_back({"monotonic_time_raw_sec", 120, 8});
  w.push_back({"monotonic_time_raw_nsec", 128, 8});
  w.push_back({"tz_minuteswest", 136, 4});
  w.push_back({"tz_dsttime", 140, 4});
  ExpectFields(LayoutVasDiasV1(), w);
}

TEST(GtodLayouts, RdtscpAddsHasRdtscpAndPadding) {
  std::vector<Want> w = Head();
  w.push_back({"raw_cycle_last", 32, 8, kLast});
  w.push_back({"raw_mask", 40, 8});
  w.push_back({"raw_mult", 48, 4});
  w.push_back({"raw_shift", 52, 4});
  w.push_back({"has_rdtscp", 56, 4});  // 60..63: padding.
  AddTimes(w, 64);
  w.push_back({"monotonic_time_raw_sec", 128, 8});
  w.push_back({"monotonic_time_raw_nsec", 136, 8});
  w.push_back({"tz_minuteswest", 144, 4});
  w.push_back({"tz_dsttime", 148, 4});
  ExpectFields(LayoutVasDiasRdtscp(), w);
}

TEST(GtodLayouts, TscCalibrationPutsTscKhzInThePadding) {
  std::vector<Want> w = Head();
  w.push_back({"raw_cycle_last", 32, 8, kLast});
  w.push_back({"raw_mask", 40, 8});
  w.push_back({"raw_mult", 48, 4});
  w.push_back({"raw_shift", 52, 4});
  w.push_back({"has_rdtscp", 56, 4});
  w.push_back({"tsc_khz", 60, 4});
  AddTimes(w, 64);
  w.push_back({"monotonic_time_raw_sec", 128, 8});
  w.push_back({"monotonic_time_raw_nsec", 136, 8});
  w.push_back({"tz_minuteswest", 144, 4});
  w.push_back({"tz_dsttime", 148, 4});
  ExpectFields(LayoutTscCalibration(), w);
}

TEST(GtodLayouts, Rc5HasOnlyRawMultShiftAndTheRawBase) {
  std::vector<Want> w = Head();
  w.push_back({"raw_mult", 32, 4});
  w.push_back({"raw_shift", 36, 4});
  AddTimes(w, 40);
  w.push_back({"monotonic_time_raw_sec", 104, 8});
  w.push_back({"monotonic_time_raw_nsec", 112, 8});
  w.push_back({"tz_minuteswest", 120, 4});
  w.push_back({"tz_dsttime", 124, 4});
  ExpectFields(LayoutRc5(), w);
}

TEST(GtodLayouts, TraceClockAppendsAfterTzDsttime) {
  std::vector<Want> w = Head();
  AddTimes(w, 32);
  w.push_back({"tz_minuteswest", 96, 4});
  w.push_back({"tz_dsttime", 100, 4});
  w.push_back({"trace_clock_is_sync", 104, 4});
  w.push_back({"cpu_khz", 112, 8});  // unsigned long: 8-aligned.
  ExpectFields(LayoutTraceClock(), w);
}

TEST(GtodLayouts, SverdlinIsThe420LayoutWithRawMultShift) {
  std::vector<Want> w = Head();
  w.push_back({"raw_mult", 32, 4});
  w.push_back({"raw_shift", 36, 4});
  for (ClockId clk = 0; clk <= kClockTai; ++clk) {
    const std::string b = absl::StrFormat("basetime[%s]", ClockName(clk));
    w.push_back({b + ".sec", 40 + 16 * static_cast<uint32_t>(clk), 8});
    w.push_back({b + ".nsec", 48 + 16 * static_cast<uint32_t>(clk), 8});
  }
  w.push_back({"tz_minuteswest", 232, 4});
  w.push_back({"tz_dsttime", 236, 4});
  ExpectFields(LayoutSverdlin(), w);
}

TEST(GtodLayouts, EveryVariantNamesItsLayout) {
  const std::vector<std::pair<std::string, const Layout*>> want = {
      {"x86-4.16", &Layout416()},
      {"vasdias-v1", &LayoutVasDiasV1()},
      {"vasdias-rdtscp", &LayoutVasDiasRdtscp()},
      {"vasdias-rc5-2", &LayoutRc5()},
      {"sverdlin-v2", &LayoutSverdlin()},
      {"tsc-calibration", &LayoutTscCalibration()},
      {"trace-clock", &LayoutTraceClock()},
      {"trace-clock-reviewed", &LayoutTraceClock()},
  };
  ASSERT_EQ(GtodVariants().size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(GtodVariants()[i]->name, want[i].first);
    EXPECT_EQ(GtodVariants()[i]->layout, want[i].second) << want[i].first;
  }
}

// The writer: seq+1, smp_wmb, data, smp_wmb, seq+2; every store exactly
// covers one layout field; the fields the era's update_vsyscall() writes.
class WriterTest : public ::testing::TestWithParam<const char*> {};

TEST_P(WriterTest, StoresFollowTheSeqProtocolAndLandOnFields) {
  const Variant& v = GetVariant(GetParam());
  PublishContext ctx;
  ctx.tsc_khz = 2600000;
  PublishBed bed(v, Tsc(2600000), ctx);
  bed.tk().Init(1000000, {1700000000, 5}, {2, 0});
  bed.tk().Advance(timekeeper::AdvanceMode::kTick,
                   1000000 + 2 * bed.state().cycle_interval);
  const std::vector<vdso::VvarStore>& s = bed.last_update().stores;
  ASSERT_GE(s.size(), 4u);
  const Layout& layout = *v.layout;
  // Update 2 (Init was update 1): seq 2 -> 3 ... 4.
  EXPECT_EQ(s.front().offset, 128u);
  EXPECT_EQ(s.front().value, 3u);
  EXPECT_FALSE(s.front().wmb_before);
  EXPECT_TRUE(layout.IsSeq(s.front().offset));
  EXPECT_TRUE(s[1].wmb_before);
  EXPECT_EQ(s.back().offset, 128u);
  EXPECT_EQ(s.back().value, 4u);
  EXPECT_TRUE(s.back().wmb_before);
  std::vector<std::string> written;
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    const Field* f = layout.FieldAt(s[i].offset);
    ASSERT_NE(f, nullptr) << s[i].offset;
    EXPECT_EQ(f->offset, s[i].offset) << f->name;
    EXPECT_EQ(f->size, s[i].size) << f->name;
    EXPECT_EQ(s[i].wmb_before, i == 1) << f->name;
    written.push_back(f->name);
  }
  // Every data field but tz_* (update_vsyscall_tz()), the pvclock page
  // (the hypervisor's) and, in 4.20, the bases no clock uses; each once.
  std::vector<std::string> want;
  for (const Field& f : layout.fields()) {
    if (f.kind == FieldKind::kSeq) continue;
    if (f.name.find("tz_") != std::string::npos) continue;
    if (f.name.rfind("pvti.", 0) == 0) continue;
    if (f.name.find("basetime[") != std::string::npos &&
        f.name.find("[CLOCK_REALTIME]") == std::string::npos &&
        f.name.find("[CLOCK_MONOTONIC]") == std::string::npos &&
        f.name.find("[CLOCK_MONOTONIC_RAW]") == std::string::npos &&
        f.name.find("[CLOCK_REALTIME_COARSE]") == std::string::npos &&
        f.name.find("[CLOCK_MONOTONIC_COARSE]") == std::string::npos &&
        f.name.find("[CLOCK_TAI]") == std::string::npos) {
      continue;
    }
    want.push_back(f.name);
  }
  std::vector<std::string> sorted = written;
  std::sort(sorted.begin(), sorted.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(sorted, want);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, WriterTest,
                         ::testing::Values("x86-4.16", "vasdias-v1",
                                           "vasdias-rdtscp", "vasdias-rc5-2",
                                           "sverdlin-v2", "tsc-calibration",
                                           "trace-clock",
                                           "trace-clock-reviewed"));

// Source order of the patches' stores (seed 000: the raw parameters right
// after shift, the raw base after the coarse fields).
TEST(WriterOrder, VasDiasRdtscpStoresInThePatchOrder) {
  const Variant& v = GetVariant("vasdias-rdtscp");
  PublishContext ctx;
  PublishBed bed(v, Tsc(2600000), ctx);
  bed.tk().Init(0, {1700000000, 0}, {});
  std::vector<std::string> names;
  for (const vdso::VvarStore& s : bed.last_update().stores) {
    names.push_back(v.layout->DescribeOffset(s.offset));
  }
  const std::vector<std::string> want = {
      "gtod.seq",
      "gtod.vclock_mode",
      "gtod.cycle_last",
      "gtod.mask",
      "gtod.mult",
      "gtod.shift",
      "gtod.raw_cycle_last",
      "gtod.raw_mask",
      "gtod.raw_mult",
      "gtod.raw_shift",
      "gtod.has_rdtscp",
      "gtod.wall_time_sec",
      "gtod.wall_time_snsec",
      "gtod.monotonic_time_sec",
      "gtod.monotonic_time_snsec",
      "gtod.wall_time_coarse_sec",
      "gtod.wall_time_coarse_nsec",
      "gtod.monotonic_time_coarse_sec",
      "gtod.monotonic_time_coarse_nsec",
      "gtod.monotonic_time_raw_sec",
      "gtod.monotonic_time_raw_nsec",
      "gtod.seq",
  };
  EXPECT_EQ(names, want);
}

}  // namespace
}  // namespace vdsolab::variants::gtod
