// File: variants/gtod/gtod_seq.h
//
// What the 4.16 and 4.20 x86 vDSOs share: loads from vsyscall_gtod_data
// by field offset, the gtod seqcount read side
// (gtod_read_begin()/gtod_read_retry() in arch/x86/include/asm/vgtod.h,
// unchanged from 4.16 to 5.2).

#ifndef VDSOLAB_VARIANTS_GTOD_GTOD_SEQ_H_
#define VDSOLAB_VARIANTS_GTOD_GTOD_SEQ_H_

#include <cstdint>
#include <optional>

#include "common/math64.h"
#include "vdso/access.h"

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

}  // namespace vdsolab::variants::gtod::gtod_internal

#endif  // VDSOLAB_VARIANTS_GTOD_GTOD_SEQ_H_
