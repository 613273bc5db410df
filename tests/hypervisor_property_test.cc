// The kvm-clock hypervisor (sim/hypervisor.h) over its whole domain: TSC
// frequencies from 1 MHz to 10 GHz, rewrites of every kind (a new master
// clock, the same values under a new version, a new TSC frequency, the
// stable bit either way) at any times, CPUs with skewed TSCs. Its scale
// converts one second of ticks to one second; kvm-clock never steps back
// at a rewrite and the new state continues the old one exactly where its
// last store lands; the guest kernel's read and the vDSO's agree on vCPU
// 0 and on every CPU whose TSC is only offset; every rewrite's stores
// follow KVM's version protocol and leave the state on the page.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <vector>

#include "sim/hypervisor.h"
#include "sim/machine.h"
#include "sim/scenario.h"
#include "vdso/datapage.h"
#include "vdso/vvar_page.h"

namespace vdsolab::sim {
namespace {

rc::Gen<uint64_t> GenHz() {
  return rc::gen::oneOf(
      rc::gen::element<uint64_t>(1000000, 14318180, 1000000000, 2000000000,
                                 2147483648, 2600000000, 4294967295, 4294967296,
                                 10000000000),
      rc::gen::inRange<uint64_t>(1000000, 10000000001));
}

RC_GTEST_PROP(Hypervisor, ItsScaleConvertsOneSecondOfTicksToOneSecond, ()) {
  const uint64_t hz = *GenHz();
  int8_t shift = 0;
  uint32_t mul = 0;
  KvmGetTimeScale(1000000000, hz, &shift, &mul);
  RC_CLASSIFY(shift < 0, "shift < 0 (above 2 GHz)");
  // A 32-bit fraction at least 1/2: 2^-31 relative, plus the ticks the
  // shift drops and the final truncation.
  RC_ASSERT(mul >= (1u << 31));
  const uint64_t ns = PvclockScale(hz, mul, shift);
  const int64_t err = static_cast<int64_t>(ns) - 1000000000;
  RC_ASSERT(err <= 1 && err >= -4);
}

rc::Gen<CpuCounterSpec> GenOffsetCpu() {
  return rc::gen::map(rc::gen::inRange<int64_t>(-1000000, 1000000),
                      [](int64_t off) {
                        CpuCounterSpec c;
                        c.offset_cycles = off;
                        return c;
                      });
}

RC_GTEST_PROP(Hypervisor, KvmClockNeverStepsBackAndContinuesAtEachRewrite, ()) {
  MachineSpec spec;
  spec.clocksource = "kvm-clock";
  spec.counter_hz = *GenHz();
  // KVM's calibration may be off: the pvti scale then runs off true time.
  spec.calibrated_hz = *rc::gen::oneOf(
      rc::gen::just<uint64_t>(0),
      rc::gen::inRange<uint64_t>(spec.counter_hz - spec.counter_hz / 100,
                                 spec.counter_hz + spec.counter_hz / 100));
  spec.counter_start = *rc::gen::oneOf(
      rc::gen::just<uint64_t>(0), rc::gen::inRange<uint64_t>(0, 1ull << 32),
      rc::gen::just<uint64_t>(uint64_t{1} << 62));
  // From 1 ms: a rewrite's continuation subtracts its own span's ns.
  spec.kvmclock_start_ns =
      *rc::gen::inRange<uint64_t>(1000000, uint64_t{1} << 50);
  spec.cpus = {CpuCounterSpec{}, *GenOffsetCpu()};
  const Machine machine(spec, 1);
  Hypervisor hv(spec, &machine, 1);
  auto page = vdso::VvarPage::Create();
  RC_ASSERT(page.ok());
  vdso::VvarPage* page_ptr = page->get();
  page_ptr->Apply(hv.InitialStores());

  const auto read_page = [&] {
    const uint8_t* pv = page_ptr->data() + vdso::kPvclockPageOffset;
    PvtiState s;
    s.version = static_cast<uint32_t>(
        page_ptr->Load(vdso::kPvclockPageOffset + vdso::kPvtiVersion, 4));
    s.tsc_timestamp =
        page_ptr->Load(vdso::kPvclockPageOffset + vdso::kPvtiTscTimestamp, 8);
    s.system_time =
        page_ptr->Load(vdso::kPvclockPageOffset + vdso::kPvtiSystemTime, 8);
    s.mul = static_cast<uint32_t>(
        page_ptr->Load(vdso::kPvclockPageOffset + vdso::kPvtiMul, 4));
    s.shift = static_cast<int8_t>(pv[vdso::kPvtiShift]);
    s.flags = pv[vdso::kPvtiFlags];
    return s;
  };
  const auto same_fields = [](const PvtiState& a, const PvtiState& b) {
    return a.version == b.version && a.tsc_timestamp == b.tsc_timestamp &&
           a.system_time == b.system_time && a.mul == b.mul &&
           a.shift == b.shift && a.flags == b.flags;
  };
  RC_ASSERT(same_fields(read_page(), hv.StateAt(0)));

  uint64_t t = 0;
  uint64_t last = hv.VdsoRead(machine.Counter(0, 0), 0);
  const int rewrites = *rc::gen::inRange(1, 12);
  bool any_master = false, any_same = false, any_scale = false;
  for (int i = 0; i < rewrites; ++i) {
    const uint64_t start = t + *rc::gen::inRange<uint64_t>(1, 50000000);
    const uint64_t end = start + *rc::gen::inRange<uint64_t>(0, 100000);
    EventSpec e;
    e.kind = EventKind::kPvclockUpdate;
    e.pvclock_master = *rc::gen::inRange(0, 4) != 0;
    e.pvclock_stable = *rc::gen::inRange(0, 4) != 0;
    if (e.pvclock_master && *rc::gen::inRange(0, 3) == 0) {
      e.tsc_khz = spec.counter_hz / 1000 +
                  *rc::gen::inRange<uint64_t>(0, spec.counter_hz / 100000 + 1);
    }
    any_master |= e.pvclock_master;
    any_same |= !e.pvclock_master;
    any_scale |= e.tsc_khz != 0;
    const PvtiState before = hv.StateAt(start);
    const uint64_t old_at_end = PvclockRead(before, machine.Counter(0, end));
    const vdso::VvarUpdate u = hv.Rewrite(start, end, &e);

    // KVM's protocol: version odd first, the fields after an smp_wmb(),
    // version even last after another; odd until that last store.
    RC_ASSERT(u.stores.size() == Hypervisor::kStores);
    RC_ASSERT(u.stores.front().offset ==
              vdso::kPvclockPageOffset + vdso::kPvtiVersion);
    RC_ASSERT(u.stores.back().offset ==
              vdso::kPvclockPageOffset + vdso::kPvtiVersion);
    RC_ASSERT(u.stores[1].wmb_before);
    RC_ASSERT(u.stores.back().wmb_before);
    for (size_t k = 0; k < u.stores.size(); ++k) {
      page_ptr->Apply(vdso::VvarUpdate{{u.stores[k]}});
      const uint32_t version = read_page().version;
      RC_ASSERT((version & 1) == (k + 1 < u.stores.size() ? 1u : 0u));
    }
    const PvtiState after = hv.StateAt(end);
    RC_ASSERT(after.version == before.version + 2);
    RC_ASSERT(same_fields(read_page(), after));
    RC_ASSERT(same_fields(hv.StateAt(end - 1), before));
    // The new state reads at its end what the old one did there.
    if (e.pvclock_master) {
      RC_ASSERT(PvclockRead(after, machine.Counter(0, end)) == old_at_end);
    } else {
      RC_ASSERT(after.tsc_timestamp == before.tsc_timestamp);
      RC_ASSERT(after.system_time == before.system_time);
    }
    // Reads at increasing times, through the rewrite, never step back;
    // the kernel's read on vCPU 0, and on an offset CPU, is the vDSO's.
    for (uint64_t at : {start, (start + end) / 2, end, end + 1,
                        end + 1 + *rc::gen::inRange<uint64_t>(0, 10000000)}) {
      const uint64_t v = hv.VdsoRead(machine.Counter(0, at), at);
      RC_ASSERT(v >= last);
      last = v;
      RC_ASSERT(hv.KernelRead(0, at) == v);
      RC_ASSERT(hv.KernelRead(1, at) == v);
      t = at;
    }
  }
  RC_CLASSIFY(any_master, "a new master clock");
  RC_CLASSIFY(any_same, "the same values, a new version");
  RC_CLASSIFY(any_scale, "a new TSC frequency");
}

}  // namespace
}  // namespace vdsolab::sim
