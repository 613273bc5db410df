// File: variants/gtod/gtod.h
//
// The pre-generic x86-64 vDSO over struct vsyscall_gtod_data (vvar+128)
// and the seeds' patches built on it:
//
//   x86-4.16              Linux 4.16 (4.15-4.19): REALTIME, MONOTONIC and
//                         the COARSE clocks; the rest through the syscall.
//   vasdias-v1            seed 000: CLOCK_MONOTONIC_RAW in the vDSO.
//   vasdias-rdtscp        seed 000, 2/2: the same, rdtscp if has_rdtscp.
//   vasdias-rc5-2         seed 001: the stripped-down resend (the code is
//                         reconstructed from its description).
//   sverdlin-v2           seed 003: MONOTONIC_RAW on the 4.20-5.2 vDSO.
//   tsc-calibration       seed 000: __vdso_linux_tsc_calibration() and the
//                         uapi header's three user-space TSC clocks.
//   trace-clock           seed 002: CLOCK_TRACE (RFC), grafted onto 4.16.
//   trace-clock-reviewed  seed 002: the RFC with Desnoyers' review applied.

#ifndef VDSOLAB_VARIANTS_GTOD_GTOD_H_
#define VDSOLAB_VARIANTS_GTOD_GTOD_H_

#include <vector>

#include "variants/variant.h"

namespace vdsolab::variants {

// The variants above, in that order. The records live for the process.
std::vector<const Variant*> GtodVariants();

}  // namespace vdsolab::variants

#endif  // VDSOLAB_VARIANTS_GTOD_GTOD_H_
