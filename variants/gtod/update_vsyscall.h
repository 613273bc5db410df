// File: variants/gtod/update_vsyscall.h
//
// The x86 update_vsyscall() of the pre-generic vDSO (arch/x86/entry/
// vsyscall/vsyscall_gtod.c) for the 4.16 and 4.20 layouts and the seeds'
// versions of them, as the ordered list of stores the kernel makes
// (design rule 3): gtod_write_begin() (++seq; smp_wmb()), the data in
// source order, gtod_write_end() (smp_wmb(); ++seq). Each field is stored
// once with its final value, as the compiler emits the kernel's
// normalisation loops. vclocks_used (a kernel variable, not on the page)
// and update_vsyscall_tz() (tz_minuteswest/tz_dsttime) are not modelled.

#ifndef VDSOLAB_VARIANTS_GTOD_UPDATE_VSYSCALL_H_
#define VDSOLAB_VARIANTS_GTOD_UPDATE_VSYSCALL_H_

#include <cstdint>

#include "timekeeper/timekeeper.h"
#include "variants/gtod/vgtod_416.h"
#include "variants/gtod/vgtod_420.h"
#include "variants/variant.h"
#include "vdso/vvar_page.h"

namespace vdsolab::variants::gtod {

// The era's VCLOCK_* value (vgtod_416.h) for the clocksource's modern
// VDSO_CLOCKMODE_* value (timekeeper/clocksource.h). They coincide for
// NONE, TSC, PVCLOCK and HVCLOCK; anything else is VCLOCK_NONE.
int32_t VclockModeFrom(int32_t vdso_clock_mode);

// update_vsyscall() (4.16) publishing every field `f` has; the patches'
// fields in their patches' source order:
//   raw_cycle_last, raw_mask, raw_mult, raw_shift, has_rdtscp, tsc_khz
//   right after shift (seed 000; seed 001 reconstructed the same way);
//   monotonic_time_raw_sec/nsec after the coarse fields (seed 000/001);
//   cpu_khz, trace_clock_is_sync last (seed 002).
// has_rdtscp, tsc_khz, trace_clock_is_sync and cpu_khz come from `ctx`.
vdso::VvarUpdate BuildUpdate416(const GtodFields& f,
                                const timekeeper::Timekeeper& tk, uint32_t seq,
                                const PublishContext& ctx);

// update_vsyscall() (4.20), plus seed 003's raw_mult/raw_shift and
// basetime[CLOCK_MONOTONIC_RAW] when `f` has raw_mult.
vdso::VvarUpdate BuildUpdate420(const Gtod420Fields& f,
                                const timekeeper::Timekeeper& tk, uint32_t seq,
                                const PublishContext& ctx);

// As BuildUpdateFn (variants/variant.h).
template <const GtodFields& F>
vdso::VvarUpdate UpdateVsyscall416(const timekeeper::Timekeeper& tk,
                                   uint32_t seq, const PublishContext& ctx) {
  return BuildUpdate416(F, tk, seq, ctx);
}
template <const Gtod420Fields& F>
vdso::VvarUpdate UpdateVsyscall420(const timekeeper::Timekeeper& tk,
                                   uint32_t seq, const PublishContext& ctx) {
  return BuildUpdate420(F, tk, seq, ctx);
}

}  // namespace vdsolab::variants::gtod

#endif  // VDSOLAB_VARIANTS_GTOD_UPDATE_VSYSCALL_H_
