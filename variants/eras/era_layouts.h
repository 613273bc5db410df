// File: variants/eras/era_layouts.h
//
// The era pages as data (variants/layout.h), for the simulation's load
// observers, traces and replays. Built from the same offsets the era
// readers and writers use (variants/eras/datapage.h).

#ifndef VDSOLAB_VARIANTS_ERAS_ERA_LAYOUTS_H_
#define VDSOLAB_VARIANTS_ERAS_ERA_LAYOUTS_H_

#include "variants/layout.h"

namespace vdsolab::variants::eras {

// 5.3-6.9: _vdso_data[2] (struct vdso_data, 240 bytes) at vvar+128.
const Layout& VdsoDataLayout53();

// 6.10-6.12: _vdso_data[2] with max_cycles (248 bytes) at vvar+128.
const Layout& VdsoDataLayout610();

// 6.15/6.16: struct vdso_time_data (two struct vdso_clock records, then
// tz_minuteswest/tz_dsttime/hrtimer_res at 464) at the start of the time
// page, plus the pvclock page's fields the 6.15 reader reads.
const Layout& VdsoTimeDataLayout615();

}  // namespace vdsolab::variants::eras

#endif  // VDSOLAB_VARIANTS_ERAS_ERA_LAYOUTS_H_
