// File: variants/perf/perf_mmap_writer.h
//
// The kernel side of the perf mmap page's time conversion on x86:
// the TSC's cyc2ns scale (arch/x86/kernel/tsc.c __set_cyc2ns_scale(),
// mainline since the 2019 shift-32 clamp, unchanged through 6.18) and
// perf_event_update_userpage() (kernel/events/core.c) with the x86
// arch_perf_update_userpage() (arch/x86/events/core.c), as an ordered store
// list under the page's own seqcount `lock`.
//
// Modelled state (docs in the variant's provenance and in the report):
// - cyc2ns is set once, at boot, from PublishContext::tsc_khz with
//   tsc_now = PublishContext::boot_counter and ns_now = 0 (cyc2ns is zeroed
//   before its first __set_cyc2ns_scale(), so cycles_2_ns() returns 0).
//   Later recalibration (tsc_refine_calibration_work) is not modelled.
// - __sched_clock_offset is 0 (the kernel sets it so that local_clock()
//   matched ktime_get_ns() when sched_clock became stable).
// - The event is a self-monitoring event enabled at boot and always
//   running (time_enabled == time_running == local_clock() - 0), without
//   user rdpmc (index 0, offset 0).
// - "now" of an update is local_clock() at the timekeeper's cycle_last.
// - The page is rewritten at every timekeeper update the simulation
//   publishes. The kernel rewrites it far less often: on event schedule-in,
//   on PERF_EVENT_IOC_* and on counter overflow, from the CPU the event
//   runs on.

#ifndef VDSOLAB_VARIANTS_PERF_PERF_MMAP_WRITER_H_
#define VDSOLAB_VARIANTS_PERF_PERF_MMAP_WRITER_H_

#include <cstdint>

#include "timekeeper/timekeeper.h"
#include "variants/variant.h"
#include "vdso/vvar_page.h"

namespace vdsolab::variants::perf {

// struct cyc2ns_data.
struct Cyc2nsData {
  uint32_t cyc2ns_mul = 0;
  uint32_t cyc2ns_shift = 0;
  uint64_t cyc2ns_offset = 0;
};

// x86_pmu.cntval_bits on Intel (48-bit general-purpose counters).
inline constexpr uint16_t kX86CntvalBits = 48;

// __sched_clock_offset, modelled as 0.
inline constexpr uint64_t kSchedClockOffset = 0;

// __set_cyc2ns_scale(khz, cpu, tsc_now) with ns_now = 0 (the boot call).
Cyc2nsData SetCyc2nsScale(uint32_t khz, uint64_t tsc_now);

// cycles_2_ns(): cyc2ns_offset + mul_u64_u32_shr(cyc, mul, shift).
uint64_t Cycles2Ns(const Cyc2nsData& data, uint64_t cyc);

// Whether arch_perf_update_userpage() publishes user time:
// using_native_sched_clock() && sched_clock_stable(). The TSC is the sched
// clock when it was calibrated (tsc_khz != 0); it is stable unless the TSC
// sync check failed (mark_tsc_unstable() clears sched_clock_stable()).
bool UserTimeAvailable(const PublishContext& ctx);

// perf_event_update_userpage() on x86, as stores. `seq` is the lock before
// the update (even); it leaves lock at seq + 2.
vdso::VvarUpdate BuildPerfUpdate(const timekeeper::Timekeeper& tk, uint32_t seq,
                                 const PublishContext& ctx);

}  // namespace vdsolab::variants::perf

#endif  // VDSOLAB_VARIANTS_PERF_PERF_MMAP_WRITER_H_
