// File: bench/median.h
//
// The median the report and the paired benchmarks take: robust to the
// outliers a shared VM's hiccups make.

#ifndef VDSOLAB_BENCH_MEDIAN_H_
#define VDSOLAB_BENCH_MEDIAN_H_

#include <algorithm>
#include <vector>

namespace vdsolab::bench {

// The median of the values (the lower middle one for an even count); 0 for
// none.
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

}  // namespace vdsolab::bench

#endif  // VDSOLAB_BENCH_MEDIAN_H_
