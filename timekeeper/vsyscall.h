// File: timekeeper/vsyscall.h
//
// update_vsyscall() (kernel/time/vsyscall.c, 6.15+ with coarse_nsec and
// struct vdso_clock): the timekeeper projected onto the vDSO time data page,
// produced as the ordered list of stores the kernel makes (design rule 3).

#ifndef VDSOLAB_TIMEKEEPER_VSYSCALL_H_
#define VDSOLAB_TIMEKEEPER_VSYSCALL_H_

#include <cstdint>
#include <deque>

#include "timekeeper/timekeeper.h"
#include "timekeeper/timekeeping.h"
#include "vdso/vvar_page.h"

namespace vdsolab::timekeeper {

// The stores of update_vsyscall(tk), in the kernel's source order: the
// seq++ of both records, smp_wmb(), the data, smp_wmb(), seq++ again.
// `seq_hres`/`seq_raw` are the records' seq values before the update (the
// writer reads its own last stores). Fields are stored once each with their
// final value, as the compiler emits the kernel's read-modify-write loops.
vdso::VvarUpdate BuildUpdateVsyscall(const Timekeeper& tk, uint32_t seq_hres,
                                     uint32_t seq_raw, uint32_t hrtimer_res);

// A VsyscallSink that turns each update_vsyscall() into a VvarUpdate for one
// page. It applies the update at once, or queues it for a scheduler to
// apply store by store (updates stay in order: the kernel serialises them
// under tk_core.lock).
class VvarPublisher : public VsyscallSink {
 public:
  enum class Mode { kApplyImmediately, kQueue };

  // hrtimer_res: 1 ns with high-resolution timers, else TICK_NSEC.
  VvarPublisher(vdso::VvarPage* page, Mode mode, uint32_t hrtimer_res);

  void UpdateVsyscall(const Timekeeper& tk) override;

  // Updates built but not yet handed out (kQueue mode), oldest first.
  std::deque<vdso::VvarUpdate>& pending() { return pending_; }
  uint64_t updates_published() const { return updates_published_; }

 private:
  vdso::VvarPage* page_;
  Mode mode_;
  uint32_t hrtimer_res_;
  uint32_t seq_[2];  // The writer's view of both records' seq.
  std::deque<vdso::VvarUpdate> pending_;
  uint64_t updates_published_ = 0;
};

}  // namespace vdsolab::timekeeper

#endif  // VDSOLAB_TIMEKEEPER_VSYSCALL_H_
