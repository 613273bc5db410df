#include "sim/hypervisor.h"

#include "common/math64.h"
#include "common/rng.h"
#include "vdso/datapage.h"

namespace vdsolab::sim {
namespace {

// States replaced this long ago are still kept: the checker explains a
// violation between two reads from the states both read under.
constexpr uint64_t kRetainNs = 1000000000;

uint32_t DivFrac(uint64_t dividend, uint32_t divisor) {
  // div_frac() / do_shl32_div32(): (dividend << 32) / divisor, with
  // dividend < divisor so that the quotient fits 32 bits.
  return static_cast<uint32_t>(
      (static_cast<unsigned __int128>(dividend) << 32) / divisor);
}

}  // namespace

void KvmGetTimeScale(uint64_t scaled_hz, uint64_t base_hz, int8_t* pshift,
                     uint32_t* pmul) {
  int32_t shift = 0;
  uint64_t tps64 = base_hz;
  uint64_t scaled64 = scaled_hz;
  while (tps64 > scaled64 * 2 || (tps64 & 0xffffffff00000000ull) != 0) {
    tps64 >>= 1;
    --shift;
  }
  uint32_t tps32 = static_cast<uint32_t>(tps64);
  while (tps32 <= scaled64 || (scaled64 & 0xffffffff00000000ull) != 0) {
    if ((scaled64 & 0xffffffff00000000ull) != 0 || (tps32 & 0x80000000u) != 0) {
      scaled64 >>= 1;
    } else {
      tps32 <<= 1;
    }
    ++shift;
  }
  *pshift = static_cast<int8_t>(shift);
  *pmul = DivFrac(scaled64, tps32);
}

uint64_t PvclockScale(uint64_t delta, uint32_t mul, int8_t shift) {
  if (shift < 0) {
    delta = ShrX86(delta, static_cast<uint32_t>(-shift));
  } else {
    delta = ShlX86(delta, static_cast<uint32_t>(shift));
  }
  return static_cast<uint64_t>((static_cast<unsigned __int128>(delta) * mul) >>
                               32);
}

uint64_t PvclockRead(const PvtiState& s, uint64_t tsc) {
  const uint64_t delta = tsc - s.tsc_timestamp;
  if (static_cast<int64_t>(delta) < 0) return s.system_time;
  return s.system_time + PvclockScale(delta, s.mul, s.shift);
}

Hypervisor::Hypervisor(const MachineSpec& spec, const Machine* machine,
                       uint64_t seed)
    : machine_(machine), seed_(seed), period_ns_(spec.pvclock_period_ns) {
  PvtiState boot;
  boot.version = 2;
  boot.tsc_timestamp = machine->Counter(0, 0);
  boot.system_time = spec.kvmclock_start_ns;
  // KVM scales with the TSC frequency it was told (tsc_khz: whole kHz).
  const uint64_t hz =
      spec.calibrated_hz != 0 ? spec.calibrated_hz : spec.counter_hz;
  KvmGetTimeScale(kNsecPerSec, hz / 1000 * 1000, &boot.shift, &boot.mul);
  boot.flags = kPvclockTscStable;
  states_.push_back(boot);
  if (period_ns_ != 0) next_periodic_ns_ = period_ns_;
  AdvancePeriodic();
}

void Hypervisor::AdvancePeriodic() {
  if (period_ns_ == 0) return;
  // Rewrite k at k periods plus up to half a period, drawn from (seed, k):
  // the schedule does not depend on what else runs.
  const uint64_t k = next_periodic_index_++;
  next_periodic_ns_ =
      k * period_ns_ + MixHash(seed_, 0x9c10c, k) % (period_ns_ / 2 + 1);
}

vdso::VvarUpdate Hypervisor::InitialStores() const {
  const PvtiState& s = states_.front();
  const uint32_t pv = vdso::kPvclockPageOffset;
  vdso::VvarUpdate u;
  u.stores = {
      {pv + vdso::kPvtiVersion, 4, s.version, false},
      {pv + vdso::kPvtiTscTimestamp, 8, s.tsc_timestamp, false},
      {pv + vdso::kPvtiSystemTime, 8, s.system_time, false},
      {pv + vdso::kPvtiMul, 4, s.mul, false},
      {pv + vdso::kPvtiShift, 1, static_cast<uint8_t>(s.shift), false},
      {pv + vdso::kPvtiFlags, 1, s.flags, false},
  };
  return u;
}

vdso::VvarUpdate Hypervisor::Rewrite(uint64_t start_ns, uint64_t end_ns,
                                     const EventSpec* event) {
  const PvtiState old = states_.back();
  PvtiState s = old;
  s.version = old.version + 2;
  s.visible_ns = end_ns;
  s.started_ns = start_ns;
  if (event != nullptr) {
    s.flags = event->pvclock_stable ? kPvclockTscStable : 0;
    if (event->tsc_khz != 0) {
      KvmGetTimeScale(kNsecPerSec, event->tsc_khz * 1000, &s.shift, &s.mul);
    }
  }
  if (event == nullptr || event->pvclock_master) {
    // The master clock: vCPU 0's TSC now, and the kvm-clock value that
    // makes the new state read at the end what the old one reads there.
    s.master_ns = start_ns;
    s.tsc_timestamp = machine_->Counter(0, start_ns);
    const uint64_t end_tsc = machine_->Counter(0, end_ns);
    const uint64_t since = end_tsc - s.tsc_timestamp;
    const uint64_t at_end = PvclockRead(old, end_tsc);
    const uint64_t span = static_cast<int64_t>(since) < 0
                              ? 0
                              : PvclockScale(since, s.mul, s.shift);
    // (Below the rewrite's own span kvm-clock would start under 0: it
    // starts at 0, a step forward. Only a kvmclock_start of microseconds
    // gets there.)
    s.system_time = at_end > span ? at_end - span : 0;
  }
  states_.push_back(s);
  ++rewrites_;
  // kvm_setup_guest_pvclock(): version odd, smp_wmb() (pairs with the
  // readers' virt_rmb() after their first version load), the fields,
  // smp_wmb() (pairs with the virt_rmb() before their version re-check),
  // version even.
  const uint32_t pv = vdso::kPvclockPageOffset;
  vdso::VvarUpdate u;
  u.stores = {
      {pv + vdso::kPvtiVersion, 4, old.version + 1, false},
      {pv + vdso::kPvtiTscTimestamp, 8, s.tsc_timestamp, true},
      {pv + vdso::kPvtiSystemTime, 8, s.system_time, false},
      {pv + vdso::kPvtiMul, 4, s.mul, false},
      {pv + vdso::kPvtiShift, 1, static_cast<uint8_t>(s.shift), false},
      {pv + vdso::kPvtiFlags, 1, s.flags, false},
      {pv + vdso::kPvtiVersion, 4, s.version, true},
  };
  return u;
}

const PvtiState& Hypervisor::StateAt(uint64_t t_ns) const {
  for (auto it = states_.rbegin(); it != states_.rend(); ++it) {
    if (it->visible_ns <= t_ns) return *it;
  }
  return states_.front();
}

bool Hypervisor::StableDuring(uint64_t from_ns, uint64_t to_ns) const {
  if (states_.front().visible_ns > from_ns) return false;
  for (auto it = states_.rbegin(); it != states_.rend(); ++it) {
    if (it->started_ns > to_ns) continue;  // Made after the call ended.
    if ((it->flags & kPvclockTscStable) == 0) return false;
    if (it->visible_ns <= from_ns) break;  // In force at `from`.
  }
  return true;
}

uint64_t Hypervisor::KernelRead(int cpu, uint64_t t_ns) const {
  PvtiState own = StateAt(t_ns);
  // KVM writes each vCPU's pvti with that vCPU's TSC at the master clock.
  own.tsc_timestamp = machine_->Counter(cpu, own.master_ns);
  return PvclockRead(own, machine_->Counter(cpu, t_ns));
}

uint64_t Hypervisor::NextRetireAt() const {
  if (states_.size() < 2) return ~uint64_t{0};
  return states_[1].visible_ns + kRetainNs;
}

void Hypervisor::SkipPeriodicTo(uint64_t t_ns) {
  if (period_ns_ == 0) return;
  const uint64_t k = (t_ns + period_ns_ - 1) / period_ns_;
  if (k > next_periodic_index_) next_periodic_index_ = k;
  AdvancePeriodic();
}

void Hypervisor::Retire(uint64_t t_ns) {
  if (t_ns < kRetainNs) return;
  while (states_.size() > 1 && states_[1].visible_ns < t_ns - kRetainNs) {
    states_.pop_front();
  }
}

}  // namespace vdsolab::sim
