#include "sim/machine.h"

#include "common/math64.h"

namespace vdsolab::sim {
Machine::Machine(const MachineSpec& spec, uint64_t seed)
    : hz_(spec.counter_hz),
      start_(spec.counter_start),
      mask_(spec.width_bits >= 64 ? ~0ull : (1ull << spec.width_bits) - 1),
      jitter_seed_(MixHash(seed, 0x6a17)),
      cpus_(spec.cpus) {}

// The signed formula, for a spec outside the scenario's limits (a rate at
// or below zero): what IdealCounter() computes when every term is >= 0.
__int128 Machine::SlowIdealCounter(const CpuCounterSpec& c,
                                   uint64_t t_ns) const {
  const __int128 rate = static_cast<__int128>(1000000000) + c.drift_ppb;
  __int128 ticks = static_cast<__int128>(t_ns) * hz_ / 1000000000 * rate;
  ticks += (static_cast<__int128>(t_ns) * hz_ % 1000000000) * rate / 1000000000;
  ticks /= 1000000000;
  __int128 value = static_cast<__int128>(start_) + c.offset_cycles + ticks;
  for (const CounterStep& step : c.steps) {
    if (step.at_ns <= t_ns) value += step.cycles;
  }
  return value;
}

__int128 Machine::IdealCounter(int cpu, uint64_t t_ns) const {
  const CpuCounterSpec& c = cpus_[static_cast<size_t>(cpu)];
  // floor(t * hz * (1e9 + drift) / 1e18): exact in 128 bits for t < 2^63.
  // Every term is non-negative (hz >= 1 kHz, |drift| <= 1e8 ppb: the
  // scenario's limits), so the divisions are unsigned, in 64-bit divides.
  if (c.drift_ppb <= -1000000000) return SlowIdealCounter(c, t_ns);
  const uint64_t rate = static_cast<uint64_t>(1000000000 + c.drift_ppb);
  uint64_t part;  // t * hz % 1e9.
  const unsigned __int128 whole = DivModU128U64(
      static_cast<unsigned __int128>(t_ns) * hz_, 1000000000, &part);
  // part * rate < 1e9 * 1.1e9 < 2^61.
  const unsigned __int128 scaled = whole * rate + part * rate / 1000000000;
  uint64_t unused;
  const __int128 ticks =
      static_cast<__int128>(DivModU128U64(scaled, 1000000000, &unused));
  __int128 value = static_cast<__int128>(start_) + c.offset_cycles + ticks;
  for (const CounterStep& step : c.steps) {
    if (step.at_ns <= t_ns) value += step.cycles;
  }
  return value;
}

uint64_t Machine::Counter(int cpu, uint64_t t_ns) const {
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
