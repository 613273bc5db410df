#include "vdso/vvar_page.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "vdso/datapage.h"

namespace vdsolab::vdso {
namespace {

TEST(VvarPage, IsPageAlignedAndZeroed) {
  auto page = VvarPage::Create();
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*page)->data()) % kPageSize, 0u);
  for (size_t i = 0; i < (*page)->size(); ++i) {
    if (VvarUnreadablePage(i) != nullptr) continue;  // Faults, as the kernel's.
    ASSERT_EQ((*page)->data()[i], 0) << "byte " << i;
  }
}

TEST(VvarPage, StoresAreLittleEndianAtTheirOffset) {
  auto page = VvarPage::Create();
  ASSERT_TRUE(page.ok());
  (*page)->Store(16, 8, 0x0102030405060708ull);
  (*page)->Store(4, 4, 0xa0b0c0d0u);
  const uint8_t* p = (*page)->data();
  EXPECT_EQ(p[16], 0x08);
  EXPECT_EQ(p[23], 0x01);
  EXPECT_EQ(p[4], 0xd0);
  EXPECT_EQ(p[8], 0x00);  // Neighbours untouched.
  EXPECT_EQ((*page)->Load(16, 8), 0x0102030405060708ull);
}

TEST(VvarPage, ApplyRunsStoresInOrder) {
  auto page = VvarPage::Create();
  ASSERT_TRUE(page.ok());
  VvarUpdate update;
  update.stores = {{0, 4, 1, false}, {0, 4, 7, false}, {8, 8, 9, true}};
  (*page)->Apply(update);
  EXPECT_EQ((*page)->Load(0, 4), 7u);  // The later store wins.
  EXPECT_EQ((*page)->Load(8, 8), 9u);
}

// Another mapping of the page's memfd (what the compiled vDSO's child
// process makes) sees every store at once, and Find() knows the page by its
// data pointer while it lives.
TEST(VvarPage, IsSharedThroughItsMemfdAndFoundByData) {
  auto page = VvarPage::Create();
  ASSERT_TRUE(page.ok());
  auto other = VvarPage::Create();
  ASSERT_TRUE(other.ok());
  EXPECT_NE((*page)->id(), (*other)->id());
  EXPECT_EQ(VvarPage::Find((*page)->data()), page->get());
  EXPECT_EQ(VvarPage::Find((*other)->data()), other->get());
  void* view = mmap(nullptr, VvarPage::kPages * kPageSize, PROT_READ,
                    MAP_SHARED, (*page)->fd(), 0);
  ASSERT_NE(view, MAP_FAILED);
  (*page)->Store(kPvclockPageOffset + 8, 8, 0x1122334455667788ull);
  uint64_t seen = 0;
  std::memcpy(&seen, static_cast<uint8_t*>(view) + kPvclockPageOffset + 8, 8);
  EXPECT_EQ(seen, 0x1122334455667788ull);
  munmap(view, VvarPage::kPages * kPageSize);
  const uint8_t* data = (*page)->data();
  page->reset();
  EXPECT_EQ(VvarPage::Find(data), nullptr);
}

// Whether the process may read the byte at `p`: write(2) from it to a pipe
// fails with EFAULT, without a signal, where it may not.
bool Readable(const uint8_t* p) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const bool ok = write(fds[1], p, 1) == 1;
  close(fds[0]);
  close(fds[1]);
  return ok;
}

// The readers' area lies between two unmapped guards: a load past it
// faults (and a fault there is named by its offset), as past the kernel's
// vvar and vDSO mappings, instead of reading what happens to be mapped
// next to it.
TEST(VvarPage, TheReadersAreaLiesBetweenGuards) {
  constexpr int64_t kGuard = VvarPage::kGuardBytes;
  // One page at a time: two live pages may lie guard to guard.
  for (const bool with_timens : {false, true}) {
    auto page =
        with_timens ? VvarPage::CreateWithTimensView() : VvarPage::Create();
    ASSERT_TRUE(page.ok()) << page.status();
    const size_t area = (with_timens ? 2 : 1) * (*page)->size();
    const uint8_t* start = (*page)->data();
    EXPECT_TRUE(Readable(start));
    EXPECT_TRUE(Readable(start + 2 * kPageSize));
    EXPECT_TRUE(Readable(start + kPvclockPageOffset + kPageSize - 1));
    for (int64_t off : {int64_t{-1}, -kGuard, static_cast<int64_t>(area),
                        static_cast<int64_t>(area) + kGuard - 1}) {
      EXPECT_FALSE(Readable(start + off)) << off;
      const auto at = reinterpret_cast<uintptr_t>(start + off);
      ASSERT_TRUE(VvarPage::OffsetInGuardedArea(at).has_value()) << off;
      EXPECT_EQ(*VvarPage::OffsetInGuardedArea(at), off);
    }
    EXPECT_FALSE(VvarPage::OffsetInGuardedArea(
                     reinterpret_cast<uintptr_t>(start) - kGuard - 1)
                     .has_value());
    EXPECT_FALSE(VvarPage::OffsetInGuardedArea(
                     reinterpret_cast<uintptr_t>(start) + area + kGuard)
                     .has_value());
  }
}

// The pages the kernel leaves unmapped for a task outside a time namespace
// (SIGBUS there) cannot be read here either; in a namespace task's view
// page 1 is the real time page.
TEST(VvarPage, PagesTheKernelDoesNotMapAreUnreadable) {
  auto page = VvarPage::CreateWithTimensView();
  ASSERT_TRUE(page.ok()) << page.status();
  for (const uint8_t* start : {(*page)->data(), (*page)->timens_data()}) {
    const bool view = start == (*page)->timens_data();
    for (size_t p = 0; p < VvarPage::kPages; ++p) {
      const bool want = p == 0 || p == 2 || p == 4 || (view && p == 1);
      EXPECT_EQ(Readable(start + p * kPageSize), want)
          << (view ? "view " : "") << "page " << p;
      EXPECT_EQ(Readable(start + (p + 1) * kPageSize - 1), want)
          << (view ? "view " : "") << "page " << p << "'s end";
    }
  }
  auto plain = VvarPage::Create();
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(Readable((*plain)->data()));
  EXPECT_FALSE(Readable((*plain)->data() + kPageSize));
  EXPECT_FALSE(Readable((*plain)->data() + 3 * kPageSize));
  EXPECT_FALSE(Readable((*plain)->data() + kHvclockPageOffset));
}

TEST(DescribeVvarOffset, NamesFieldsOfTheKernelLayout) {
  EXPECT_EQ(DescribeVvarOffset(0), "clock_data[0].seq");
  EXPECT_EQ(DescribeVvarOffset(ClockDataOffset(kCsRaw) + kVcMult),
            "clock_data[1].mult");
  EXPECT_EQ(DescribeVvarOffset(VcBasetimeNsec(kClockMonotonic)),
            "clock_data[0].basetime[CLOCK_MONOTONIC].nsec");
  EXPECT_EQ(DescribeVvarOffset(AuxClockDataOffset(3) + kVcSeq),
            "aux_clock_data[3].seq");
  EXPECT_EQ(DescribeVvarOffset(kHrtimerRes), "hrtimer_res");
  EXPECT_EQ(DescribeVvarStore({kHrtimerRes, 4, 1, true}),
            "wmb; hrtimer_res = 0x1 (u32)");
}

}  // namespace
}  // namespace vdsolab::vdso
