#include "sim/counter_sources.h"

#include "absl/strings/str_format.h"
#include "common/math64.h"

namespace vdsolab::sim {
namespace {

struct GlobalCounter {
  uint64_t hz;
  int width;
  uint64_t start;  // Its value at true time 0 (an arbitrary power-on count).
};

constexpr GlobalCounter kHpet{14318180, 32, 0x10000000};
constexpr GlobalCounter kAcpiPm{3579545, 24, 0x400000};

const GlobalCounter& Global(CounterSource s) {
  return s == CounterSource::kHpet ? kHpet : kAcpiPm;
}

}  // namespace

CounterSource SourceNamed(const MachineSpec& machine, const std::string& name) {
  if (name == "kvm-clock" && machine.clocksource == "kvm-clock") {
    return CounterSource::kKvmClock;
  }
  if (name == "tsc" || name == machine.clocksource) {
    return CounterSource::kMachine;
  }
  return name == "hpet" ? CounterSource::kHpet : CounterSource::kAcpiPm;
}

absl::StatusOr<variants::ClocksourceRegistration> SourceRegistration(
    const MachineSpec& m, CounterSource source, bool nonstop) {
  variants::ClocksourceRegistration r;
  if (source == CounterSource::kMachine) {
    const uint64_t hz = m.calibrated_hz != 0 ? m.calibrated_hz : m.counter_hz;
    r.mask = timekeeper::ClocksourceMask(m.width_bits);
    if (m.clocksource == "tsc" || m.clocksource == "kvm-clock") {
      // tsc.c registers tsc_khz: the calibration is truncated to whole kHz.
      r.scale = 1000;
      r.freq = static_cast<uint32_t>(hz / 1000);
      r.vdso_clock_mode = timekeeper::kVdsoClockmodeTsc;
      r.rating = 300;
      r.suspend_nonstop = nonstop;
      return r;
    }
    if (hz > UINT32_MAX) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "machine: %s at %d Hz does not fit clocksource_register_hz()",
          m.clocksource, hz));
    }
    r.freq = static_cast<uint32_t>(hz);
    r.vdso_clock_mode = timekeeper::kVdsoClockmodeNone;
    r.rating = m.clocksource == "hpet" ? 250 : 200;
    return r;
  }
  if (source == CounterSource::kKvmClock) {
    // kvmclock.c: clocksource_register_hz(&kvm_clock, NSEC_PER_SEC), a
    // 64-bit counter, rating 400, read by the vDSO through the pvclock
    // page.
    r.mask = timekeeper::ClocksourceMask(64);
    r.freq = 1000000000;
    r.vdso_clock_mode = timekeeper::kVdsoClockmodePvclock;
    r.rating = 400;
    return r;
  }
  const GlobalCounter& g = Global(source);
  r.mask = timekeeper::ClocksourceMask(g.width);
  r.freq = static_cast<uint32_t>(g.hz);
  r.vdso_clock_mode = timekeeper::kVdsoClockmodeNone;
  r.rating = source == CounterSource::kHpet ? 250 : 200;
  return r;
}

absl::StatusOr<timekeeper::Clocksource> RegisterSource(const MachineSpec& m,
                                                       CounterSource source,
                                                       bool nonstop) {
  absl::StatusOr<variants::ClocksourceRegistration> r =
      SourceRegistration(m, source, nonstop);
  if (!r.ok()) return r.status();
  const std::string name =
      source == CounterSource::kMachine
          ? (m.clocksource == "kvm-clock" ? "tsc" : m.clocksource)
      : source == CounterSource::kKvmClock ? "kvm-clock"
      : source == CounterSource::kHpet     ? "hpet"
                                           : "acpi_pm";
  absl::StatusOr<timekeeper::Clocksource> cs =
      timekeeper::ClocksourceRegisterScale(name, r->mask, r->scale, r->freq,
                                           r->vdso_clock_mode, r->rating);
  if (cs.ok()) cs->suspend_nonstop = r->suspend_nonstop;
  return cs;
}

__int128 CounterSources::Ideal(CounterSource source, int cpu,
                               uint64_t t_ns) const {
  if (source == CounterSource::kMachine) {
    return machine_->IdealCounter(cpu, t_ns);
  }
  // 64 bits that never wrap in a run: the value itself.
  if (source == CounterSource::kKvmClock) {
    return static_cast<__int128>(hv_->KernelRead(cpu, t_ns));
  }
  const GlobalCounter& g = Global(source);
  return static_cast<__int128>(g.start) +
         static_cast<__int128>(t_ns) * g.hz / 1000000000;
}

uint64_t CounterSources::Read(CounterSource source, int cpu,
                              uint64_t t_ns) const {
  if (source == CounterSource::kMachine) return machine_->Counter(cpu, t_ns);
  if (source == CounterSource::kKvmClock) return hv_->KernelRead(cpu, t_ns);
  return static_cast<uint64_t>(Ideal(source, cpu, t_ns)) & Mask(source);
}

uint64_t CounterSources::Mask(CounterSource source) const {
  if (source == CounterSource::kMachine) return machine_->mask();
  if (source == CounterSource::kKvmClock) return ~0ull;
  return timekeeper::ClocksourceMask(Global(source).width);
}

}  // namespace vdsolab::sim
