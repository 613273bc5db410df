// File: variants/gtod/vgtod_416.h
//
// struct vsyscall_gtod_data as the 4.16 x86-64 kernel lays it out
// (arch/x86/include/asm/vgtod.h, 4.15-4.19 series), and the versions the
// seeds' patches make of it. x86-64 only: gtod_long_t is unsigned long.
//
// The struct sits at vvar+128 (asm/vvar.h: DECLARE_VVAR(128, struct
// vsyscall_gtod_data, vsyscall_gtod_data); jiffies at +0 and vgetcpu_mode
// at +16 are not modelled: no clock reader touches them).
//
// These structs describe offsets only (design rule 1): readers and writers
// reach fields through GtodFields, a table of byte offsets built from them,
// and nothing ever constructs these types over the page.

#ifndef VDSOLAB_VARIANTS_GTOD_VGTOD_416_H_
#define VDSOLAB_VARIANTS_GTOD_VGTOD_416_H_

#include <cstddef>
#include <cstdint>

namespace vdsolab::variants::gtod {

// DECLARE_VVAR(128, struct vsyscall_gtod_data, vsyscall_gtod_data).
inline constexpr uint32_t kVsyscallGtodOffset = 128;

// VCLOCK_* (arch/x86/include/asm/clocksource.h, 4.11-5.5: after the HPET
// vclock was removed and VCLOCK_HVCLOCK added). Before 4.7 the numbering
// was NONE 0, TSC 1, HPET 2, PVCLOCK 3.
inline constexpr int32_t kVclockNone = 0;
inline constexpr int32_t kVclockTsc = 1;
inline constexpr int32_t kVclockPvclock = 2;
inline constexpr int32_t kVclockHvclock = 3;

// Linux 4.16.
struct VsyscallGtodData416 {
  uint32_t seq;
  int32_t vclock_mode;
  uint64_t cycle_last;
  uint64_t mask;
  uint32_t mult;
  uint32_t shift;
  // Open-coded struct timespec; *_snsec are ns << shift.
  uint64_t wall_time_snsec;
  uint64_t wall_time_sec;
  uint64_t monotonic_time_sec;
  uint64_t monotonic_time_snsec;
  uint64_t wall_time_coarse_sec;
  uint64_t wall_time_coarse_nsec;
  uint64_t monotonic_time_coarse_sec;
  uint64_t monotonic_time_coarse_nsec;
  int32_t tz_minuteswest;
  int32_t tz_dsttime;
};

// Seed 000, vdso_clock_monotonic_raw_1.patch: the raw clock's parameters
// after shift, its base time after the coarse fields.
struct VsyscallGtodDataVasDiasV1 {
  uint32_t seq;
  int32_t vclock_mode;
  uint64_t cycle_last;
  uint64_t mask;
  uint32_t mult;
  uint32_t shift;
  uint64_t raw_cycle_last;
  uint64_t raw_mask;
  uint32_t raw_mult;
  uint32_t raw_shift;
  uint64_t wall_time_snsec;
  uint64_t wall_time_sec;
  uint64_t monotonic_time_sec;
  uint64_t monotonic_time_snsec;
  uint64_t wall_time_coarse_sec;
  uint64_t wall_time_coarse_nsec;
  uint64_t monotonic_time_coarse_sec;
  uint64_t monotonic_time_coarse_nsec;
  uint64_t monotonic_time_raw_sec;
  uint64_t monotonic_time_raw_nsec;  // ns << raw_shift (tkr_raw.xtime_nsec).
  int32_t tz_minuteswest;
  int32_t tz_dsttime;
};

// Seed 000, "[PATCH v4.16-rc4 2/2]" (rdtscp): v1 plus has_rdtscp after
// raw_shift; 4 bytes of padding follow it.
struct VsyscallGtodDataVasDiasRdtscp {
  uint32_t seq;
  int32_t vclock_mode;
  uint64_t cycle_last;
  uint64_t mask;
  uint32_t mult;
  uint32_t shift;
  uint64_t raw_cycle_last;
  uint64_t raw_mask;
  uint32_t raw_mult;
  uint32_t raw_shift;
  uint32_t has_rdtscp;
  uint64_t wall_time_snsec;
  uint64_t wall_time_sec;
  uint64_t monotonic_time_sec;
  uint64_t monotonic_time_snsec;
  uint64_t wall_time_coarse_sec;
  uint64_t wall_time_coarse_nsec;
  uint64_t monotonic_time_coarse_sec;
  uint64_t monotonic_time_coarse_nsec;
  uint64_t monotonic_time_raw_sec;
  uint64_t monotonic_time_raw_nsec;
  int32_t tz_minuteswest;
  int32_t tz_dsttime;
};

// Seed 000, the __vdso_linux_tsc_calibration revisions: the rdtscp layout
// plus tsc_khz, which takes the padding after has_rdtscp.
struct VsyscallGtodDataTscCalibration {
  uint32_t seq;
  int32_t vclock_mode;
  uint64_t cycle_last;
  uint64_t mask;
  uint32_t mult;
  uint32_t shift;
  uint64_t raw_cycle_last;
  uint64_t raw_mask;
  uint32_t raw_mult;
  uint32_t raw_shift;
  uint32_t has_rdtscp;
  uint32_t tsc_khz;
  uint64_t wall_time_snsec;
  uint64_t wall_time_sec;
  uint64_t monotonic_time_sec;
  uint64_t monotonic_time_snsec;
  uint64_t wall_time_coarse_sec;
  uint64_t wall_time_coarse_nsec;
  uint64_t monotonic_time_coarse_sec;
  uint64_t monotonic_time_coarse_nsec;
  uint64_t monotonic_time_raw_sec;
  uint64_t monotonic_time_raw_nsec;
  int32_t tz_minuteswest;
  int32_t tz_dsttime;
};

// Seed 001, "[PATCH v4.16-rc5 (2)]": only raw_mult/raw_shift and the raw
// base time. The seed gives the field list, not the hunk; the placement
// (raw_mult/raw_shift after shift, the base time after the coarse fields)
// is reconstructed from v1's, which the stripped-down patch was cut from.
struct VsyscallGtodDataRc5 {
  uint32_t seq;
  int32_t vclock_mode;
  uint64_t cycle_last;
  uint64_t mask;
  uint32_t mult;
  uint32_t shift;
  uint32_t raw_mult;
  uint32_t raw_shift;
  uint64_t wall_time_snsec;
  uint64_t wall_time_sec;
  uint64_t monotonic_time_sec;
  uint64_t monotonic_time_snsec;
  uint64_t wall_time_coarse_sec;
  uint64_t wall_time_coarse_nsec;
  uint64_t monotonic_time_coarse_sec;
  uint64_t monotonic_time_coarse_nsec;
  uint64_t monotonic_time_raw_sec;
  uint64_t monotonic_time_raw_nsec;
  int32_t tz_minuteswest;
  int32_t tz_dsttime;
};

// Seed 002's two fields grafted onto 4.16: the RFC added them to the
// 2.6.3x struct (after sysctl_enabled); 4.16 has no such neighbour, so they
// are appended after tz_dsttime.
struct VsyscallGtodDataTraceClock {
  uint32_t seq;
  int32_t vclock_mode;
  uint64_t cycle_last;
  uint64_t mask;
  uint32_t mult;
  uint32_t shift;
  uint64_t wall_time_snsec;
  uint64_t wall_time_sec;
  uint64_t monotonic_time_sec;
  uint64_t monotonic_time_snsec;
  uint64_t wall_time_coarse_sec;
  uint64_t wall_time_coarse_nsec;
  uint64_t monotonic_time_coarse_sec;
  uint64_t monotonic_time_coarse_nsec;
  int32_t tz_minuteswest;
  int32_t tz_dsttime;
  int32_t trace_clock_is_sync;
  uint64_t cpu_khz;  // unsigned long: cpu_khz >> CYC2NS_SCALE_FACTOR.
};

// The fields every layout shares (kernel-reference.md §9).
#define VDSOLAB_ASSERT_GTOD_416_HEAD(S)         \
  static_assert(offsetof(S, seq) == 0);         \
  static_assert(offsetof(S, vclock_mode) == 4); \
  static_assert(offsetof(S, cycle_last) == 8);  \
  static_assert(offsetof(S, mask) == 16);       \
  static_assert(offsetof(S, mult) == 24);       \
  static_assert(offsetof(S, shift) == 28)

VDSOLAB_ASSERT_GTOD_416_HEAD(VsyscallGtodData416);
static_assert(offsetof(VsyscallGtodData416, wall_time_snsec) == 32);
static_assert(offsetof(VsyscallGtodData416, wall_time_sec) == 40);
static_assert(offsetof(VsyscallGtodData416, monotonic_time_sec) == 48);
static_assert(offsetof(VsyscallGtodData416, monotonic_time_snsec) == 56);
static_assert(offsetof(VsyscallGtodData416, wall_time_coarse_sec) == 64);
static_assert(offsetof(VsyscallGtodData416, wall_time_coarse_nsec) == 72);
static_assert(offsetof(VsyscallGtodData416, monotonic_time_coarse_sec) == 80);
static_assert(offsetof(VsyscallGtodData416, monotonic_time_coarse_nsec) == 88);
static_assert(offsetof(VsyscallGtodData416, tz_minuteswest) == 96);
static_assert(offsetof(VsyscallGtodData416, tz_dsttime) == 100);
static_assert(sizeof(VsyscallGtodData416) == 104);

VDSOLAB_ASSERT_GTOD_416_HEAD(VsyscallGtodDataVasDiasV1);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, raw_cycle_last) == 32);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, raw_mask) == 40);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, raw_mult) == 48);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, raw_shift) == 52);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, wall_time_snsec) == 56);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, wall_time_sec) == 64);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, monotonic_time_sec) == 72);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, monotonic_time_snsec) == 80);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, wall_time_coarse_sec) == 88);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, wall_time_coarse_nsec) == 96);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, monotonic_time_coarse_sec) ==
              104);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, monotonic_time_coarse_nsec) ==
              112);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, monotonic_time_raw_sec) ==
              120);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, monotonic_time_raw_nsec) ==
              128);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, tz_minuteswest) == 136);
static_assert(offsetof(VsyscallGtodDataVasDiasV1, tz_dsttime) == 140);
static_assert(sizeof(VsyscallGtodDataVasDiasV1) == 144);

VDSOLAB_ASSERT_GTOD_416_HEAD(VsyscallGtodDataVasDiasRdtscp);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp, raw_cycle_last) == 32);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp, raw_mask) == 40);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp, raw_mult) == 48);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp, raw_shift) == 52);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp, has_rdtscp) == 56);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp, wall_time_snsec) == 64);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp, wall_time_sec) == 72);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp, monotonic_time_sec) ==
              80);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp, monotonic_time_snsec) ==
              88);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp, wall_time_coarse_sec) ==
              96);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp, wall_time_coarse_nsec) ==
              104);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp,
                       monotonic_time_coarse_sec) == 112);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp,
                       monotonic_time_coarse_nsec) == 120);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp, monotonic_time_raw_sec) ==
              128);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp,
                       monotonic_time_raw_nsec) == 136);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp, tz_minuteswest) == 144);
static_assert(offsetof(VsyscallGtodDataVasDiasRdtscp, tz_dsttime) == 148);
static_assert(sizeof(VsyscallGtodDataVasDiasRdtscp) == 152);

VDSOLAB_ASSERT_GTOD_416_HEAD(VsyscallGtodDataTscCalibration);
static_assert(offsetof(VsyscallGtodDataTscCalibration, raw_cycle_last) == 32);
static_assert(offsetof(VsyscallGtodDataTscCalibration, raw_mask) == 40);
static_assert(offsetof(VsyscallGtodDataTscCalibration, raw_mult) == 48);
static_assert(offsetof(VsyscallGtodDataTscCalibration, raw_shift) == 52);
static_assert(offsetof(VsyscallGtodDataTscCalibration, has_rdtscp) == 56);
static_assert(offsetof(VsyscallGtodDataTscCalibration, tsc_khz) == 60);
static_assert(offsetof(VsyscallGtodDataTscCalibration, wall_time_snsec) == 64);
static_assert(offsetof(VsyscallGtodDataTscCalibration, wall_time_sec) == 72);
static_assert(offsetof(VsyscallGtodDataTscCalibration, monotonic_time_sec) ==
              80);
static_assert(offsetof(VsyscallGtodDataTscCalibration, monotonic_time_snsec) ==
              88);
static_assert(offsetof(VsyscallGtodDataTscCalibration, wall_time_coarse_sec) ==
              96);
static_assert(offsetof(VsyscallGtodDataTscCalibration, wall_time_coarse_nsec) ==
              104);
static_assert(offsetof(VsyscallGtodDataTscCalibration,
                       monotonic_time_coarse_sec) == 112);
static_assert(offsetof(VsyscallGtodDataTscCalibration,
                       monotonic_time_coarse_nsec) == 120);
static_assert(offsetof(VsyscallGtodDataTscCalibration,
                       monotonic_time_raw_sec) == 128);
static_assert(offsetof(VsyscallGtodDataTscCalibration,
                       monotonic_time_raw_nsec) == 136);
static_assert(offsetof(VsyscallGtodDataTscCalibration, tz_minuteswest) == 144);
static_assert(offsetof(VsyscallGtodDataTscCalibration, tz_dsttime) == 148);
static_assert(sizeof(VsyscallGtodDataTscCalibration) == 152);

VDSOLAB_ASSERT_GTOD_416_HEAD(VsyscallGtodDataRc5);
static_assert(offsetof(VsyscallGtodDataRc5, raw_mult) == 32);
static_assert(offsetof(VsyscallGtodDataRc5, raw_shift) == 36);
static_assert(offsetof(VsyscallGtodDataRc5, wall_time_snsec) == 40);
static_assert(offsetof(VsyscallGtodDataRc5, wall_time_sec) == 48);
static_assert(offsetof(VsyscallGtodDataRc5, monotonic_time_sec) == 56);
static_assert(offsetof(VsyscallGtodDataRc5, monotonic_time_snsec) == 64);
static_assert(offsetof(VsyscallGtodDataRc5, wall_time_coarse_sec) == 72);
static_assert(offsetof(VsyscallGtodDataRc5, wall_time_coarse_nsec) == 80);
static_assert(offsetof(VsyscallGtodDataRc5, monotonic_time_coarse_sec) == 88);
static_assert(offsetof(VsyscallGtodDataRc5, monotonic_time_coarse_nsec) == 96);
static_assert(offsetof(VsyscallGtodDataRc5, monotonic_time_raw_sec) == 104);
static_assert(offsetof(VsyscallGtodDataRc5, monotonic_time_raw_nsec) == 112);
static_assert(offsetof(VsyscallGtodDataRc5, tz_minuteswest) == 120);
static_assert(offsetof(VsyscallGtodDataRc5, tz_dsttime) == 124);
static_assert(sizeof(VsyscallGtodDataRc5) == 128);

VDSOLAB_ASSERT_GTOD_416_HEAD(VsyscallGtodDataTraceClock);
static_assert(offsetof(VsyscallGtodDataTraceClock, wall_time_snsec) == 32);
static_assert(offsetof(VsyscallGtodDataTraceClock,
                       monotonic_time_coarse_nsec) == 88);
static_assert(offsetof(VsyscallGtodDataTraceClock, tz_minuteswest) == 96);
static_assert(offsetof(VsyscallGtodDataTraceClock, tz_dsttime) == 100);
static_assert(offsetof(VsyscallGtodDataTraceClock, trace_clock_is_sync) == 104);
static_assert(offsetof(VsyscallGtodDataTraceClock, cpu_khz) == 112);
static_assert(sizeof(VsyscallGtodDataTraceClock) == 120);

#undef VDSOLAB_ASSERT_GTOD_416_HEAD

// A field a layout does not have.
inline constexpr uint32_t kNoField = ~0u;

// Byte offsets of a vsyscall_gtod_data's fields from the start of the time
// data page (vvar), kNoField where the layout has no such field. Readers
// and writers of the 4.16 family take one of these tables.
struct GtodFields {
  uint32_t seq = kNoField;
  uint32_t vclock_mode = kNoField;
  uint32_t cycle_last = kNoField;
  uint32_t mask = kNoField;
  uint32_t mult = kNoField;
  uint32_t shift = kNoField;
  uint32_t wall_time_snsec = kNoField;
  uint32_t wall_time_sec = kNoField;
  uint32_t monotonic_time_sec = kNoField;
  uint32_t monotonic_time_snsec = kNoField;
  uint32_t wall_time_coarse_sec = kNoField;
  uint32_t wall_time_coarse_nsec = kNoField;
  uint32_t monotonic_time_coarse_sec = kNoField;
  uint32_t monotonic_time_coarse_nsec = kNoField;
  uint32_t tz_minuteswest = kNoField;
  uint32_t tz_dsttime = kNoField;
  // Added by the seeds' patches.
  uint32_t raw_cycle_last = kNoField;
  uint32_t raw_mask = kNoField;
  uint32_t raw_mult = kNoField;
  uint32_t raw_shift = kNoField;
  uint32_t has_rdtscp = kNoField;
  uint32_t tsc_khz = kNoField;
  uint32_t monotonic_time_raw_sec = kNoField;
  uint32_t monotonic_time_raw_nsec = kNoField;
  uint32_t trace_clock_is_sync = kNoField;
  uint32_t cpu_khz = kNoField;
};

namespace gtod_internal {

constexpr uint32_t At(size_t offset_in_struct) {
  return kVsyscallGtodOffset + static_cast<uint32_t>(offset_in_struct);
}

// The 4.16 fields of any of the structs above.
template <class S>
constexpr GtodFields BaseFields() {
  GtodFields f;
  f.seq = At(offsetof(S, seq));
  f.vclock_mode = At(offsetof(S, vclock_mode));
  f.cycle_last = At(offsetof(S, cycle_last));
  f.mask = At(offsetof(S, mask));
  f.mult = At(offsetof(S, mult));
  f.shift = At(offsetof(S, shift));
  f.wall_time_snsec = At(offsetof(S, wall_time_snsec));
  f.wall_time_sec = At(offsetof(S, wall_time_sec));
  f.monotonic_time_sec = At(offsetof(S, monotonic_time_sec));
  f.monotonic_time_snsec = At(offsetof(S, monotonic_time_snsec));
  f.wall_time_coarse_sec = At(offsetof(S, wall_time_coarse_sec));
  f.wall_time_coarse_nsec = At(offsetof(S, wall_time_coarse_nsec));
  f.monotonic_time_coarse_sec = At(offsetof(S, monotonic_time_coarse_sec));
  f.monotonic_time_coarse_nsec = At(offsetof(S, monotonic_time_coarse_nsec));
  f.tz_minuteswest = At(offsetof(S, tz_minuteswest));
  f.tz_dsttime = At(offsetof(S, tz_dsttime));
  return f;
}

// v1's raw fields, shared by its descendants.
template <class S>
constexpr GtodFields VasDiasFields() {
  GtodFields f = BaseFields<S>();
  f.raw_cycle_last = At(offsetof(S, raw_cycle_last));
  f.raw_mask = At(offsetof(S, raw_mask));
  f.raw_mult = At(offsetof(S, raw_mult));
  f.raw_shift = At(offsetof(S, raw_shift));
  f.monotonic_time_raw_sec = At(offsetof(S, monotonic_time_raw_sec));
  f.monotonic_time_raw_nsec = At(offsetof(S, monotonic_time_raw_nsec));
  return f;
}

}  // namespace gtod_internal

inline constexpr GtodFields kFields416 =
    gtod_internal::BaseFields<VsyscallGtodData416>();

inline constexpr GtodFields kFieldsVasDiasV1 =
    gtod_internal::VasDiasFields<VsyscallGtodDataVasDiasV1>();

inline constexpr GtodFields kFieldsVasDiasRdtscp = [] {
  using S = VsyscallGtodDataVasDiasRdtscp;
  GtodFields f = gtod_internal::VasDiasFields<S>();
  f.has_rdtscp = gtod_internal::At(offsetof(S, has_rdtscp));
  return f;
}();

inline constexpr GtodFields kFieldsTscCalibration = [] {
  using S = VsyscallGtodDataTscCalibration;
  GtodFields f = gtod_internal::VasDiasFields<S>();
  f.has_rdtscp = gtod_internal::At(offsetof(S, has_rdtscp));
  f.tsc_khz = gtod_internal::At(offsetof(S, tsc_khz));
  return f;
}();

inline constexpr GtodFields kFieldsRc5 = [] {
  using S = VsyscallGtodDataRc5;
  GtodFields f = gtod_internal::BaseFields<S>();
  f.raw_mult = gtod_internal::At(offsetof(S, raw_mult));
  f.raw_shift = gtod_internal::At(offsetof(S, raw_shift));
  f.monotonic_time_raw_sec =
      gtod_internal::At(offsetof(S, monotonic_time_raw_sec));
  f.monotonic_time_raw_nsec =
      gtod_internal::At(offsetof(S, monotonic_time_raw_nsec));
  return f;
}();

inline constexpr GtodFields kFieldsTraceClock = [] {
  using S = VsyscallGtodDataTraceClock;
  GtodFields f = gtod_internal::BaseFields<S>();
  f.trace_clock_is_sync = gtod_internal::At(offsetof(S, trace_clock_is_sync));
  f.cpu_khz = gtod_internal::At(offsetof(S, cpu_khz));
  return f;
}();

}  // namespace vdsolab::variants::gtod

#endif  // VDSOLAB_VARIANTS_GTOD_VGTOD_416_H_
