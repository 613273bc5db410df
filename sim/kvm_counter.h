// File: sim/kvm_counter.h
//
// On a kvm-clock machine the counter hooks return the TSC, as the CPU
// does, and the vDSO scales it with vCPU 0's pvclock page itself. What the
// checker compares is the clocksource counter the timekeeper's state
// counts in: for a call that read the page in PVCLOCK mode, kvm-clock as
// the hypervisor's state in force when the read ran gives it from that
// TSC value (a reader that used a torn or stale pvti answers otherwise, and
// is inexact). Both strategies resolve a call's counter here before
// checking it.

#ifndef VDSOLAB_SIM_KVM_COUNTER_H_
#define VDSOLAB_SIM_KVM_COUNTER_H_

#include "common/clockid.h"
#include "sim/call.h"
#include "sim/writer.h"
#include "timekeeper/clocksource.h"
#include "variants/variant.h"

namespace vdsolab::sim::internal {

inline void ResolveKvmClock(const Writer& writer,
                            const variants::Variant& variant, CallRecord* rec) {
  const Hypervisor* hv = writer.hypervisor();
  if (hv == nullptr || !rec->read_counter || rec->fell_back) return;
  // A variant's own clocks (user-space TSC clocks) convert the TSC
  // themselves; one standing for a kernel clock (same_as) reads as it does.
  if (const variants::ClockDef* own =
          variants::FindOwnClock(variant, rec->clock);
      own != nullptr && own->same_as < 0) {
    return;
  }
  // The state the reader validated says which counter it scaled: its
  // clocksource's vDSO mode (after a change to the TSC, TSC mode). An aux
  // clock's state is its own record's publication, whose seq counts apart
  // from the core's.
  const timekeeper::Timekeeper* tk = nullptr;
  if ((rec->begin_seq & 1) == 0) {
    if (rec->clock >= kClockAux && rec->clock <= kClockAuxLast) {
      const AuxRecord* a =
          writer.AuxUpdate(rec->clock - kClockAux, rec->begin_seq / 2);
      if (a != nullptr) tk = &a->tk;
    } else if (const UpdateRecord* u = writer.Update(rec->begin_seq / 2)) {
      tk = &u->tk;
    }
  }
  // (A torn or long-preempted call: the newest state started by its read.)
  if (tk == nullptr) tk = &writer.LatestStartedAt(rec->counter_ns).tk;
  if (tk->tkr_mono.clock == nullptr || tk->tkr_mono.clock->vdso_clock_mode !=
                                           timekeeper::kVdsoClockmodePvclock) {
    return;
  }
  // The pvti the reader validated: the state on the page when its read
  // ran (an unordered read's value may be older, but it was scaled with
  // that state all the same).
  rec->counter = hv->VdsoRead(rec->counter, rec->counter_step_ns);
  rec->pvclock_read = true;
}

}  // namespace vdsolab::sim::internal

#endif  // VDSOLAB_SIM_KVM_COUNTER_H_
