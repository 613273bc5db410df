// File: host/live_vvar.h
//
// The running kernel's vDSO data, read from this process's own mappings:
// where [vvar], [vvar_vclock] and [vdso] are, a consistent copy of the time
// data page (under its seq protocol) and of the pvclock page (under its
// version protocol), and whether the layout is one vdsolab decodes.

#ifndef VDSOLAB_HOST_LIVE_VVAR_H_
#define VDSOLAB_HOST_LIVE_VVAR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace vdsolab::host {

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
};

struct VdsoMappings {
  std::optional<Mapping> vvar;         // The data pages; the time page first.
  std::optional<Mapping> vvar_vclock;  // pvclock page, Hyper-V page.
  std::optional<Mapping> vdso;         // The code.
};

// Parses /proc/self/maps (or `maps_text`, for tests).
absl::StatusOr<VdsoMappings> FindVdsoMappings();
VdsoMappings ParseVdsoMappings(const std::string& maps_text);

struct KernelVersion {
  int major = 0;
  int minor = 0;
  std::string release;  // uname -r
};
KernelVersion RunningKernel();

// One consistent copy of the live data.
struct LiveSnapshot {
  std::vector<uint8_t> time_page;     // 4096 bytes: struct vdso_time_data.
  std::vector<uint8_t> pvclock_page;  // 4096 bytes when clock_mode is
                                      // PVCLOCK, else empty.
  uint64_t taken_ns = 0;  // CLOCK_MONOTONIC_RAW (by syscall) when copied.
  uint32_t retries = 0;   // Copies discarded because the kernel updated.
};

// CONFIG_HZ as the kernel reports it: clock_getres(CLOCK_MONOTONIC_COARSE)
// is TICK_NSEC. 0 if unavailable.
int KernelHz();

// Copies the time page under the seq protocol (both records' seq even and
// unchanged across the copy), and the pvclock page under its version when
// the clock mode is PVCLOCK. Retries on races; fails after many.
absl::StatusOr<LiveSnapshot> TakeSnapshot(const VdsoMappings& maps);

// Whether the live page and pvclock page still hold what `snap` copied
// (the seqs and the pvclock version are unchanged).
bool StillCurrent(const VdsoMappings& maps, const LiveSnapshot& snap);

// Checks that this is a machine and layout vdsolab decodes: x86-64, Linux
// 6.15+ (struct vdso_clock with max_cycles; 6.17+ adds the aux records and
// moves the tail), even and equal seqs, a known clock mode, the same
// cycle_last/mask/max_cycles in both records, sane mult/shift, max_cycles
// as clocksource registration computes it from the raw mult. The message
// says plainly what does not fit.
absl::Status CheckLayout(const LiveSnapshot& snap, const KernelVersion& kernel);

// Where tz_minuteswest lives for this kernel (464 before 6.17, 2320 after).
uint32_t TailOffset(const KernelVersion& kernel);

}  // namespace vdsolab::host

#endif  // VDSOLAB_HOST_LIVE_VVAR_H_
