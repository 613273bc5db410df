// File: sim/machine.h
//
// The simulated machine's counters: one per CPU, each a pure function of
// true time built from the scenario's time model (ideal rate, skew, drift,
// steps, wobble, jitter, width). Pure functions of time keep every run
// replayable: reading a counter never changes the machine.

#ifndef VDSOLAB_SIM_MACHINE_H_
#define VDSOLAB_SIM_MACHINE_H_

#include <cstdint>
#include <vector>

#include "common/rng.h"  // MixHash
#include "sim/scenario.h"

namespace vdsolab::sim {

class Machine {
 public:
  Machine(const MachineSpec& spec, uint64_t seed);

  int cpus() const { return static_cast<int>(cpus_.size()); }
  uint64_t mask() const { return mask_; }

  // CPU `cpu`'s counter at true time `t_ns`, wrapped to the width.
  uint64_t Counter(int cpu, uint64_t t_ns) const;

  // The same without width wrapping, jitter or wobble: for reports.
  __int128 IdealCounter(int cpu, uint64_t t_ns) const;
  // IdealCounter() in signed 128-bit divisions, for every spec (the fast
  // form needs a positive rate below 2^64 / 1e18 ticks per ns); tests
  // compare the two.
  __int128 SlowIdealCounter(const CpuCounterSpec& c, uint64_t t_ns) const;

 private:
  uint64_t hz_;
  uint64_t start_;
  uint64_t mask_;
  uint64_t jitter_seed_;
  std::vector<CpuCounterSpec> cpus_;
  // Per CPU, hz * (1e9 + drift) split at 1e18 (IdealCounter()'s rate), or
  // !fast where that is not a positive 64-bit number.
  // The counter's start, the CPU's skew and its steps by t_ns, added to
  // the ticks of true time.
  __int128 WithOffsets(const CpuCounterSpec& c, uint64_t t_ns,
                       __int128 ticks) const;
  static constexpr uint64_t kPerNsScale = 1000000000000000000ull;
  struct Rate {
    bool fast = false;
    uint64_t whole = 0;
    uint64_t part = 0;
  };
  std::vector<Rate> rates_;
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_MACHINE_H_
