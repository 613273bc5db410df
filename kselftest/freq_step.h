// File: kselftest/freq_step.h
//
// tools/testing/selftests/timers/freq-step.c on a SimHost: step the
// frequency by 10, 640 and 40960 ppm (5 random bases each), step it back,
// and measure CLOCK_MONOTONIC against CLOCK_MONOTONIC_RAW with 100 samples
// over about 10 s: the frequency error in the second half must stay within
// MAX_FREQ_ERROR (0.02 ppm) and the residuals' deviation within MAX_STDDEV
// (50 ns). `updates_per_second` > 0 adds what Miroslav Lichvar's chronyd
// tests did to 757b000f7b93: set the same frequency that often while
// measuring.

#ifndef VDSOLAB_KSELFTEST_FREQ_STEP_H_
#define VDSOLAB_KSELFTEST_FREQ_STEP_H_

#include <cstdint>
#include <string>

#include "kselftest/sim_host.h"

namespace vdsolab::kselftest {

inline constexpr double kMaxFreqError = 0.02e-6;  // MAX_FREQ_ERROR
inline constexpr double kMaxStddev = 50e-9;       // MAX_STDDEV
inline constexpr double kMaxPrecision = 500e-9;   // MAX_PRECISION

struct FreqStepResult {
  double precision = 0;         // s
  double worst_freq_error = 0;  // |freq_error2|, relative
  double worst_stddev = 0;      // s
  int runs = 0;
  int fails = 0;
  uint64_t simulated_ns = 0;  // How long the test ran in simulated time.
  std::string table;          // The test's printed table.
};

FreqStepResult RunFreqStep(const SimHostOptions& options, uint32_t seed,
                           int updates_per_second = 0);

}  // namespace vdsolab::kselftest

#endif  // VDSOLAB_KSELFTEST_FREQ_STEP_H_
