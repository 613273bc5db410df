// File: variants/eras/eras.h
//
// The upstream generic x86-64 vDSO clock_gettime() by kernel era, each on
// its era's page layout with its era's update_vsyscall():
//
//   "5.3"   the first generic vDSO (cycles > last clamp, raw TSC)
//   "6.1"   Debian's linux-source-6.1 (timens check, vdso_cycles_ok)
//   "6.5"   "x86/vdso: Fix gettimeofday masking" (S64_MAX, bit-62 filter)
//   "6.10"  CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT (max_cycles)
//   "6.15"  struct vdso_clock and coarse_nsec, before the 6.17 aux clocks
//
// See era_reader.h for the readers, era_writers.h for the writers and
// datapage.h for the layouts.

#ifndef VDSOLAB_VARIANTS_ERAS_ERAS_H_
#define VDSOLAB_VARIANTS_ERAS_ERAS_H_

#include <vector>

#include "variants/variant.h"

namespace vdsolab::variants {

// The five eras, oldest first.
std::vector<const Variant*> EraVariants();

}  // namespace vdsolab::variants

#endif  // VDSOLAB_VARIANTS_ERAS_ERAS_H_
