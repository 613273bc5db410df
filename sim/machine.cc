#include "sim/machine.h"

#include "common/math64.h"

namespace vdsolab::sim {
Machine::Machine(const MachineSpec& spec, uint64_t seed)
    : hz_(spec.counter_hz),
      start_(spec.counter_start),
      mask_(spec.width_bits >= 64 ? ~0ull : (1ull << spec.width_bits) - 1),
      jitter_seed_(MixHash(seed, 0x6a17)),
      cpus_(spec.cpus) {
  for (const CpuCounterSpec& c : cpus_) {
    // Ticks per ns times 1e18: hz * (1e9 + drift), below 1.1e19 < 2^64
    // within the scenario's limits (hz <= 10 GHz, |drift| <= 1e8 ppb).
    const __int128 k = static_cast<__int128>(hz_) * (1000000000 + c.drift_ppb);
    Rate r;
    r.fast = k > 0 && (k >> 64) == 0;
    if (r.fast) {
      const auto u = static_cast<uint64_t>(k);
      r.whole = u / kPerNsScale;
      r.part = u % kPerNsScale;
      r.part_per_ns = static_cast<double>(r.part) / 1e18;
    }
    r.plain = r.fast && c.steps.empty() && c.wobble_cycles == 0 &&
              c.jitter_cycles == 0;
    r.base = start_ + static_cast<uint64_t>(c.offset_cycles);
    rates_.push_back(r);
  }
}

// The signed formula: the reference IdealCounter() agrees with, and what it
// runs for a spec outside the scenario's limits.
__int128 Machine::SlowIdealCounter(const CpuCounterSpec& c,
                                   uint64_t t_ns) const {
  const __int128 rate = static_cast<__int128>(1000000000) + c.drift_ppb;
  __int128 ticks = static_cast<__int128>(t_ns) * hz_ / 1000000000 * rate;
  ticks += (static_cast<__int128>(t_ns) * hz_ % 1000000000) * rate / 1000000000;
  ticks /= 1000000000;
  return WithOffsets(c, t_ns, ticks);
}

__int128 Machine::WithOffsets(const CpuCounterSpec& c, uint64_t t_ns,
                              __int128 ticks) const {
  __int128 value = static_cast<__int128>(start_) + c.offset_cycles + ticks;
  for (const CounterStep& step : c.steps) {
    if (step.at_ns <= t_ns) value += step.cycles;
  }
  return value;
}

__int128 Machine::IdealCounter(int cpu, uint64_t t_ns) const {
  const CpuCounterSpec& c = cpus_[static_cast<size_t>(cpu)];
  const Rate& r = rates_[static_cast<size_t>(cpu)];
  if (!r.fast) return SlowIdealCounter(c, t_ns);
  // floor(t * hz * (1e9 + drift) / 1e18), the signed formula's value (it
  // floors twice, which floors the same quotient): with K = hz * (1e9 +
  // drift) = whole * 1e18 + part, t * whole + floor(t * part / 1e18). The
  // quotient is below t (PartTicks()).
  const unsigned __int128 ticks =
      static_cast<unsigned __int128>(t_ns) * r.whole + PartTicks(r, t_ns);
  return WithOffsets(c, t_ns, static_cast<__int128>(ticks));
}

uint64_t Machine::DividedPartTicks(unsigned __int128 n) {
  uint64_t unused;
  return static_cast<uint64_t>(DivModU128U64(n, kPerNsScale, &unused));
}

uint64_t Machine::NoisyCounter(int cpu, uint64_t t_ns) const {
  const CpuCounterSpec& c = cpus_[static_cast<size_t>(cpu)];
  __int128 value = IdealCounter(cpu, t_ns);
  if (c.wobble_cycles != 0) {
    // Triangle wave in [0, wobble]: integer, and steep enough to run the
    // counter backwards when wobble * 2 / period exceeds the rate.
    const uint64_t phase = t_ns % c.wobble_period_ns;
    const uint64_t half = c.wobble_period_ns / 2;
    const unsigned __int128 rise =
        phase < half ? phase : c.wobble_period_ns - phase;
    value +=
        static_cast<__int128>(rise * c.wobble_cycles / (half == 0 ? 1 : half));
  }
  if (c.jitter_cycles != 0) {
    value += static_cast<__int128>(
        MixHash(jitter_seed_, static_cast<uint64_t>(cpu), t_ns) %
        (c.jitter_cycles + 1));
  }
  return static_cast<uint64_t>(value) & mask_;
}

}  // namespace vdsolab::sim
