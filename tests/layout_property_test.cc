// Every variant's layout (variants/layout.h, the page described as data)
// against what its writer and reader actually touch: on generated
// timekeeper histories, every store of every update and every load of
// every clock's read falls inside one field of the layout, and the layout
// names it as that field (DescribeOffset). The simulation's load
// observers, traces, replays and `inspect` all see the page through the
// layout; a field missing, misplaced or misnamed there misleads them
// without changing any clock's value, so no reader property would notice.
//
// The clock modes beside TSC: a page whose mode the reader cannot use
// sends every kernel clock to the syscall; and a stable pvclock page
// (kvm-clock), for every variant whose layout has one, turns the TSC into
// the counter the pvclock ABI defines.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/math64.h"
#include "common/timespec.h"
#include "testing/publish_bed.h"
#include "tests/generators.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/timex.h"
#include "variants/layout.h"
#include "variants/registry.h"
#include "variants/upstream.h"
#include "variants/variant.h"
#include "vdso/datapage.h"
#include "vdso/vvar_page.h"

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

// The offset of the field `name` of `layout`, if it has one.
std::optional<uint32_t> FieldOffset(const variants::Layout& layout,
                                    const std::string& name) {
  for (const variants::Field& f : layout.fields()) {
    if (f.name == name) return f.offset;
  }
  return std::nullopt;
}

constexpr uint32_t kKhz = 2600000;
// VDSO_CLOCKMODE_TSC and VDSO_CLOCKMODE_PVCLOCK
// (arch/x86/include/asm/vdso/clocksource.h).
constexpr uint32_t kModeTsc = 1;
constexpr uint32_t kModePvclock = 2;

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

// vdso::DescribeVvarOffset() (store dumps, the vdso tests' traces) names
// the upstream page's fields itself, apart from the layout: every field
// it names must be the layout's field of that offset, or the two tell a
// reader of a trace different stories about the same byte.
TEST(LayoutProperty, DescribeVvarOffsetNamesEveryUpstreamField) {
  const variants::Layout& layout = variants::UpstreamLayout();
  size_t named = 0;
  for (const variants::Field& f : layout.fields()) {
    EXPECT_EQ(vdso::DescribeVvarOffset(f.offset), f.name)
        << "at offset " << f.offset;
    ++named;
  }
  // The clock records (two core, eight aux, each with 12 bases), the
  // timezone and hrtimer_res, and the pvclock page.
  EXPECT_GT(named, 10u * 7 + 3 + 6);
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

// The shift a time field of `layout` is in: the "shift" (or, for a raw
// clock's field where the record has one, "raw_shift") of the record the
// field belongs to ("gtod.", "vdso_data[1].", "clock_data[0]."), or
// nullopt where the record has none.
std::optional<uint32_t> ShiftFieldOf(const variants::Layout& layout,
                                     const std::string& name) {
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return std::nullopt;
  const std::string record = name.substr(0, dot + 1);
  if (name.find("raw") != std::string::npos) {
    if (auto raw = FieldOffset(layout, record + "raw_shift")) return raw;
  }
  return FieldOffset(layout, record + "shift");
}

// Every time a writer publishes is normalised, as the kernel's
// update_vsyscall() leaves it: each nanoseconds field ("...nsec", shifted
// or not) is below one second in the shift of its record, NSEC_PER_SEC <<
// shift. A reader may take that on trust (the 4.16 coarse readers copy the
// field into tv_nsec; other architectures' and users' readers skip the
// carry), so an unnormalised base is a defect even where this tree's
// readers, which carry, answer right. Realtime, the boot offset, NTP
// frequency and the time between updates are drawn, so that bases land
// anywhere in their second.
// A difference between two pages is named as the whole field it falls in,
// with both values read little-endian from all of the field's bytes, from
// whichever of its bytes the difference was found at (a writer that
// published one field otherwise was shown one byte of it).
RC_GTEST_PROP(LayoutProperty, ADifferenceIsShownAsItsWholeField, ()) {
  const std::vector<const variants::Variant*> all = variants::AllVariants();
  const variants::Variant& v = **rc::gen::elementOf(all).as("variant");
  RC_PRE(v.layout != nullptr && !v.layout->fields().empty());
  const variants::Field& f =
      *rc::gen::elementOf(v.layout->fields()).as("field");
  RC_TAG(f.size);
  const uint32_t at = f.offset + *rc::gen::inRange<uint32_t>(0, f.size);
  RC_CLASSIFY(at == f.offset, "difference at the field's first byte");
  std::vector<uint8_t> a(f.offset + f.size + 8), b;
  for (uint8_t& byte : a) byte = *rc::gen::arbitrary<uint8_t>();
  b = a;
  b[at] = static_cast<uint8_t>(b[at] ^ (1 + *rc::gen::inRange(0, 255)));
  uint64_t va = 0, vb = 0;
  std::memcpy(&va, a.data() + f.offset, f.size);
  std::memcpy(&vb, b.data() + f.offset, f.size);
  const std::string d = v.layout->DescribeDifference(
      at, [&](uint32_t k) { return a.at(k); },
      [&](uint32_t k) { return b.at(k); }, "model", "tree");
  RC_ASSERT(d == absl::StrFormat("page field vvar+%d %s (u%d): model %#x, "
                                 "tree %#x",
                                 f.offset, f.name, f.size * 8, va, vb));
}

RC_GTEST_PROP(LayoutProperty, PublishedTimesAreNormalised, ()) {
  std::vector<const variants::Variant*> all;
  for (const variants::Variant* v : variants::AllVariants()) {
    if (v->layout != nullptr && v->build_update != nullptr) all.push_back(v);
  }
  const variants::Variant& v = **rc::gen::elementOf(all).as("variant");
  RC_TAG(std::string(v.name));
  const variants::Layout& layout = *v.layout;
  const uint64_t boot = *testing::GenCounterStart().as("boot counter");
  variants::PublishContext ctx;
  ctx.tsc_khz = kKhz;
  ctx.boot_counter = boot;
  testing::PublishBed bed(v, testing::Tsc(kKhz), ctx);
  bed.tk().Init(boot,
                Timespec64{*rc::gen::inRange<int64_t>(0, 4000000000),
                           *rc::gen::inRange<int64_t>(0, 1000000000)},
                Timespec64{*rc::gen::inRange<int64_t>(0, 100000),
                           *rc::gen::inRange<int64_t>(0, 1000000000)});
  uint64_t now = boot;
  size_t checked = 0;
  const int steps = *rc::gen::inRange(1, 8);
  for (int i = 0; i < steps; ++i) {
    now += *rc::gen::inRange<uint64_t>(1, 4 * kKhz * 4);
    if (*rc::gen::inRange(0, 4) == 0) {
      timekeeper::Timex txc;
      txc.modes = timekeeper::kAdjFrequency;
      txc.freq = *rc::gen::inRange<int64_t>(-(500ll << 16), 500ll << 16);
      RC_ASSERT(bed.tk().Adjtimex(txc, now).ok());
    } else {
      bed.tk().Advance(timekeeper::AdvanceMode::kTick, now);
    }
    for (const variants::Field& f : layout.fields()) {
      const std::string& n = f.name;
      if (f.size != 8 || n.size() < 4 ||
          n.compare(n.size() - 4, 4, "nsec") != 0) {
        continue;
      }
      const std::optional<uint32_t> shift_at = ShiftFieldOf(layout, n);
      if (!shift_at) continue;
      const uint64_t shift = bed.page().Load(*shift_at, 4);
      const uint64_t nsec = bed.page().Load(f.offset, 8);
      ++checked;
      if (shift < 64 &&
          static_cast<unsigned __int128>(nsec) >=
              (static_cast<unsigned __int128>(1000000000u) << shift)) {
        RC_FAIL(
            absl::StrFormat("%s: %s = %#x after update %d, not below "
                            "NSEC_PER_SEC << %d",
                            v.name, n, nsec, i + 1, shift));
      }
    }
  }
  RC_CLASSIFY(checked == 0, "no nanoseconds field with a shift");
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

// kvm-clock: on a page whose clock mode is PVCLOCK and whose pvclock page
// says the TSC is stable, a reader converts the TSC into the counter
// Documentation/virt/kvm/x86/msr.rst defines (time = tsc - tsc_timestamp;
// shifted left by tsc_shift, or right by -tsc_shift; times
// tsc_to_system_mul >> 32; plus system_time), and then treats it as its
// era treats the TSC (6.5+ below bit 63; 4.16 clamped to cycle_last;
// 4.20-6.4 a set MSB to the syscall). A TSC before tsc_timestamp counts as
// no time in the 6.15+ readers (the 6.18 vDSO's clamp); before, the
// negative delta scales as the huge u64 it is. So every variant whose
// layout has a pvclock page answers every hres clock, in PVCLOCK mode at
// that TSC, what it answers in TSC mode at that counter (from the page,
// or from the syscall alike), and loads the pvclock page to do it. The ABI's
// formula is written out here in 128 bits; the generated scales span tsc_shift
// -4..4 (what KVM publishes for a TSC from about 63 MHz to 32 GHz: 2.6 GHz is
// -1) and multipliers from tiny to 2^32 - 1.
RC_GTEST_PROP(LayoutProperty, StablePvclockPagesAnswerAtTheAbiCounter, ()) {
  std::vector<const variants::Variant*> all;
  for (const variants::Variant* v : variants::AllVariants()) {
    if (v->layout != nullptr && !v->own_clocks_only &&
        !ClockModes(*v->layout).empty() &&
        FieldOffset(*v->layout, "pvti.tsc_shift").has_value()) {
      all.push_back(v);
    }
  }
  RC_PRE(!all.empty());
  const variants::Variant& v = **rc::gen::elementOf(all).as("variant (index)");
  RC_TAG(std::string(v.name));
  const variants::Layout& layout = *v.layout;
  const std::vector<uint32_t> modes = ClockModes(layout);
  const uint64_t boot = *testing::GenCounterStart().as("boot counter");
  std::unique_ptr<testing::PublishBed> booted = BootBed(v, boot, 0);
  testing::PublishBed& bed = *booted;
  const uint64_t now = boot + *rc::gen::inRange<uint64_t>(1, 4 * kKhz * 4);
  bed.tk().Advance(timekeeper::AdvanceMode::kTick, now);
  const uint64_t cycle_last = bed.state().tkr_mono.cycle_last;

  // A stable pvclock page whose clock runs near the timekeeper's counter.
  const uint64_t tsc_timestamp =
      *rc::gen::inRange<uint64_t>(0, 1ull << 62).as("tsc_timestamp");
  const uint64_t system_time =
      cycle_last - (1ull << 29) +
      *rc::gen::inRange<uint64_t>(0, 1ull << 30).as("system_time - base");
  const uint32_t mul =
      *rc::gen::oneOf(rc::gen::inRange<uint32_t>(1, 1u << 16),
                      rc::gen::inRange<uint32_t>(1u << 31, 0xffffffffu),
                      rc::gen::just<uint32_t>(0xffffffffu))
           .as("tsc_to_system_mul");
  const int shift =
      *rc::gen::element(-4, -3, -2, -1, 0, 1, 2, 3, 4).as("tsc_shift");
  const bool before = *rc::gen::element(0, 1, 2, 3, 4, 5, 6, 7) == 0;
  const uint64_t delta =
      before ? 0 : *rc::gen::inRange<uint64_t>(0, 1ull << 40).as("delta");
  const uint64_t tsc =
      before ? tsc_timestamp - *rc::gen::inRange<uint64_t>(1, 1ull << 40)
                                    .as("tsc before tsc_timestamp by")
             : tsc_timestamp + delta;
  auto store = [&](const char* name, uint8_t size, uint64_t value) {
    const std::optional<uint32_t> at = FieldOffset(layout, name);
    RC_ASSERT(at.has_value());
    bed.page().Store(*at, size, value);
  };
  store("pvti.version", 4, 2 * *rc::gen::inRange<uint64_t>(0, 1u << 30));
  store("pvti.tsc_timestamp", 8, tsc_timestamp);
  store("pvti.system_time", 8, system_time);
  store("pvti.tsc_to_system_mul", 4, mul);
  store("pvti.tsc_shift", 1, static_cast<uint8_t>(static_cast<int8_t>(shift)));
  store("pvti.flags", 1, vdso::kPvclockTscStableBit);
  // The 6.15+ readers (the model's boundary for the clamp: 6.12's
  // source lacks it, 6.18's compiled code has it).
  const bool clamps = v.semantics.coarse_from_coarse_nsec;
  const uint64_t raw_delta = tsc - tsc_timestamp;
  const uint64_t used = before && clamps ? 0 : raw_delta;
  const uint64_t scaled = shift >= 0 ? used << shift : used >> -shift;
  const uint64_t counter =
      system_time + static_cast<uint64_t>(
                        (static_cast<unsigned __int128>(scaled) * mul) >> 32);
  RC_CLASSIFY(before, "TSC before tsc_timestamp");
  RC_CLASSIFY(shift > 0, "tsc_shift > 0 (TSC below 1 GHz)");
  RC_CLASSIFY(shift < 0, "tsc_shift < 0 (TSC above 2 GHz)");

  std::vector<ClockId> clocks;
  for (ClockId c : v.vdso_clocks) {
    if (c >= 0 && c < kMaxClocks && ((1u << c) & (kVdsoHres | kVdsoRaw)) != 0) {
      clocks.push_back(c);
    }
  }
  RC_PRE(!clocks.empty());
  const ClockId clock = *rc::gen::elementOf(clocks).as("clock");
  for (uint32_t offset : modes) bed.page().Store(offset, 4, kModeTsc);
  const std::optional<ClockResult> want = bed.Read(clock, counter);
  RC_ASSERT(want.has_value());
  const bool want_syscall = !bed.hooks().fallbacks().empty();
  for (uint32_t offset : modes) bed.page().Store(offset, 4, kModePvclock);
  const std::optional<ClockResult> got = bed.Read(clock, tsc);
  RC_ASSERT(got.has_value());
  RC_ASSERT(bed.hooks().fallbacks().empty() == !want_syscall);
  RC_CLASSIFY(want_syscall, "the era sends this counter to the syscall");
  bool loaded_pvti = false;
  for (const testing::Access& a : bed.hooks().accesses()) {
    const variants::Field* f = layout.FieldAt(a.offset);
    loaded_pvti |= a.is_load && f != nullptr && f->name.rfind("pvti.", 0) == 0;
  }
  RC_ASSERT(loaded_pvti);
  // Both went to the syscall (whose answer here is the hooks' fixed
  // counter's, not the reader's): nothing more to compare.
  if (want_syscall) return;
  if (!(*got == *want)) {
    RC_FAIL(absl::StrFormat(
        "%s: %s at TSC %#x on kvm-clock (tsc_timestamp %#x, system_time %#x, "
        "mul %#x, shift %d): %s; in TSC mode at counter %#x: %s",
        v.name, ClockName(clock), tsc, tsc_timestamp, system_time, mul, shift,
        FormatClockResult(*got), counter, FormatClockResult(*want)));
  }
}

}  // namespace
}  // namespace vdsolab
