// File: variants/perf/perf_mmap_page.h
//
// The self-monitoring header of struct perf_event_mmap_page
// (include/uapi/linux/perf_event.h; these offsets hold from 5.12, which
// added time_cycles/time_mask, through 6.18, checked against torvalds/linux
// and the 6.1 tree): the seqcount `lock` and the TSC -> perf time conversion
// (time_mult, time_shift, time_offset, time_zero).
//
// Deviation: in the kernel this is the first page of a perf event's ring
// buffer, a mapping of its own (mmap() of the perf_event_open() fd), not the
// vvar area. The simulation has one page, so the perf-mmap variant puts the
// struct at offset 0 of the simulated time data page.
//
// The struct describes offsets only; nothing constructs it over the page.

#ifndef VDSOLAB_VARIANTS_PERF_PERF_MMAP_PAGE_H_
#define VDSOLAB_VARIANTS_PERF_PERF_MMAP_PAGE_H_

#include <cstddef>
#include <cstdint>

namespace vdsolab::variants::perf {

// struct perf_event_mmap_page, up to the data ring's control words.
struct PerfEventMmapPage {
  uint32_t version;         // Never written by the kernel (reads 0).
  uint32_t compat_version;  // Never written by the kernel (reads 0).
  uint32_t lock;            // The seqcount (++ before and after a write).
  uint32_t index;           // rdpmc index + 1; 0: no user rdpmc.
  int64_t offset;           // Added to the rdpmc value.
  uint64_t time_enabled;
  uint64_t time_running;
  uint64_t capabilities;  // Union with the cap_* bitfields below.
  uint16_t pmc_width;
  uint16_t time_shift;
  uint32_t time_mult;
  uint64_t time_offset;
  uint64_t time_zero;
  uint32_t size;  // offsetof(__reserved), set at mmap() time.
  uint32_t reserved_1;
  uint64_t time_cycles;  // cap_user_time_short (5.12+): narrow counters.
  uint64_t time_mask;
  uint8_t reserved[116 * 8];  // "align to 1k".
  uint64_t data_head;
};

static_assert(offsetof(PerfEventMmapPage, version) == 0);
static_assert(offsetof(PerfEventMmapPage, compat_version) == 4);
static_assert(offsetof(PerfEventMmapPage, lock) == 8);
static_assert(offsetof(PerfEventMmapPage, index) == 12);
static_assert(offsetof(PerfEventMmapPage, offset) == 16);
static_assert(offsetof(PerfEventMmapPage, time_enabled) == 24);
static_assert(offsetof(PerfEventMmapPage, time_running) == 32);
static_assert(offsetof(PerfEventMmapPage, capabilities) == 40);
static_assert(offsetof(PerfEventMmapPage, pmc_width) == 48);
static_assert(offsetof(PerfEventMmapPage, time_shift) == 50);
static_assert(offsetof(PerfEventMmapPage, time_mult) == 52);
static_assert(offsetof(PerfEventMmapPage, time_offset) == 56);
static_assert(offsetof(PerfEventMmapPage, time_zero) == 64);
static_assert(offsetof(PerfEventMmapPage, size) == 72);
static_assert(offsetof(PerfEventMmapPage, reserved_1) == 76);
static_assert(offsetof(PerfEventMmapPage, time_cycles) == 80);
static_assert(offsetof(PerfEventMmapPage, time_mask) == 88);
static_assert(offsetof(PerfEventMmapPage, reserved) == 96);
static_assert(offsetof(PerfEventMmapPage, data_head) == 1024);

// Byte offsets from the start of the struct (= the simulated page).
inline constexpr uint32_t kPcVersion = offsetof(PerfEventMmapPage, version);
inline constexpr uint32_t kPcCompatVersion =
    offsetof(PerfEventMmapPage, compat_version);
inline constexpr uint32_t kPcLock = offsetof(PerfEventMmapPage, lock);
inline constexpr uint32_t kPcIndex = offsetof(PerfEventMmapPage, index);
inline constexpr uint32_t kPcOffset = offsetof(PerfEventMmapPage, offset);
inline constexpr uint32_t kPcTimeEnabled =
    offsetof(PerfEventMmapPage, time_enabled);
inline constexpr uint32_t kPcTimeRunning =
    offsetof(PerfEventMmapPage, time_running);
inline constexpr uint32_t kPcCapabilities =
    offsetof(PerfEventMmapPage, capabilities);
inline constexpr uint32_t kPcPmcWidth = offsetof(PerfEventMmapPage, pmc_width);
inline constexpr uint32_t kPcTimeShift =
    offsetof(PerfEventMmapPage, time_shift);
inline constexpr uint32_t kPcTimeMult = offsetof(PerfEventMmapPage, time_mult);
inline constexpr uint32_t kPcTimeOffset =
    offsetof(PerfEventMmapPage, time_offset);
inline constexpr uint32_t kPcTimeZero = offsetof(PerfEventMmapPage, time_zero);
inline constexpr uint32_t kPcSize = offsetof(PerfEventMmapPage, size);
inline constexpr uint32_t kPcTimeCycles =
    offsetof(PerfEventMmapPage, time_cycles);
inline constexpr uint32_t kPcTimeMask = offsetof(PerfEventMmapPage, time_mask);
// perf_event_init_userpage(): size = offsetof(struct ..., __reserved).
inline constexpr uint32_t kPcHeaderSize = offsetof(PerfEventMmapPage, reserved);

// The capabilities bitfield (little-endian bit order, bit 0 first).
inline constexpr uint64_t kCapBit0IsDeprecated = 1ull << 1;
inline constexpr uint64_t kCapUserRdpmc = 1ull << 2;
inline constexpr uint64_t kCapUserTime = 1ull << 3;
inline constexpr uint64_t kCapUserTimeZero = 1ull << 4;
inline constexpr uint64_t kCapUserTimeShort = 1ull << 5;

}  // namespace vdsolab::variants::perf

#endif  // VDSOLAB_VARIANTS_PERF_PERF_MMAP_PAGE_H_
