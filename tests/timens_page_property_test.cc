// The namespace page every variant with one writes (Variant::
// build_timens_page, timens_set_vvar_page() of its era), read back through
// the variant's Layout, the field map traces and the load observers use:
// every record's seq is 1 and its clock_mode VDSO_CLOCKMODE_TIMENS; the
// MONOTONIC offset sits where MONOTONIC, MONOTONIC_RAW and
// MONOTONIC_COARSE keep basetime, the BOOTTIME offset where BOOTTIME and
// BOOTTIME_ALARM do (struct timens_offset shares the union with
// basetime[]); every other byte stays zero. Drawn over
// proc_timens_set_offset()'s domain and the variants that have the page.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "common/clockid.h"
#include "timekeeper/clocksource.h"
#include "variants/layout.h"
#include "variants/registry.h"
#include "vdso/datapage.h"

namespace vdsolab {
namespace {

Timespec64 GenOffset() {
  return Timespec64{*rc::gen::weightedOneOf<int64_t>(
                        {{3, rc::gen::inRange<int64_t>(-100000, 100000)},
                         {1, rc::gen::arbitrary<int64_t>()}}),
                    *rc::gen::inRange<int64_t>(0, 1000000000)};
}

// What the namespace page holds at a field named `name`.
uint64_t Want(const std::string& name, const timekeeper::TimensOffsets& o) {
  if (absl::EndsWith(name, ".seq")) return 1;
  if (absl::EndsWith(name, ".clock_mode")) {
    return static_cast<uint32_t>(timekeeper::kVdsoClockmodeTimens);
  }
  for (ClockId c : {kClockMonotonic, kClockMonotonicRaw, kClockMonotonicCoarse,
                    kClockBoottime, kClockBoottimeAlarm}) {
    const Timespec64& off = c == kClockBoottime || c == kClockBoottimeAlarm
                                ? o.boottime
                                : o.monotonic;
    const std::string b = absl::StrFormat(".basetime[%s].", ClockName(c));
    if (absl::EndsWith(name, b + "sec"))
      return static_cast<uint64_t>(off.tv_sec);
    if (absl::EndsWith(name, b + "nsec")) {
      return static_cast<uint64_t>(off.tv_nsec);
    }
  }
  return 0;
}

RC_GTEST_PROP(TimensPage, EveryRecordDivertsAndHoldsItsClocksOffsets, ()) {
  std::vector<const variants::Variant*> with_page;
  for (const variants::Variant* v : variants::AllVariants()) {
    if (v->build_timens_page != nullptr) with_page.push_back(v);
  }
  RC_ASSERT(with_page.size() >= 6u);  // upstream and the five eras.
  const variants::Variant& v = **rc::gen::elementOf(with_page);
  RC_TAG(std::string(v.name));
  const timekeeper::TimensOffsets o{GenOffset(), GenOffset()};
  std::vector<uint8_t> page(vdso::kPageSize, 0);
  for (const vdso::VvarStore& s : v.build_timens_page(o).stores) {
    RC_ASSERT(s.offset + s.size <= page.size());
    // Every store lands on one field of the layout, whole.
    const variants::Field* f = v.layout->FieldAt(s.offset);
    RC_ASSERT(f != nullptr);
    RC_ASSERT(f->offset == s.offset && f->size == s.size);
    std::memcpy(&page[s.offset], &s.value, s.size);
  }
  int seqs = 0;
  std::vector<bool> covered(page.size(), false);
  for (const variants::Field& f : v.layout->fields()) {
    if (f.offset + f.size > page.size()) continue;  // The pvclock page.
    uint64_t got = 0;
    std::memcpy(&got, &page[f.offset], f.size);
    const uint64_t want =
        Want(f.name, o) & (f.size == 8 ? ~0ull : (1ull << (8 * f.size)) - 1);
    if (got != want) {
      RC_FAIL(absl::StrFormat("%s: %s is %#x, want %#x", v.name, f.name, got,
                              want));
    }
    if (f.kind == variants::FieldKind::kSeq) ++seqs;
    for (uint32_t i = 0; i < f.size; ++i) covered[f.offset + i] = true;
  }
  RC_ASSERT(seqs >= 2);  // CS_HRES_COARSE and CS_RAW at least.
  for (size_t i = 0; i < page.size(); ++i) {
    if (!covered[i]) RC_ASSERT(page[i] == 0);
  }
}

}  // namespace
}  // namespace vdsolab
