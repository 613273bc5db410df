// File: bench/counters.h
//
// The counter instructions the readers are measured against: bare rdtsc
// (may execute before earlier loads), lfence; rdtsc (what rdtsc_ordered()
// is on CPUs without RDTSCP), and rdtscp.

#ifndef VDSOLAB_BENCH_COUNTERS_H_
#define VDSOLAB_BENCH_COUNTERS_H_

#include <x86intrin.h>

#include <cstdint>

namespace vdsolab::bench {

inline uint64_t Rdtsc() { return __rdtsc(); }

inline uint64_t LfenceRdtsc() {
  _mm_lfence();  // Waits for earlier instructions, as rdtsc_ordered() does.
  return __rdtsc();
}

inline uint64_t Rdtscp() {
  unsigned int aux;
  return __rdtscp(&aux);
}

}  // namespace vdsolab::bench

#endif  // VDSOLAB_BENCH_COUNTERS_H_
