// File: sim/hypervisor.h
//
// The hypervisor of a kvm-clock machine (machine.clocksource =
// "kvm-clock"): KVM's side of kvm-clock. The machine's counter is the TSC;
// the hypervisor keeps vCPU 0's struct pvclock_vcpu_time_info in the vvar
// area's pvclock page, which the vDSO reads in VDSO_CLOCKMODE_PVCLOCK, and
// rewrites it under its version protocol (kvm_setup_guest_pvclock(),
// arch/x86/kvm/x86.c, 6.12): version odd, smp_wmb(), the fields, smp_wmb(),
// version even. The writer (sim/writer.h) schedules those rewrites among
// its own updates and gives every store the true time it lands, so readers
// race them like any vvar store.
//
// kvm-clock is then a function of true time, as the machine's counters
// are: the state each rewrite publishes, from the moment its last store
// lands, scaled from the TSC (pvclock_scale_delta()). The guest kernel's
// clocksource read (kvm_clock_read(): this vCPU's own pvti, which KVM keeps
// consistent with this vCPU's TSC) and the vDSO's (vCPU 0's pvti with the
// calling CPU's TSC) agree exactly when the TSCs are synchronised, as
// PVCLOCK_TSC_STABLE_BIT promises; skewed TSCs make the vDSO's reading
// differ, which the checker reports as the broken precondition it is.
//
// Deviations (docs/scenarios.md): the pvclock arithmetic here is the
// oracle's own (128-bit), not the readers'; a negative TSC delta scales as
// 0 (the 6.18 vDSO's clamp) in both reads, where 6.12's kernel would wrap;
// the guest kernel's read during a rewrite takes the state before it
// (the kernel's version loop would wait for the new one); KVM's master
// clock is taken at the rewrite's start and continued from the old state
// at its end (below), so kvm-clock never steps back at a rewrite.

#ifndef VDSOLAB_SIM_HYPERVISOR_H_
#define VDSOLAB_SIM_HYPERVISOR_H_

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sim/machine.h"
#include "sim/scenario.h"
#include "vdso/vvar_page.h"

namespace vdsolab::sim {

// PVCLOCK_TSC_STABLE_BIT (arch/x86/include/asm/pvclock-abi.h).
inline constexpr uint8_t kPvclockTscStable = 1 << 0;

// TimedStore::update ids of the hypervisor's rewrites: apart from the
// timekeeper's updates (1, 2, ...) and the aux clocks' (bit 31).
inline constexpr uint32_t kPvclockUpdateIdBit = 0x40000000u;
inline bool IsPvclockUpdateId(uint32_t id) {
  return (id & 0xc0000000u) == kPvclockUpdateIdBit;
}

// One state of vCPU 0's pvclock page, as one rewrite left it.
struct PvtiState {
  uint32_t version = 0;        // Even: the page holds this state.
  uint64_t tsc_timestamp = 0;  // vCPU 0's TSC at the master clock.
  uint64_t system_time = 0;    // kvm-clock ns at tsc_timestamp.
  uint32_t mul = 0;            // tsc_to_system_mul
  int8_t shift = 0;            // tsc_shift
  uint8_t flags = 0;           // kPvclockTscStable
  uint64_t master_ns = 0;      // True time of the master clock.
  uint64_t visible_ns = 0;     // Its last store landed here.
  uint64_t started_ns = 0;     // Its rewrite began here (stores after).

  friend bool operator==(const PvtiState&, const PvtiState&) = default;
};

// kvm_get_time_scale() (arch/x86/kvm/x86.c, 6.12): the shift and 32-bit
// fraction that turn base_hz ticks into scaled_hz ticks.
void KvmGetTimeScale(uint64_t scaled_hz, uint64_t base_hz, int8_t* shift,
                     uint32_t* mul);

// pvclock_scale_delta() for x86-64 (arch/x86/include/asm/pvclock.h): the
// shift (bits pushed out are lost), then bits 32..95 of the 64x32 product.
uint64_t PvclockScale(uint64_t delta, uint32_t mul, int8_t shift);

// __pvclock_read_cycles() of `s` at `tsc`, with a negative delta as 0.
uint64_t PvclockRead(const PvtiState& s, uint64_t tsc);

class Hypervisor {
 public:
  // The state at boot (version 2, as KVM's first rewrite leaves it): the
  // calibrated TSC frequency's scale, kvm-clock at machine.kvmclock_start.
  Hypervisor(const MachineSpec& spec, const Machine* machine, uint64_t seed);

  // The boot state's stores, applied to the page before the run.
  vdso::VvarUpdate InitialStores() const;

  // The next periodic master clock update (machine.pvclock_period) at or
  // after the one the last Advance() passed; ~0 without a period.
  uint64_t NextPeriodicAt() const { return next_periodic_ns_; }
  void AdvancePeriodic();

  // The number of stores a rewrite makes (the writer times them first).
  static constexpr size_t kStores = 7;

  // One rewrite: the master clock taken at `start_ns` (a new
  // tsc_timestamp, and system_time continued from the state in force so
  // that at `end_ns`, when the last store lands, the new state reads what
  // the old one would have: kvm-clock does not step), or, with `master`
  // false, the same values under a new version (KVM_REQ_CLOCK_UPDATE with
  // an unchanged master clock, as on a vCPU's move to another host CPU).
  // `event` may set the stable bit and a new TSC frequency (tsc_khz). The
  // store list is in kvm_setup_guest_pvclock()'s order; the new state is in
  // force from `end_ns`.
  vdso::VvarUpdate Rewrite(uint64_t start_ns, uint64_t end_ns,
                           const EventSpec* event);

  // The state whose last store landed at or before t (the page's, once
  // every store due by then is applied; a rewrite in progress leaves the
  // previous one).
  const PvtiState& StateAt(uint64_t t_ns) const;
  // Whether every state a read in [from, to] may have loaded had the
  // stable bit: the one in force at `from` and every later one whose
  // rewrite began by `to` (one in progress counts: vread_pvclock() tests
  // the flags before its version re-check). False where that state may
  // have been retired.
  bool StableDuring(uint64_t from_ns, uint64_t to_ns) const;

  // kvm-clock as the guest kernel reads it on `cpu` at `t`: this vCPU's
  // pvti, whose tsc_timestamp is this vCPU's TSC at the master clock.
  uint64_t KernelRead(int cpu, uint64_t t_ns) const;
  // kvm-clock as the vDSO computes it from vCPU 0's pvti at `t`, from the
  // TSC value it read (`tsc`, maybe another CPU's).
  uint64_t VdsoRead(uint64_t tsc, uint64_t t_ns) const {
    return PvclockRead(StateAt(t_ns), tsc);
  }

  // Forgets states replaced more than a second before t (the checker
  // decides what it needs of a state while its call is checked).
  void Retire(uint64_t t_ns);
  // Retire() has nothing to do before this time (~0: not until a rewrite).
  uint64_t NextRetireAt() const;
  // Moves the periodic schedule past t (a pause or suspend, when the
  // vCPUs do not run): the next periodic rewrite is the first of a period
  // starting at or after t.
  void SkipPeriodicTo(uint64_t t_ns);
  size_t retained() const { return states_.size(); }
  uint32_t rewrites() const { return rewrites_; }

 private:
  const Machine* machine_;
  uint64_t seed_;
  uint64_t period_ns_;
  uint64_t next_periodic_index_ = 1;
  uint64_t next_periodic_ns_ = ~0ull;
  uint32_t rewrites_ = 0;
  std::deque<PvtiState> states_;  // Oldest first; never empty.
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_HYPERVISOR_H_
