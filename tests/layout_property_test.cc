// Every variant's layout (variants/layout.h, the page described as data)
// against what its writer and reader actually touch: on generated
// timekeeper histories, every store of every update and every load of
// every clock's read falls inside one field of the layout, and the layout
// names it as that field (DescribeOffset). The simulation's load
// observers, traces, replays and `inspect` all see the page through the
// layout; a field missing, misplaced or misnamed there misleads them
// without changing any clock's value, so no reader property would notice.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/timespec.h"
#include "testing/publish_bed.h"
#include "tests/generators.h"
#include "timekeeper/timekeeping.h"
#include "variants/layout.h"
#include "variants/registry.h"
#include "variants/variant.h"

namespace vdsolab {
namespace {

// "" if [offset, offset + size) lies in one field named as DescribeOffset
// names it, else what is wrong.
std::string Covered(const variants::Layout& layout, uint32_t offset,
                    uint32_t size) {
  const variants::Field* f = layout.FieldAt(offset);
  if (f == nullptr) {
    return absl::StrFormat("offset %#x is in no field of %s", offset,
                           layout.name());
  }
  if (offset + size > f->offset + f->size) {
    return absl::StrFormat("%d bytes at %#x run past the end of %s", size,
                           offset, f->name);
  }
  const std::string want =
      offset == f->offset
          ? f->name
          : absl::StrFormat("%s+%d", f->name, offset - f->offset);
  const std::string got = layout.DescribeOffset(offset);
  if (got != want) {
    return absl::StrFormat("DescribeOffset(%#x) = \"%s\", the field is %s",
                           offset, got, want);
  }
  return "";
}

// Every clock mode field of a layout ("...clock_mode", "...vclock_mode").
std::vector<uint32_t> ClockModes(const variants::Layout& layout) {
  std::vector<uint32_t> modes;
  for (const variants::Field& f : layout.fields()) {
    const std::string& n = f.name;
    if (n.size() >= 10 && n.compare(n.size() - 10, 10, "clock_mode") == 0) {
      modes.push_back(f.offset);
    }
  }
  return modes;
}

constexpr uint32_t kKhz = 2600000;

// `v`'s writer on a 2.6 GHz TSC, booted at counter `boot` with a drawn
// REALTIME and `boot_offset_sec` of boot offset.
std::unique_ptr<testing::PublishBed> BootBed(const variants::Variant& v,
                                             uint64_t boot,
                                             int64_t boot_offset_sec) {
  variants::PublishContext ctx;
  ctx.tsc_khz = kKhz;
  ctx.boot_counter = boot;
  auto bed = std::make_unique<testing::PublishBed>(v, testing::Tsc(kKhz), ctx);
  bed->tk().Init(boot, Timespec64{*rc::gen::inRange<int64_t>(0, 4000000000), 0},
                 Timespec64{boot_offset_sec, 0});
  return bed;
}

RC_GTEST_PROP(LayoutProperty, WritesAndReadsStayInNamedFields, ()) {
  const std::vector<const variants::Variant*> all = variants::AllVariants();
  const variants::Variant& v =
      **rc::gen::elementOf(all).as("variant (index into AllVariants)");
  RC_TAG(std::string(v.name));
  // Every built-in variant has one: the simulation's load observers,
  // traces and replays read the page through it.
  RC_ASSERT(v.layout != nullptr);
  const variants::Layout& layout = *v.layout;
  // Fields sorted by offset and disjoint: FieldAt() finds one field per
  // byte only if no two overlap.
  const std::vector<variants::Field>& fields = layout.fields();
  for (size_t i = 1; i < fields.size(); ++i) {
    if (fields[i - 1].offset + fields[i - 1].size > fields[i].offset) {
      RC_FAIL(absl::StrFormat("%s: %s overlaps %s", layout.name(),
                              fields[i - 1].name, fields[i].name));
    }
  }
  const uint64_t boot = *testing::GenCounterStart().as("boot counter");
  std::unique_ptr<testing::PublishBed> booted =
      BootBed(v, boot, *rc::gen::inRange<int64_t>(0, 100));
  testing::PublishBed& bed = *booted;
  uint64_t now = boot;
  const int ticks = *rc::gen::inRange(1, 6);
  std::vector<vdso::VvarStore> stores;
  for (int i = 0; i < ticks; ++i) {
    now += *rc::gen::inRange<uint64_t>(1, 4 * kKhz * 4);
    bed.tk().Advance(timekeeper::AdvanceMode::kTick, now);
    for (const vdso::VvarStore& s : bed.last_update().stores) {
      stores.push_back(s);
    }
  }
  for (const vdso::VvarStore& s : stores) {
    const std::string why = Covered(layout, s.offset, s.size);
    if (!why.empty()) RC_FAIL("store: " + why);
  }
  std::vector<ClockId> clocks = v.vdso_clocks;
  for (const variants::ClockDef& c : v.own_clocks) clocks.push_back(c.id);
  RC_PRE(!clocks.empty());
  const ClockId clock = *rc::gen::elementOf(clocks).as("clock");
  const uint64_t at = now + *rc::gen::inRange<uint64_t>(0, 4 * kKhz * 4);
  (void)bed.Read(clock, at);
  size_t loads = 0;
  for (const testing::Access& a : bed.hooks().accesses()) {
    if (!a.is_load) continue;
    ++loads;
    const std::string why = Covered(layout, a.offset, a.size);
    if (!why.empty()) RC_FAIL("load: " + why);
  }
  RC_CLASSIFY(loads == 0, "no page load (syscall or user-space clock)");
}

// A page whose clock mode names a counter the reader cannot use here
// (NONE; PVCLOCK or HVCLOCK with their pages still zero: not stable, no
// valid sequence): every variant's reader of
// every kernel clock it serves from the page answers as the syscall does
// (it falls back). (A value no kernel publishes is not in the domain: 4.16
// then reads a zero delta, as its source does.)
RC_GTEST_PROP(LayoutProperty, UnusableClockModesFallBackToTheSyscall, ()) {
  // The variants with a clock mode field and kernel clocks from the page.
  std::vector<const variants::Variant*> all;
  for (const variants::Variant* v : variants::AllVariants()) {
    if (v->layout == nullptr || v->own_clocks_only ||
        ClockModes(*v->layout).empty()) {
      continue;
    }
    all.push_back(v);
  }
  RC_PRE(!all.empty());
  const variants::Variant& v = **rc::gen::elementOf(all).as("variant (index)");
  const std::vector<uint32_t> modes = ClockModes(*v.layout);
  RC_TAG(std::string(v.name));
  const uint64_t boot = *testing::GenCounterStart().as("boot counter");
  std::unique_ptr<testing::PublishBed> booted = BootBed(v, boot, 0);
  testing::PublishBed& bed = *booted;
  const uint64_t now = boot + *rc::gen::inRange<uint64_t>(1, 4 * kKhz * 4);
  bed.tk().Advance(timekeeper::AdvanceMode::kTick, now);
  const uint32_t mode = *rc::gen::element<uint32_t>(0, 2, 3);
  RC_TAG(mode == 0 ? "NONE" : mode == 2 ? "PVCLOCK" : "HVCLOCK");
  for (uint32_t offset : modes) bed.page().Store(offset, 4, mode);
  // The kernel's clocks (a variant's own clocks answer by their own rules).
  std::vector<ClockId> clocks;
  for (ClockId c : v.vdso_clocks) {
    if (c >= 0 && c < kClockAux) clocks.push_back(c);
  }
  RC_PRE(!clocks.empty());
  const ClockId clock = *rc::gen::elementOf(clocks).as("clock");
  const uint64_t at = now + *rc::gen::inRange<uint64_t>(0, 4 * kKhz * 4);
  const std::optional<ClockResult> got = bed.Read(clock, at);
  RC_ASSERT(got.has_value());
  const ClockResult want = bed.Syscall(clock, at);
  if (!(*got == want)) {
    RC_FAIL(absl::StrFormat(
        "%s: clock %d in mode %d: read %d %d.%09d, syscall "
        "%d %d.%09d",
        v.name, clock, mode, got->ret, got->ts.tv_sec, got->ts.tv_nsec,
        want.ret, want.ts.tv_sec, want.ts.tv_nsec));
  }
}

}  // namespace
}  // namespace vdsolab
