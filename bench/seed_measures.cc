#include "bench/seed_measures.h"

#include <vector>

#include "bench/counters.h"

namespace vdsolab::bench {

LatencyResult TimerLatency(const ClockCall& call, int repeat, int samples) {
  LatencyResult r;
  std::vector<uint64_t> t(static_cast<size_t>(samples) + 1);
  double sum_of_averages = 0;
  for (int k = 0; k < repeat; ++k) {
    // As timer_latency.c: the samples first, the arithmetic after.
    for (auto& v : t) v = call();
    uint64_t sum = 0;
    for (size_t s = 1; s < t.size(); ++s) {
      if (t[s - 1] > t[s]) {
        ++r.inconsistencies;
        continue;  // The program skips these deltas.
      }
      const uint64_t d = t[s] - t[s - 1];
      if (d == 0) ++r.zero_deltas;
      sum += d;
    }
    sum_of_averages += static_cast<double>(sum) / static_cast<double>(samples);
    ++r.runs;
  }
  r.average_latency_ns = sum_of_averages / repeat;
  return r;
}

uint64_t CallsInInterval(const ClockCall& call, uint64_t interval_ns) {
  const uint64_t end = call() + interval_ns;
  uint64_t count = 0;
  uint64_t now;
  do {
    now = call();
    ++count;
  } while (now < end);
  return count;
}

double CyclesPerCall(const ClockCall& call, int iterations) {
  uint64_t total = 0;
  uint64_t sink = 0;
  for (int i = 0; i < iterations; ++i) {
    const uint64_t a = Rdtsc();
    sink += call();
    const uint64_t b = Rdtsc();
    total += b - a;
  }
  // Keep the calls observable.
  asm volatile("" : : "r"(sink));
  return static_cast<double>(total) / iterations;
}

}  // namespace vdsolab::bench
