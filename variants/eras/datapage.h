// File: variants/eras/datapage.h
//
// The x86-64 vDSO time data of the eras before the 6.17 aux clocks, as
// offsets (include/vdso/datapage.h of each era; kernel-reference.md §1.2,
// §1.3):
//
// - 5.3-6.9: struct vdso_data, 240 bytes, two records (CS_HRES_COARSE,
//   CS_RAW) at vvar+128 (x86 DECLARE_VVAR(128, struct vdso_data,
//   _vdso_data), checked in the 6.1 tree's arch/x86/include/asm/vvar.h).
// - 6.10-6.12: the same with CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT's
//   max_cycles after cycle_last: 248-byte records, still at vvar+128.
// - 6.15/6.16: struct vdso_time_data with two struct vdso_clock records
//   (vdso/datapage.h's VdsoClock) at the start of the time page, then the
//   tz and hrtimer_res tail at 464 (no aux clock records yet).
//
// As in vdso/datapage.h, the structs only compute offsets: readers and
// writers reach the page as bytes (design rule 1).

#ifndef VDSOLAB_VARIANTS_ERAS_DATAPAGE_H_
#define VDSOLAB_VARIANTS_ERAS_DATAPAGE_H_

#include <cstddef>
#include <cstdint>

#include "common/clockid.h"
#include "vdso/datapage.h"

namespace vdsolab::variants::eras {

// struct vdso_data, 5.3-6.9 (x86-64). The kernel's trailing
// `struct arch_vdso_data arch_data` is empty on x86 and takes no bytes in
// GNU C; a C++ empty member would take one, so it is left out.
struct VdsoData53 {
  uint32_t seq;
  int32_t clock_mode;
  uint64_t cycle_last;
  uint64_t mask;
  uint32_t mult;
  uint32_t shift;
  vdso::VdsoTimestamp basetime[kVdsoBases];  // 5.6+: union with offset[].
  int32_t tz_minuteswest;
  int32_t tz_dsttime;
  uint32_t hrtimer_res;
  uint32_t unused;
};

static_assert(offsetof(VdsoData53, seq) == 0);
static_assert(offsetof(VdsoData53, clock_mode) == 4);
static_assert(offsetof(VdsoData53, cycle_last) == 8);
static_assert(offsetof(VdsoData53, mask) == 16);
static_assert(offsetof(VdsoData53, mult) == 24);
static_assert(offsetof(VdsoData53, shift) == 28);
static_assert(offsetof(VdsoData53, basetime) == 32);
static_assert(offsetof(VdsoData53, tz_minuteswest) == 224);
static_assert(offsetof(VdsoData53, tz_dsttime) == 228);
static_assert(offsetof(VdsoData53, hrtimer_res) == 232);
static_assert(sizeof(VdsoData53) == 240);

// struct vdso_data, 6.10-6.12, with CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
// (only x86 selects it).
struct VdsoData610 {
  uint32_t seq;
  int32_t clock_mode;
  uint64_t cycle_last;
  uint64_t max_cycles;
  uint64_t mask;
  uint32_t mult;
  uint32_t shift;
  vdso::VdsoTimestamp basetime[kVdsoBases];
  int32_t tz_minuteswest;
  int32_t tz_dsttime;
  uint32_t hrtimer_res;
  uint32_t unused;
};

static_assert(offsetof(VdsoData610, seq) == 0);
static_assert(offsetof(VdsoData610, clock_mode) == 4);
static_assert(offsetof(VdsoData610, cycle_last) == 8);
static_assert(offsetof(VdsoData610, max_cycles) == 16);
static_assert(offsetof(VdsoData610, mask) == 24);
static_assert(offsetof(VdsoData610, mult) == 32);
static_assert(offsetof(VdsoData610, shift) == 36);
static_assert(offsetof(VdsoData610, basetime) == 40);
static_assert(offsetof(VdsoData610, tz_minuteswest) == 232);
static_assert(offsetof(VdsoData610, tz_dsttime) == 236);
static_assert(offsetof(VdsoData610, hrtimer_res) == 240);
static_assert(sizeof(VdsoData610) == 248);

// struct vdso_time_data, 6.15/6.16: vdso/datapage.h's 6.17 struct without
// aux_clock_data, so the tail follows clock_data[CS_RAW] directly.
struct alignas(64) VdsoTimeData615 {
  vdso::VdsoClock clock_data[vdso::kCsBases];
  int32_t tz_minuteswest;
  int32_t tz_dsttime;
  uint32_t hrtimer_res;
  uint32_t unused;
};

static_assert(sizeof(vdso::VdsoClock) == 232);
static_assert(offsetof(VdsoTimeData615, clock_data) == 0);
static_assert(offsetof(VdsoTimeData615, tz_minuteswest) == 464);
static_assert(offsetof(VdsoTimeData615, tz_dsttime) == 468);
static_assert(offsetof(VdsoTimeData615, hrtimer_res) == 472);
static_assert(sizeof(VdsoTimeData615) == 512);

// A field the record does not have.
inline constexpr uint32_t kNoField = UINT32_MAX;

// One record's byte offsets, as the era reader and writer templates take
// them. `tz_minuteswest`..`hrtimer_res` are kNoField for struct vdso_clock
// (6.15+ keeps them once, in struct vdso_time_data).
struct RecordOffsets {
  uint32_t seq;
  uint32_t clock_mode;
  uint32_t cycle_last;
  uint32_t max_cycles;  // kNoField before 6.10.
  uint32_t mask;
  uint32_t mult;
  uint32_t shift;
  uint32_t basetime;
  uint32_t tz_minuteswest;
  uint32_t tz_dsttime;
  uint32_t hrtimer_res;
  uint32_t size;

  constexpr uint32_t BasetimeSec(int idx) const {
    return basetime + static_cast<uint32_t>(sizeof(vdso::VdsoTimestamp)) *
                          static_cast<uint32_t>(idx);
  }
  constexpr uint32_t BasetimeNsec(int idx) const {
    return BasetimeSec(idx) + static_cast<uint32_t>(sizeof(uint64_t));
  }
};

inline constexpr RecordOffsets kVdsoData53{offsetof(VdsoData53, seq),
                                           offsetof(VdsoData53, clock_mode),
                                           offsetof(VdsoData53, cycle_last),
                                           kNoField,
                                           offsetof(VdsoData53, mask),
                                           offsetof(VdsoData53, mult),
                                           offsetof(VdsoData53, shift),
                                           offsetof(VdsoData53, basetime),
                                           offsetof(VdsoData53, tz_minuteswest),
                                           offsetof(VdsoData53, tz_dsttime),
                                           offsetof(VdsoData53, hrtimer_res),
                                           sizeof(VdsoData53)};

inline constexpr RecordOffsets kVdsoData610{
    offsetof(VdsoData610, seq),
    offsetof(VdsoData610, clock_mode),
    offsetof(VdsoData610, cycle_last),
    offsetof(VdsoData610, max_cycles),
    offsetof(VdsoData610, mask),
    offsetof(VdsoData610, mult),
    offsetof(VdsoData610, shift),
    offsetof(VdsoData610, basetime),
    offsetof(VdsoData610, tz_minuteswest),
    offsetof(VdsoData610, tz_dsttime),
    offsetof(VdsoData610, hrtimer_res),
    sizeof(VdsoData610)};

inline constexpr RecordOffsets kVdsoClock615{
    vdso::kVcSeq,       vdso::kVcClockMode,
    vdso::kVcCycleLast, vdso::kVcMaxCycles,
    vdso::kVcMask,      vdso::kVcMult,
    vdso::kVcShift,     vdso::VcBasetimeSec(0),
    kNoField,           kNoField,
    kNoField,           sizeof(vdso::VdsoClock)};

// Where _vdso_data[0] sits in the vvar page, 5.3-6.12 (DECLARE_VVAR(128,
// ...)); offsets in this project are from the start of that page.
inline constexpr uint32_t kVvarVdsoDataOffset = 128;

// Page offset of record `cs` (CS_HRES_COARSE / CS_RAW) of a pre-6.15 page.
constexpr uint32_t VdsoDataOffset(const RecordOffsets& r, int cs) {
  return kVvarVdsoDataOffset + r.size * static_cast<uint32_t>(cs);
}

// 6.15: the tail of struct vdso_time_data.
inline constexpr uint32_t kTzMinuteswest615 =
    offsetof(VdsoTimeData615, tz_minuteswest);
inline constexpr uint32_t kTzDsttime615 = offsetof(VdsoTimeData615, tz_dsttime);
inline constexpr uint32_t kHrtimerRes615 =
    offsetof(VdsoTimeData615, hrtimer_res);

}  // namespace vdsolab::variants::eras

#endif  // VDSOLAB_VARIANTS_ERAS_DATAPAGE_H_
