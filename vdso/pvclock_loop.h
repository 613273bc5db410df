// File: vdso/pvclock_loop.h
//
// vread_pvclock()'s loop as the x86 vDSO had it from 4.16 to 6.14
// (arch/x86/entry/vdso/vclock_gettime.c, then arch/x86/include/asm/vdso/
// gettimeofday.h): kvm-clock from vCPU 0's pvclock page under the
// hypervisor's version protocol. The eras differ around it (4.16 clamps
// the result to cycle_last and answers VCLOCK_NONE without the stable bit;
// 4.20-6.14 return U64_MAX then; 6.5+ mask the result with S64_MAX), not
// in it; the 6.15+ reader, which clamps a negative TSC delta, has its own
// (vdso/upstream_reader.h).

#ifndef VDSOLAB_VDSO_PVCLOCK_LOOP_H_
#define VDSOLAB_VDSO_PVCLOCK_LOOP_H_

#include <cstdint>
#include <optional>

#include "vdso/access.h"
#include "vdso/datapage.h"
#include "vdso/upstream_reader.h"

namespace vdsolab::vdso {

struct PvclockReading {
  bool stable = false;  // PVCLOCK_TSC_STABLE_BIT was set.
  uint64_t ns = 0;      // kvm-clock, when stable.
};

// pvclock_read_begin() ignores the version's low bit, so an update in
// progress fails the re-check; its virt_rmb() pairs with the hypervisor's
// smp_wmb() after the odd version, pvclock_read_retry()'s with the one
// before the even version. __pvclock_read_cycles() of these kernels has
// no negative-delta clamp: a TSC before tsc_timestamp scales as the huge
// u64 the subtraction gives. `pvti` is vCPU 0's pvclock page. nullopt:
// abandoned by the access policy.
template <VdsoAccess A>
std::optional<PvclockReading> ReadPvclockPre615(A& acc, const uint8_t* pvti) {
  for (;;) {
    const uint32_t version =
        acc.template Load<uint32_t>(pvti + kPvtiVersion) & ~1u;
    acc.Rmb();
    if ((acc.template Load<uint8_t>(pvti + kPvtiFlags) &
         kPvclockTscStableBit) == 0) {
      return PvclockReading{};
    }
    const uint64_t tsc = acc.ReadTsc();
    const uint64_t delta =
        tsc - acc.template Load<uint64_t>(pvti + kPvtiTscTimestamp);
    const uint32_t mul = acc.template Load<uint32_t>(pvti + kPvtiMul);
    const int8_t shift =
        static_cast<int8_t>(acc.template Load<uint8_t>(pvti + kPvtiShift));
    const uint64_t ns =
        acc.template Load<uint64_t>(pvti + kPvtiSystemTime) +
        upstream::upstream_internal::PvclockScaleDelta(delta, mul, shift);
    acc.Rmb();
    if (version == acc.template Load<uint32_t>(pvti + kPvtiVersion)) {
      return PvclockReading{true, ns};
    }
    if (!acc.MayRetry()) return std::nullopt;
  }
}

}  // namespace vdsolab::vdso

#endif  // VDSOLAB_VDSO_PVCLOCK_LOOP_H_
