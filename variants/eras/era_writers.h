// File: variants/eras/era_writers.h
//
// update_vsyscall() (kernel/time/vsyscall.c) of each era as the ordered
// stores it makes into that era's page (variants/eras/datapage.h), seq
// protocol included. Every era keeps one seq per record and bumps both:
// vdso_write_begin() (both seq to seq+1, smp_wmb()), the data, then
// vdso_write_end() (smp_wmb(), both seq to seq+2).
//
// Fields are stored once each with their final value, in source order of
// their last assignment, as for the upstream writer (timekeeper/vsyscall.h).

#ifndef VDSOLAB_VARIANTS_ERAS_ERA_WRITERS_H_
#define VDSOLAB_VARIANTS_ERAS_ERA_WRITERS_H_

#include <cstdint>

#include "timekeeper/timekeeper.h"
#include "variants/variant.h"
#include "vdso/vvar_page.h"

namespace vdsolab::variants::eras {

// The timekeeper's clocksource mode (modern VDSO_CLOCKMODE_*) as the era's
// page numbers it: 5.3 stored the x86 VCLOCK_* value of
// clocksource.archdata.vclock_mode, 6.1+ VDSO_CLOCKMODE_*.
int32_t EraClockMode(int32_t vdso_clock_mode);

// 5.3: coarse clocks from tkr_mono.xtime_nsec >> shift; update_vdso_data()
// always runs (x86 has no __arch_use_vsyscall() override), so the hres
// data is written even for a clocksource the vDSO cannot read; REALTIME
// and hrtimer_res are written inside it. BOOTTIME adds offs_boot as ns
// shifted by `shift` (the u64 overflow "timekeeping/vsyscall: Prevent math
// overflow in BOOTTIME update" fixed in 5.4).
vdso::VvarUpdate BuildUpdateVsyscall53(const timekeeper::Timekeeper& tk,
                                       uint32_t seq, const PublishContext& ctx);

// 6.1 (also 6.5-6.9: the 6.5 fix changed only the reader): REALTIME and
// hrtimer_res always; the hres data only for a vDSO-capable clocksource;
// BOOTTIME from monotonic_to_boot.
vdso::VvarUpdate BuildUpdateVsyscall61(const timekeeper::Timekeeper& tk,
                                       uint32_t seq, const PublishContext& ctx);

// 6.10-6.12: 6.1 plus max_cycles in both records
// (CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT), on the 248-byte records.
vdso::VvarUpdate BuildUpdateVsyscall610(const timekeeper::Timekeeper& tk,
                                        uint32_t seq,
                                        const PublishContext& ctx);

// 6.15/6.16: the upstream writer (timekeeper::BuildUpdateVsyscall: coarse
// clocks from coarse_nsec, struct vdso_clock records at the same offsets)
// with hrtimer_res moved to where struct vdso_time_data kept it before the
// 6.17 aux clock records (472 instead of 2328).
vdso::VvarUpdate BuildUpdateVsyscall615(const timekeeper::Timekeeper& tk,
                                        uint32_t seq,
                                        const PublishContext& ctx);

// timens_set_vvar_page() of each era: the namespace's page in the era's
// layout (its two records; timens_setup_vdso_data() before 6.15).
vdso::VvarUpdate BuildTimensPage53(const timekeeper::TimensOffsets& offsets);
vdso::VvarUpdate BuildTimensPage610(const timekeeper::TimensOffsets& offsets);
vdso::VvarUpdate BuildTimensPage615(const timekeeper::TimensOffsets& offsets);

}  // namespace vdsolab::variants::eras

#endif  // VDSOLAB_VARIANTS_ERAS_ERA_WRITERS_H_
