// File: variants/gtod/vgtod_420.h
//
// struct vsyscall_gtod_data of the 4.20-5.2 x86-64 vDSO (arch/x86/include/
// asm/vgtod.h after "x86/vdso: Rearrange do_hres() to improve code
// generation" and the basetime[] rework, 4.20), and seed 003's version of
// it. Still at vvar+128; the generic vDSO (5.3) replaced it.
//
// Offsets only (design rule 1); readers and writers use Gtod420Fields.

#ifndef VDSOLAB_VARIANTS_GTOD_VGTOD_420_H_
#define VDSOLAB_VARIANTS_GTOD_VGTOD_420_H_

#include <cstddef>
#include <cstdint>

#include "common/clockid.h"
#include "variants/gtod/vgtod_416.h"

namespace vdsolab::variants::gtod {

// struct vgtod_ts: for the hres clocks nsec is ns << shift; for the coarse
// clocks it is plain ns.
struct VgtodTs {
  uint64_t sec;
  uint64_t nsec;
};

inline constexpr int kVgtodBases = kClockTai + 1;  // VGTOD_BASES
// VGTOD_HRES / VGTOD_COARSE: the clocks do_hres() and do_coarse() serve.
inline constexpr uint32_t kVgtodHres =
    (1u << kClockRealtime) | (1u << kClockMonotonic) | (1u << kClockTai);
inline constexpr uint32_t kVgtodCoarse =
    (1u << kClockRealtimeCoarse) | (1u << kClockMonotonicCoarse);

// Linux 4.20 .. 5.2.
struct VsyscallGtodData420 {
  uint32_t seq;
  int32_t vclock_mode;
  uint64_t cycle_last;
  uint64_t mask;
  uint32_t mult;
  uint32_t shift;
  VgtodTs basetime[kVgtodBases];
  int32_t tz_minuteswest;
  int32_t tz_dsttime;
};

// Seed 003 (Sverdlin v2): raw_mult and raw_shift after shift.
struct VsyscallGtodDataSverdlin {
  uint32_t seq;
  int32_t vclock_mode;
  uint64_t cycle_last;
  uint64_t mask;
  uint32_t mult;
  uint32_t shift;
  uint32_t raw_mult;
  uint32_t raw_shift;
  VgtodTs basetime[kVgtodBases];
  int32_t tz_minuteswest;
  int32_t tz_dsttime;
};

static_assert(sizeof(VgtodTs) == 16);
static_assert(offsetof(VsyscallGtodData420, seq) == 0);
static_assert(offsetof(VsyscallGtodData420, vclock_mode) == 4);
static_assert(offsetof(VsyscallGtodData420, cycle_last) == 8);
static_assert(offsetof(VsyscallGtodData420, mask) == 16);
static_assert(offsetof(VsyscallGtodData420, mult) == 24);
static_assert(offsetof(VsyscallGtodData420, shift) == 28);
static_assert(offsetof(VsyscallGtodData420, basetime) == 32);
static_assert(offsetof(VsyscallGtodData420, tz_minuteswest) == 224);
static_assert(offsetof(VsyscallGtodData420, tz_dsttime) == 228);
static_assert(sizeof(VsyscallGtodData420) == 232);

static_assert(offsetof(VsyscallGtodDataSverdlin, seq) == 0);
static_assert(offsetof(VsyscallGtodDataSverdlin, vclock_mode) == 4);
static_assert(offsetof(VsyscallGtodDataSverdlin, cycle_last) == 8);
static_assert(offsetof(VsyscallGtodDataSverdlin, mask) == 16);
static_assert(offsetof(VsyscallGtodDataSverdlin, mult) == 24);
static_assert(offsetof(VsyscallGtodDataSverdlin, shift) == 28);
static_assert(offsetof(VsyscallGtodDataSverdlin, raw_mult) == 32);
static_assert(offsetof(VsyscallGtodDataSverdlin, raw_shift) == 36);
static_assert(offsetof(VsyscallGtodDataSverdlin, basetime) == 40);
static_assert(offsetof(VsyscallGtodDataSverdlin, tz_minuteswest) == 232);
static_assert(offsetof(VsyscallGtodDataSverdlin, tz_dsttime) == 236);
static_assert(sizeof(VsyscallGtodDataSverdlin) == 240);

// Byte offsets from the start of the time data page; kNoField if absent.
struct Gtod420Fields {
  uint32_t seq = kNoField;
  uint32_t vclock_mode = kNoField;
  uint32_t cycle_last = kNoField;
  uint32_t mask = kNoField;
  uint32_t mult = kNoField;
  uint32_t shift = kNoField;
  uint32_t raw_mult = kNoField;
  uint32_t raw_shift = kNoField;
  uint32_t basetime = kNoField;  // basetime[0].sec
  uint32_t tz_minuteswest = kNoField;
  uint32_t tz_dsttime = kNoField;

  constexpr uint32_t BasetimeSec(ClockId clk) const {
    return basetime +
           static_cast<uint32_t>(sizeof(VgtodTs)) * static_cast<uint32_t>(clk);
  }
  constexpr uint32_t BasetimeNsec(ClockId clk) const {
    return BasetimeSec(clk) + static_cast<uint32_t>(offsetof(VgtodTs, nsec));
  }
};

namespace gtod_internal {

template <class S>
constexpr Gtod420Fields Fields420() {
  Gtod420Fields f;
  f.seq = At(offsetof(S, seq));
  f.vclock_mode = At(offsetof(S, vclock_mode));
  f.cycle_last = At(offsetof(S, cycle_last));
  f.mask = At(offsetof(S, mask));
  f.mult = At(offsetof(S, mult));
  f.shift = At(offsetof(S, shift));
  f.basetime = At(offsetof(S, basetime));
  f.tz_minuteswest = At(offsetof(S, tz_minuteswest));
  f.tz_dsttime = At(offsetof(S, tz_dsttime));
  return f;
}

}  // namespace gtod_internal

inline constexpr Gtod420Fields kFields420 =
    gtod_internal::Fields420<VsyscallGtodData420>();

inline constexpr Gtod420Fields kFieldsSverdlin = [] {
  using S = VsyscallGtodDataSverdlin;
  Gtod420Fields f = gtod_internal::Fields420<S>();
  f.raw_mult = gtod_internal::At(offsetof(S, raw_mult));
  f.raw_shift = gtod_internal::At(offsetof(S, raw_shift));
  return f;
}();

}  // namespace vdsolab::variants::gtod

#endif  // VDSOLAB_VARIANTS_GTOD_VGTOD_420_H_
