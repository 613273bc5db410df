// File: variants/gtod/gtod_seq.h
//
// What the 4.16 and 4.20 x86 vDSOs share: loads from vsyscall_gtod_data
// by field offset, the gtod seqcount read side
// (gtod_read_begin()/gtod_read_retry() in arch/x86/include/asm/vgtod.h,
// unchanged from 4.16 to 5.2), and vread_pvclock()'s loop.

#ifndef VDSOLAB_VARIANTS_GTOD_GTOD_SEQ_H_
#define VDSOLAB_VARIANTS_GTOD_GTOD_SEQ_H_

#include <cstdint>
#include <optional>

#include "common/math64.h"
#include "vdso/access.h"
#include "vdso/datapage.h"
#include "vdso/upstream_reader.h"

namespace vdsolab::variants::gtod::gtod_internal {

template <vdso::VdsoAccess A>
uint32_t Load32(A& acc, const uint8_t* vd, uint32_t offset) {
  return acc.template Load<uint32_t>(vd + offset);
}
template <vdso::VdsoAccess A>
uint64_t Load64(A& acc, const uint8_t* vd, uint32_t offset) {
  return acc.template Load<uint64_t>(vd + offset);
}

// gtod_read_begin(): spin while the writer holds seq odd, then smp_rmb(),
// which pairs with the smp_wmb() after the writer's ++seq in
// gtod_write_begin(). nullopt: abandoned by the access policy.
// __always_inline: see vdso/upstream_reader.h's ReadBeginTimens().
template <vdso::VdsoAccess A>
[[gnu::always_inline]] inline std::optional<uint32_t> GtodReadBegin(
    A& acc, const uint8_t* vd, uint32_t seq_offset) {
  uint32_t seq;
  while (((seq = Load32(acc, vd, seq_offset)) & 1) != 0) {
    acc.CpuRelax();
    if (!acc.MayRetry()) return std::nullopt;
  }
  acc.Rmb();
  return seq;
}

// gtod_read_retry(): smp_rmb(), pairing with the smp_wmb() before the
// writer's final ++seq in gtod_write_end(), then compare seq.
template <vdso::VdsoAccess A>
bool GtodReadRetry(A& acc, const uint8_t* vd, uint32_t seq_offset,
                   uint32_t start) {
  acc.Rmb();
  return Load32(acc, vd, seq_offset) != start;
}

// The loop of vread_pvclock() (4.16-5.2): kvm-clock from vCPU 0's
// pvclock page, which the simulated vvar area holds at
// vdso::kPvclockPageOffset from its start `vd` for every layout (the
// kernel reaches it through the pvclock_page symbol). The version's low
// bit is ignored (pvclock_read_begin()), so an update in progress fails the
// re-check; the virt_rmb()s pair with the hypervisor's smp_wmb()s around
// its fields. __pvclock_read_cycles() of these kernels has no
// negative-delta clamp. Without PVCLOCK_TSC_STABLE_BIT, *stable is false
// and the value 0; nullopt: abandoned by the access policy.
template <vdso::VdsoAccess A>
std::optional<uint64_t> PvclockRead(A& acc, const uint8_t* vd, bool* stable) {
  const uint8_t* pvti = vd + vdso::kPvclockPageOffset;
  for (;;) {
    const uint32_t version =
        acc.template Load<uint32_t>(pvti + vdso::kPvtiVersion) & ~1u;
    acc.Rmb();
    if ((acc.template Load<uint8_t>(pvti + vdso::kPvtiFlags) &
         vdso::kPvclockTscStableBit) == 0) {
      *stable = false;
      return 0;
    }
    const uint64_t tsc = acc.ReadTsc();
    const uint64_t delta =
        tsc - acc.template Load<uint64_t>(pvti + vdso::kPvtiTscTimestamp);
    const uint32_t mul = acc.template Load<uint32_t>(pvti + vdso::kPvtiMul);
    const int8_t shift = static_cast<int8_t>(
        acc.template Load<uint8_t>(pvti + vdso::kPvtiShift));
    const uint64_t ret =
        acc.template Load<uint64_t>(pvti + vdso::kPvtiSystemTime) +
        vdso::upstream::upstream_internal::PvclockScaleDelta(delta, mul, shift);
    acc.Rmb();
    if (version == acc.template Load<uint32_t>(pvti + vdso::kPvtiVersion)) {
      *stable = true;
      return ret;
    }
    if (!acc.MayRetry()) return std::nullopt;
  }
}

}  // namespace vdsolab::variants::gtod::gtod_internal

#endif  // VDSOLAB_VARIANTS_GTOD_GTOD_SEQ_H_
