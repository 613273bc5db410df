#include "variants/gtod/layouts.h"

#include <string>

#include "absl/strings/str_format.h"
#include "common/clockid.h"
#include "variants/gtod/vgtod_416.h"
#include "variants/gtod/vgtod_420.h"

namespace vdsolab::variants::gtod {
namespace {

struct FieldSpec {
  const char* name;
  uint32_t GtodFields::*offset;
  uint8_t size;
  FieldKind kind;
};

// Every field a 4.16-family layout may have; absent ones are skipped.
constexpr FieldSpec kGtod416Fields[] = {
    {"seq", &GtodFields::seq, 4, FieldKind::kSeq},
    {"vclock_mode", &GtodFields::vclock_mode, 4, FieldKind::kData},
    {"cycle_last", &GtodFields::cycle_last, 8, FieldKind::kCycleLast},
    {"mask", &GtodFields::mask, 8, FieldKind::kData},
    {"mult", &GtodFields::mult, 4, FieldKind::kData},
    {"shift", &GtodFields::shift, 4, FieldKind::kData},
    {"raw_cycle_last", &GtodFields::raw_cycle_last, 8, FieldKind::kCycleLast},
    {"raw_mask", &GtodFields::raw_mask, 8, FieldKind::kData},
    {"raw_mult", &GtodFields::raw_mult, 4, FieldKind::kData},
    {"raw_shift", &GtodFields::raw_shift, 4, FieldKind::kData},
    {"has_rdtscp", &GtodFields::has_rdtscp, 4, FieldKind::kData},
    {"tsc_khz", &GtodFields::tsc_khz, 4, FieldKind::kData},
    {"wall_time_snsec", &GtodFields::wall_time_snsec, 8, FieldKind::kData},
    {"wall_time_sec", &GtodFields::wall_time_sec, 8, FieldKind::kData},
    {"monotonic_time_sec", &GtodFields::monotonic_time_sec, 8,
     FieldKind::kData},
    {"monotonic_time_snsec", &GtodFields::monotonic_time_snsec, 8,
     FieldKind::kData},
    {"wall_time_coarse_sec", &GtodFields::wall_time_coarse_sec, 8,
     FieldKind::kData},
    {"wall_time_coarse_nsec", &GtodFields::wall_time_coarse_nsec, 8,
     FieldKind::kData},
    {"monotonic_time_coarse_sec", &GtodFields::monotonic_time_coarse_sec, 8,
     FieldKind::kData},
    {"monotonic_time_coarse_nsec", &GtodFields::monotonic_time_coarse_nsec, 8,
     FieldKind::kData},
    {"monotonic_time_raw_sec", &GtodFields::monotonic_time_raw_sec, 8,
     FieldKind::kData},
    {"monotonic_time_raw_nsec", &GtodFields::monotonic_time_raw_nsec, 8,
     FieldKind::kData},
    {"tz_minuteswest", &GtodFields::tz_minuteswest, 4, FieldKind::kData},
    {"tz_dsttime", &GtodFields::tz_dsttime, 4, FieldKind::kData},
    {"trace_clock_is_sync", &GtodFields::trace_clock_is_sync, 4,
     FieldKind::kData},
    {"cpu_khz", &GtodFields::cpu_khz, 8, FieldKind::kData},
};

const Layout* Make416(const GtodFields& f, std::string name,
                      std::string summary) {
  FieldList list;
  for (const FieldSpec& s : kGtod416Fields) {
    const uint32_t offset = f.*s.offset;
    if (offset == kNoField) continue;
    list.Add(std::string("gtod.") + s.name, offset, s.size, s.kind);
  }
  list.AddPvclockPage();  // vread_pvclock() (vclock_gettime_416.h).
  return new Layout(std::move(name), std::move(summary), list.Take());
}

const Layout* Make420(const Gtod420Fields& f, std::string name,
                      std::string summary) {
  FieldList list;
  list.Add("gtod.seq", f.seq, 4, FieldKind::kSeq)
      .Add("gtod.vclock_mode", f.vclock_mode, 4)
      .Add("gtod.cycle_last", f.cycle_last, 8, FieldKind::kCycleLast)
      .Add("gtod.mask", f.mask, 8)
      .Add("gtod.mult", f.mult, 4)
      .Add("gtod.shift", f.shift, 4);
  if (f.raw_mult != kNoField) {
    list.Add("gtod.raw_mult", f.raw_mult, 4)
        .Add("gtod.raw_shift", f.raw_shift, 4);
  }
  for (ClockId clk = 0; clk < kVgtodBases; ++clk) {
    const std::string b = absl::StrFormat("gtod.basetime[%s]", ClockName(clk));
    list.Add(b + ".sec", f.BasetimeSec(clk), 8)
        .Add(b + ".nsec", f.BasetimeNsec(clk), 8);
  }
  list.Add("gtod.tz_minuteswest", f.tz_minuteswest, 4)
      .Add("gtod.tz_dsttime", f.tz_dsttime, 4);
  list.AddPvclockPage();  // vread_pvclock() (vclock_gettime_420.h).
  return new Layout(std::move(name), std::move(summary), list.Take());
}

}  // namespace

const Layout& Layout416() {
  static const Layout* layout =
      Make416(kFields416, "4.16 vsyscall_gtod_data",
              "struct vsyscall_gtod_data of 4.15-4.19 at vvar+128: one seq, "
              "the TSC parameters, open-coded timespecs (shifted ns for the "
              "hres clocks)");
  return *layout;
}

const Layout& LayoutVasDiasV1() {
  static const Layout* layout = Make416(
      kFieldsVasDiasV1, "vasdias-v1 vsyscall_gtod_data",
      "4.16 plus raw_cycle_last, raw_mask, raw_mult, raw_shift after shift "
      "and monotonic_time_raw_sec/nsec after the coarse fields (seed 000)");
  return *layout;
}

const Layout& LayoutVasDiasRdtscp() {
  static const Layout* layout =
      Make416(kFieldsVasDiasRdtscp, "vasdias-rdtscp vsyscall_gtod_data",
              "vasdias-v1 plus has_rdtscp after raw_shift (seed 000, 2/2)");
  return *layout;
}

const Layout& LayoutRc5() {
  static const Layout* layout = Make416(
      kFieldsRc5, "vasdias-rc5-2 vsyscall_gtod_data",
      "4.16 plus raw_mult, raw_shift after shift and monotonic_time_raw_sec/"
      "nsec after the coarse fields (seed 001; placement reconstructed)");
  return *layout;
}

const Layout& LayoutTscCalibration() {
  static const Layout* layout =
      Make416(kFieldsTscCalibration, "tsc-calibration vsyscall_gtod_data",
              "vasdias-rdtscp plus tsc_khz after has_rdtscp (seed 000, "
              "__vdso_linux_tsc_calibration)");
  return *layout;
}

const Layout& LayoutTraceClock() {
  static const Layout* layout = Make416(
      kFieldsTraceClock, "trace-clock vsyscall_gtod_data",
      "4.16 plus trace_clock_is_sync and cpu_khz appended after tz_dsttime "
      "(seed 002's 2.6.3x fields grafted onto 4.16)");
  return *layout;
}

const Layout& LayoutSverdlin() {
  static const Layout* layout =
      Make420(kFieldsSverdlin, "sverdlin-v2 vsyscall_gtod_data",
              "the 4.20-5.2 vsyscall_gtod_data (basetime[CLOCK_TAI + 1]) plus "
              "raw_mult, raw_shift after shift (seed 003)");
  return *layout;
}

}  // namespace vdsolab::variants::gtod
