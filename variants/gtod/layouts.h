// File: variants/gtod/layouts.h
//
// The page layouts of the variants in this directory as data (variants/
// layout.h): every field of the struct at vvar+128, named "gtod.<field>"
// ("gtod.basetime[CLOCK_MONOTONIC].nsec" for 4.20), with seq as kSeq and
// cycle_last (and raw_cycle_last) as kCycleLast.

#ifndef VDSOLAB_VARIANTS_GTOD_LAYOUTS_H_
#define VDSOLAB_VARIANTS_GTOD_LAYOUTS_H_

#include "variants/layout.h"

namespace vdsolab::variants::gtod {

const Layout& Layout416();
const Layout& LayoutVasDiasV1();
const Layout& LayoutVasDiasRdtscp();
const Layout& LayoutRc5();
const Layout& LayoutTscCalibration();
const Layout& LayoutTraceClock();
const Layout& LayoutSverdlin();

}  // namespace vdsolab::variants::gtod

#endif  // VDSOLAB_VARIANTS_GTOD_LAYOUTS_H_
