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

  // CPU `cpu`'s counter at true time `t_ns`, wrapped to the width. Read
  // at every simulated counter read: a CPU with neither steps, wobble nor
  // jitter (most) takes the inline form, the same value in 64-bit
  // arithmetic (the sum's low bits are the 128-bit sum's).
  uint64_t Counter(int cpu, uint64_t t_ns) const {
    const Rate& r = rates_[static_cast<size_t>(cpu)];
    if (!r.plain) return NoisyCounter(cpu, t_ns);
    return (r.base + t_ns * r.whole + PartTicks(r, t_ns)) & mask_;
  }

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
  // The counter's start, the CPU's skew and its steps by t_ns, added to
  // the ticks of true time.
  __int128 WithOffsets(const CpuCounterSpec& c, uint64_t t_ns,
                       __int128 ticks) const;
  static constexpr uint64_t kPerNsScale = 1000000000000000000ull;
  // Per CPU, hz * (1e9 + drift) split at 1e18 (IdealCounter()'s rate), or
  // !fast where that is not a positive 64-bit number.
  struct Rate {
    bool fast = false;
    uint64_t whole = 0;
    uint64_t part = 0;
    double part_per_ns = 0;  // part / 1e18: PartTicks()' estimate.
    // fast, and no steps, wobble or jitter: the counter is base + ticks.
    bool plain = false;
    uint64_t base = 0;  // counter_start + offset_cycles, mod 2^64.
  };
  // floor(t * part / 1e18), the ticks' fraction of a whole per ns. Below
  // 2^52 ns (52 days) a double's estimate is within 2 of the quotient and
  // two 128-bit products correct it: no divide on the common path (two
  // `div`s were a fifth of a simulated counter read).
  static uint64_t PartTicks(const Rate& r, uint64_t t_ns) {
    const unsigned __int128 n = static_cast<unsigned __int128>(t_ns) * r.part;
    if (t_ns >= (uint64_t{1} << 52)) return DividedPartTicks(n);
    uint64_t q =
        static_cast<uint64_t>(static_cast<double>(t_ns) * r.part_per_ns);
    unsigned __int128 qd = static_cast<unsigned __int128>(q) * kPerNsScale;
    while (qd > n) {
      --q;
      qd -= kPerNsScale;
    }
    while (n - qd >= kPerNsScale) {
      ++q;
      qd += kPerNsScale;
    }
    return q;
  }
  static uint64_t DividedPartTicks(unsigned __int128 n);
  uint64_t NoisyCounter(int cpu, uint64_t t_ns) const;
  std::vector<Rate> rates_;
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_MACHINE_H_
