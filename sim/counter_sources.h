// File: sim/counter_sources.h
//
// The counters a simulated timekeeper can run on: the machine's counter
// (sim/machine.h: per CPU, the scenario's machine.clocksource; on a
// kvm-clock machine the TSC), kvm-clock on a kvm-clock machine (the
// hypervisor's pvclock scaling of the TSC, sim/hypervisor.h), and, for
// clocksource changes away from a TSC, the HPET and the ACPI PM timer as
// global counters of their standard frequency and width (one value for
// every CPU, no skew), each registered as its kernel driver registers it.

#ifndef VDSOLAB_SIM_COUNTER_SOURCES_H_
#define VDSOLAB_SIM_COUNTER_SOURCES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "sim/hypervisor.h"
#include "sim/machine.h"
#include "sim/scenario.h"
#include "timekeeper/clocksource.h"
#include "variants/foreign_timekeeping.h"

namespace vdsolab::sim {

enum class CounterSource : uint8_t {
  kMachine,   // The machine's per-CPU counter.
  kHpet,      // 14.31818 MHz, 32 bits, global.
  kAcpiPm,    // 3.579545 MHz, 24 bits, global.
  kKvmClock,  // kvm-clock ns, 64 bits, per CPU (kvm-clock machines only).
};

// The sources Writer registers, one clocksource each.
inline constexpr int kCounterSources = 4;

// A counter with one value for every CPU (no skew): the HPET, the ACPI PM
// timer.
inline bool IsGlobalCounter(CounterSource s) {
  return s == CounterSource::kHpet || s == CounterSource::kAcpiPm;
}

// The source a clocksource name stands for on this machine ("tsc" and the
// machine's own clocksource name are the machine counter, but for
// "kvm-clock", kvm-clock on top of it).
CounterSource SourceNamed(const MachineSpec& machine, const std::string& name);

// What the clocksource's driver registers (RegisterSource's arguments).
absl::StatusOr<variants::ClocksourceRegistration> SourceRegistration(
    const MachineSpec& machine, CounterSource source, bool nonstop);

// The clocksource as the kernel registers it: the machine's as
// machine.clocksource says (with CLOCK_SOURCE_SUSPEND_NONSTOP when
// `nonstop`; a kvm-clock machine's counter as the TSC), kvm-clock, hpet
// and acpi_pm by their drivers' calls.
absl::StatusOr<timekeeper::Clocksource> RegisterSource(
    const MachineSpec& machine, CounterSource source, bool nonstop);

class CounterSources {
 public:
  explicit CounterSources(const Machine* machine) : machine_(machine) {}
  // kvm-clock's hypervisor (kvm-clock machines only).
  void SetHypervisor(const Hypervisor* hv) { hv_ = hv; }

  // `source`'s counter read on `cpu` at true time `t_ns`.
  uint64_t Read(CounterSource source, int cpu, uint64_t t_ns) const;
  // The same unwrapped and without noise (Machine::IdealCounter()).
  __int128 Ideal(CounterSource source, int cpu, uint64_t t_ns) const;
  uint64_t Mask(CounterSource source) const;

 private:
  const Machine* machine_;
  const Hypervisor* hv_ = nullptr;
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_COUNTER_SOURCES_H_
