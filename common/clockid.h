// File: common/clockid.h
//
// POSIX clock ids and the vDSO's clock masks, as in include/uapi/linux/time.h
// and include/vdso/datapage.h (5.3 .. 6.18). Values are ABI, not ours to pick.

#ifndef VDSOLAB_COMMON_CLOCKID_H_
#define VDSOLAB_COMMON_CLOCKID_H_

#include <cstdint>
#include <string>

namespace vdsolab {

using ClockId = int32_t;  // clockid_t

inline constexpr ClockId kClockRealtime = 0;
inline constexpr ClockId kClockMonotonic = 1;
inline constexpr ClockId kClockProcessCputimeId = 2;
inline constexpr ClockId kClockThreadCputimeId = 3;
inline constexpr ClockId kClockMonotonicRaw = 4;
inline constexpr ClockId kClockRealtimeCoarse = 5;
inline constexpr ClockId kClockMonotonicCoarse = 6;
inline constexpr ClockId kClockBoottime = 7;
inline constexpr ClockId kClockRealtimeAlarm = 8;
inline constexpr ClockId kClockBoottimeAlarm = 9;
inline constexpr ClockId kClockSgiCycle = 10;  // Unused since 4.x.
inline constexpr ClockId kClockTai = 11;

inline constexpr int kMaxClocks = 16;             // MAX_CLOCKS
inline constexpr int kVdsoBases = kClockTai + 1;  // VDSO_BASES

// POSIX auxiliary clocks (6.17+): CLOCK_AUX .. CLOCK_AUX_LAST.
inline constexpr ClockId kClockAux = kMaxClocks;
inline constexpr int kMaxAuxClocks = 8;
inline constexpr ClockId kClockAuxLast = kClockAux + kMaxAuxClocks - 1;

// Which clock ids the generic vDSO serves from which record.
inline constexpr uint32_t kVdsoHres =
    (1u << kClockRealtime) | (1u << kClockMonotonic) | (1u << kClockBoottime) |
    (1u << kClockTai);
inline constexpr uint32_t kVdsoCoarse =
    (1u << kClockRealtimeCoarse) | (1u << kClockMonotonicCoarse);
inline constexpr uint32_t kVdsoRaw = 1u << kClockMonotonicRaw;
inline constexpr uint32_t kVdsoAux = 0x00FF0000u;  // GENMASK(23, 16)

// The clock ids the x86-64 vDSO answers without a syscall (when the clock
// mode allows), in id order: the members of kVdsoHres, kVdsoCoarse and
// kVdsoRaw.
inline constexpr ClockId kVdsoServedClocks[] = {kClockRealtime,
                                                kClockMonotonic,
                                                kClockMonotonicRaw,
                                                kClockRealtimeCoarse,
                                                kClockMonotonicCoarse,
                                                kClockBoottime,
                                                kClockTai};

// The kernel's spelling, e.g. "CLOCK_MONOTONIC_RAW"; "clock 12" for ids
// without a name.
std::string ClockName(ClockId clock);

}  // namespace vdsolab

#endif  // VDSOLAB_COMMON_CLOCKID_H_
