// File: variants/perf/perf.h
//
// User-space clocks built on the perf_event mmap page.
//
// "perf-mmap": the TSC converted to perf time (local_clock()) with the
// time_zero/time_mult/time_shift the x86 kernel publishes on a perf event's
// mmap() page (seed 000: Peter Zijlstra's replies to Jason Vas Dias, March
// 2018). Its drift from CLOCK_MONOTONIC_RAW is the measured form of his
// "Do not mix clocks": both run off the same TSC, but from two independent
// roundings of 10^6 / tsc_khz into a mult/shift pair.

#ifndef VDSOLAB_VARIANTS_PERF_PERF_H_
#define VDSOLAB_VARIANTS_PERF_PERF_H_

#include <vector>

#include "variants/layout.h"
#include "variants/variant.h"

namespace vdsolab::variants {

// The perf_event_mmap_page fields the time conversion uses, at offset 0.
const Layout& PerfMmapLayout();

const Variant& PerfMmapVariant();

// Every variant of this directory.
std::vector<const Variant*> PerfVariants();

}  // namespace vdsolab::variants

#endif  // VDSOLAB_VARIANTS_PERF_PERF_H_
