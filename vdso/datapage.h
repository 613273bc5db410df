// File: vdso/datapage.h
//
// The x86-64 vDSO time data page in the kernel's layout (include/vdso/
// datapage.h, 6.17+: struct vdso_time_data with struct vdso_clock records,
// CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT's max_cycles, and the POSIX aux clock
// records). `vdsolab inspect` checks a running kernel's page against these
// offsets (tz_minuteswest at 2320, hrtimer_res at 2328; see
// docs/vvar-layout.md).
//
// These structs describe offsets only. The page is memory: readers and the
// writer reach fields as bytes at these offsets (design rule 1), and nothing
// ever constructs these types over the page.

#ifndef VDSOLAB_VDSO_DATAPAGE_H_
#define VDSOLAB_VDSO_DATAPAGE_H_

#include <cstddef>
#include <cstdint>

#include "common/clockid.h"

namespace vdsolab::vdso {

inline constexpr size_t kPageSize = 4096;

// Indices of the two clock records (enum vdso_clock_bases... CS_*).
inline constexpr int kCsHresCoarse = 0;
inline constexpr int kCsRaw = 1;
inline constexpr int kCsBases = 2;
inline constexpr int kVdsoBaseAux = 0;  // Aux clocks use basetime[0].

// struct vdso_timestamp: for hres bases nsec is ns << shift; for the coarse
// bases it is plain ns.
struct VdsoTimestamp {
  uint64_t sec;
  uint64_t nsec;
};

// struct vdso_clock (6.15+), x86-64 with max_cycles.
struct VdsoClock {
  uint32_t seq;
  int32_t clock_mode;
  uint64_t cycle_last;
  uint64_t max_cycles;
  uint64_t mask;
  uint32_t mult;
  uint32_t shift;
  VdsoTimestamp basetime[kVdsoBases];  // Union with timens offset[].
};

// struct vdso_time_data (6.17+), ____cacheline_aligned.
struct alignas(64) VdsoTimeData {
  VdsoClock clock_data[kCsBases];
  VdsoClock aux_clock_data[kMaxAuxClocks];
  int32_t tz_minuteswest;
  int32_t tz_dsttime;
  uint32_t hrtimer_res;
  uint32_t unused;
};

static_assert(sizeof(VdsoTimestamp) == 16);
static_assert(offsetof(VdsoClock, seq) == 0);
static_assert(offsetof(VdsoClock, clock_mode) == 4);
static_assert(offsetof(VdsoClock, cycle_last) == 8);
static_assert(offsetof(VdsoClock, max_cycles) == 16);
static_assert(offsetof(VdsoClock, mask) == 24);
static_assert(offsetof(VdsoClock, mult) == 32);
static_assert(offsetof(VdsoClock, shift) == 36);
static_assert(offsetof(VdsoClock, basetime) == 40);
static_assert(sizeof(VdsoClock) == 232);
static_assert(offsetof(VdsoTimeData, clock_data) == 0);
static_assert(offsetof(VdsoTimeData, aux_clock_data) == 464);
static_assert(offsetof(VdsoTimeData, tz_minuteswest) == 2320);
static_assert(offsetof(VdsoTimeData, tz_dsttime) == 2324);
static_assert(offsetof(VdsoTimeData, hrtimer_res) == 2328);
static_assert(sizeof(VdsoTimeData) == 2368);
static_assert(sizeof(VdsoTimeData) <= kPageSize);

// Byte offsets, relative to a struct vdso_clock or to the page.
inline constexpr uint32_t kVcSeq = offsetof(VdsoClock, seq);
inline constexpr uint32_t kVcClockMode = offsetof(VdsoClock, clock_mode);
inline constexpr uint32_t kVcCycleLast = offsetof(VdsoClock, cycle_last);
inline constexpr uint32_t kVcMaxCycles = offsetof(VdsoClock, max_cycles);
inline constexpr uint32_t kVcMask = offsetof(VdsoClock, mask);
inline constexpr uint32_t kVcMult = offsetof(VdsoClock, mult);
inline constexpr uint32_t kVcShift = offsetof(VdsoClock, shift);

constexpr uint32_t VcBasetimeSec(int idx) {
  return static_cast<uint32_t>(offsetof(VdsoClock, basetime) +
                               sizeof(VdsoTimestamp) * idx);
}
constexpr uint32_t VcBasetimeNsec(int idx) {
  return VcBasetimeSec(idx) + static_cast<uint32_t>(sizeof(uint64_t));
}

// struct timens_offset { s64 sec; u64 nsec; }: in a time namespace page
// the union holds offset[clk] where the time page has basetime[clk].
constexpr uint32_t VcOffsetSec(int clk) { return VcBasetimeSec(clk); }
constexpr uint32_t VcOffsetNsec(int clk) { return VcBasetimeNsec(clk); }

// Page offset of clock_data[cs] / aux_clock_data[idx].
constexpr uint32_t ClockDataOffset(int cs) {
  return static_cast<uint32_t>(offsetof(VdsoTimeData, clock_data) +
                               sizeof(VdsoClock) * cs);
}
constexpr uint32_t AuxClockDataOffset(int idx) {
  return static_cast<uint32_t>(offsetof(VdsoTimeData, aux_clock_data) +
                               sizeof(VdsoClock) * idx);
}

// The vvar area as x86-64 6.13+ maps it: four data pages ([vvar]: time,
// time namespace, random, arch), then the vclock pages ([vvar_vclock]: the
// pvclock page and the Hyper-V TSC page). The vDSO reaches them RIP-relative,
// so only these relative positions matter.
inline constexpr size_t kVvarDataPages = 4;
inline constexpr size_t kVvarVclockPages = 2;
inline constexpr uint32_t kPvclockPageOffset =
    static_cast<uint32_t>(kVvarDataPages * kPageSize);
inline constexpr uint32_t kHvclockPageOffset =
    static_cast<uint32_t>((kVvarDataPages + 1) * kPageSize);

// The pages of that area a task outside a time namespace cannot read: the
// kernel's fault handlers (lib/vdso/datastore.c vvar_fault(), x86
// vvar_vclock_fault()) answer SIGBUS for the time namespace page, the arch
// page (x86 has no arch data) and the Hyper-V page off Hyper-V. Seen on the
// project's 6.18 host: pages 1 and 3 and the Hyper-V page SIGBUS, pages 0
// and 2 and the pvclock page (kvm-clock in use since boot) readable. What
// each is, for a report; nullptr for a readable page or past the area.
constexpr const char* VvarUnreadablePage(uint64_t offset);
// They are the odd pages of the area (1, 3, 5): a hot path tests a bit.
constexpr bool VvarPageIsOdd(uint64_t offset) {
  return ((offset / kPageSize) & 1) != 0;
}
constexpr const char* VvarUnreadablePage(uint64_t offset) {
  switch (offset / kPageSize) {
    case 1:
      return "the time namespace page, which the kernel maps only for a task "
             "in a time namespace";
    case 3:
      return "the arch data page, which the kernel does not map on x86";
    case kVvarDataPages + 1:
      return "the Hyper-V TSC page, which the kernel maps only on Hyper-V";
    default:
      return nullptr;
  }
}
static_assert([] {
  for (uint64_t page = 0; page < kVvarDataPages + kVvarVclockPages; ++page) {
    if (VvarPageIsOdd(page * kPageSize) !=
        (VvarUnreadablePage(page * kPageSize) != nullptr)) {
      return false;
    }
  }
  return true;
}());

// struct pvclock_vcpu_time_info (arch/x86/include/asm/pvclock-abi.h): the
// hypervisor's per-vCPU clock parameters, at the start of the pvclock page
// (vCPU 0's, which the vDSO reads).
struct PvclockVcpuTimeInfo {
  uint32_t version;  // Odd while the hypervisor updates the rest.
  uint32_t pad0;
  uint64_t tsc_timestamp;
  uint64_t system_time;  // ns at tsc_timestamp.
  uint32_t tsc_to_system_mul;
  int8_t tsc_shift;
  uint8_t flags;
  uint8_t pad[2];
};
static_assert(offsetof(PvclockVcpuTimeInfo, version) == 0);
static_assert(offsetof(PvclockVcpuTimeInfo, tsc_timestamp) == 8);
static_assert(offsetof(PvclockVcpuTimeInfo, system_time) == 16);
static_assert(offsetof(PvclockVcpuTimeInfo, tsc_to_system_mul) == 24);
static_assert(offsetof(PvclockVcpuTimeInfo, tsc_shift) == 28);
static_assert(offsetof(PvclockVcpuTimeInfo, flags) == 29);
static_assert(sizeof(PvclockVcpuTimeInfo) == 32);

inline constexpr uint32_t kPvtiVersion = offsetof(PvclockVcpuTimeInfo, version);
inline constexpr uint32_t kPvtiTscTimestamp =
    offsetof(PvclockVcpuTimeInfo, tsc_timestamp);
inline constexpr uint32_t kPvtiSystemTime =
    offsetof(PvclockVcpuTimeInfo, system_time);
inline constexpr uint32_t kPvtiMul =
    offsetof(PvclockVcpuTimeInfo, tsc_to_system_mul);
inline constexpr uint32_t kPvtiShift = offsetof(PvclockVcpuTimeInfo, tsc_shift);
inline constexpr uint32_t kPvtiFlags = offsetof(PvclockVcpuTimeInfo, flags);
inline constexpr uint8_t kPvclockTscStableBit = 1
                                                << 0;  // PVCLOCK_TSC_STABLE_BIT

inline constexpr uint32_t kTzMinuteswest =
    offsetof(VdsoTimeData, tz_minuteswest);
inline constexpr uint32_t kTzDsttime = offsetof(VdsoTimeData, tz_dsttime);
inline constexpr uint32_t kHrtimerRes = offsetof(VdsoTimeData, hrtimer_res);

}  // namespace vdsolab::vdso

#endif  // VDSOLAB_VDSO_DATAPAGE_H_
