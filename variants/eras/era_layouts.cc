#include "variants/eras/era_layouts.h"

#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "common/clockid.h"
#include "variants/eras/datapage.h"
#include "vdso/datapage.h"

namespace vdsolab::variants::eras {
namespace {

// The fields of one record at page offset `base`, named "prefix.field".
void AddRecord(FieldList& f, const std::string& prefix, uint32_t base,
               const RecordOffsets& r) {
  f.Add(prefix + ".seq", base + r.seq, 4, FieldKind::kSeq)
      .Add(prefix + ".clock_mode", base + r.clock_mode, 4)
      .Add(prefix + ".cycle_last", base + r.cycle_last, 8,
           FieldKind::kCycleLast);
  if (r.max_cycles != kNoField) {
    f.Add(prefix + ".max_cycles", base + r.max_cycles, 8);
  }
  f.Add(prefix + ".mask", base + r.mask, 8)
      .Add(prefix + ".mult", base + r.mult, 4)
      .Add(prefix + ".shift", base + r.shift, 4);
  for (int i = 0; i < kVdsoBases; ++i) {
    const std::string b =
        absl::StrFormat("%s.basetime[%s]", prefix, ClockName(i));
    f.Add(b + ".sec", base + r.BasetimeSec(i), 8)
        .Add(b + ".nsec", base + r.BasetimeNsec(i), 8);
  }
  // struct vdso_data carries the tail in every record (only [0]'s is used).
  if (r.hrtimer_res != kNoField) {
    f.Add(prefix + ".tz_minuteswest", base + r.tz_minuteswest, 4)
        .Add(prefix + ".tz_dsttime", base + r.tz_dsttime, 4)
        .Add(prefix + ".hrtimer_res", base + r.hrtimer_res, 4);
  }
}

Layout MakeVdsoDataLayout(const RecordOffsets& r, std::string name,
                          std::string summary) {
  FieldList f;
  for (int cs = 0; cs < vdso::kCsBases; ++cs) {
    AddRecord(f, absl::StrFormat("vdso_data[%d]", cs), VdsoDataOffset(r, cs),
              r);
  }
  f.AddPvclockPage();  // vread_pvclock() (era_reader.h).
  return Layout(std::move(name), std::move(summary), f.Take());
}

Layout MakeVdsoTimeDataLayout615() {
  FieldList f;
  for (int cs = 0; cs < vdso::kCsBases; ++cs) {
    AddRecord(f, absl::StrFormat("clock_data[%d]", cs),
              vdso::ClockDataOffset(cs), kVdsoClock615);
  }
  f.Add("tz_minuteswest", kTzMinuteswest615, 4)
      .Add("tz_dsttime", kTzDsttime615, 4)
      .Add("hrtimer_res", kHrtimerRes615, 4);
  f.AddPvclockPage();
  return Layout("6.15 vdso_time_data",
                "struct vdso_time_data (6.15/6.16): two struct vdso_clock "
                "records (max_cycles) at the start of the time page, "
                "hrtimer_res at 472, no aux clock records",
                f.Take());
}

}  // namespace

const Layout& VdsoDataLayout53() {
  static const Layout* layout = new Layout(MakeVdsoDataLayout(
      kVdsoData53, "5.3 vdso_data",
      "x86 _vdso_data[2] at vvar+128 (5.3-6.9): struct vdso_data, 240-byte "
      "records, no max_cycles"));
  return *layout;
}

const Layout& VdsoDataLayout610() {
  static const Layout* layout = new Layout(MakeVdsoDataLayout(
      kVdsoData610, "6.10 vdso_data",
      "x86 _vdso_data[2] at vvar+128 (6.10-6.12): struct vdso_data with "
      "max_cycles, 248-byte records"));
  return *layout;
}

const Layout& VdsoTimeDataLayout615() {
  static const Layout* layout = new Layout(MakeVdsoTimeDataLayout615());
  return *layout;
}

}  // namespace vdsolab::variants::eras
