// File: bench/machine_info.h
//
// What a benchmark figure is worth without: the CPU, the kernel, the
// clocksource, the TSC frequency (measured), and the CPU count.

#ifndef VDSOLAB_BENCH_MACHINE_INFO_H_
#define VDSOLAB_BENCH_MACHINE_INFO_H_

#include <cstdint>
#include <string>

namespace vdsolab::bench {

struct MachineInfo {
  std::string cpu_model;    // "model name (family f, model m, stepping s)".
  int cpus = 0;             // Online CPUs.
  std::string kernel;       // uname -r.
  std::string clocksource;  // current_clocksource.
  uint32_t tsc_khz = 0;     // Measured against CLOCK_MONOTONIC_RAW.
};

// Reads the facts and measures the TSC over ~100 ms.
MachineInfo ProbeMachine();

}  // namespace vdsolab::bench

#endif  // VDSOLAB_BENCH_MACHINE_INFO_H_
