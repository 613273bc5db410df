// File: timekeeper/vsyscall.h
//
// update_vsyscall() (kernel/time/vsyscall.c, 6.15+ with coarse_nsec and
// struct vdso_clock): the timekeeper projected onto the vDSO time data page,
// produced as the ordered list of stores the kernel makes (design rule 3).

#ifndef VDSOLAB_TIMEKEEPER_VSYSCALL_H_
#define VDSOLAB_TIMEKEEPER_VSYSCALL_H_

#include <cstdint>
#include <vector>

#include "common/clockid.h"
#include "timekeeper/timekeeper.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/timens.h"
#include "vdso/vvar_page.h"

namespace vdsolab::timekeeper {

// The stores of update_vsyscall(tk), in the kernel's source order: the
// seq++ of both records, smp_wmb(), the data, smp_wmb(), seq++ again.
// `seq_hres`/`seq_raw` are the records' seq values before the update (the
// writer reads its own last stores). Fields are stored once each with their
// final value, as the compiler emits the kernel's read-modify-write loops.
// `boottime_shift_overflow` publishes BOOTTIME with 5.3's arithmetic
// (offs_boot in ns << shift, which wraps after about 18 minutes of sleep at
// shift 24): the history tests' TimekeepingDefects switch.
vdso::VvarUpdate BuildUpdateVsyscall(const Timekeeper& tk, uint32_t seq_hres,
                                     uint32_t seq_raw, uint32_t hrtimer_res,
                                     bool boottime_shift_overflow = false);

// vdso_time_update_aux() (6.17+, after the Sep 2025 fix that keeps the
// offset as a timespec): one aux clock's record, aux_clock_data[tk.id - 1],
// under that record's own seq (vdso_write_begin_clock()). `seq` is the
// record's seq before the update. The base drops xtime_nsec's sub-ns part
// (it is shifted down, the offset's ns added, and shifted back up), so the
// vDSO's aux time can read up to 1 ns below the syscall's.
vdso::VvarUpdate BuildUpdateAux(const Timekeeper& tk, uint32_t seq);

// timens_set_vvar_page() with timens_setup_vdso_clock_data() (6.17+, aux
// records included): a time namespace's page, written once before its
// first task runs. Every record gets seq 1 (odd for good, so readers
// divert) and mode TIMENS; offset[] holds the namespace's MONOTONIC offset
// for MONOTONIC, MONOTONIC_RAW and MONOTONIC_COARSE and its BOOTTIME offset
// for BOOTTIME and BOOTTIME_ALARM, zeros elsewhere (the page starts
// zeroed). Offsets relative to the namespace page.
vdso::VvarUpdate BuildTimensPage(const TimensOffsets& offsets,
                                 bool aux_clocks = true);

// Where a record keeps what a namespace page sets: seq, clock_mode and
// offset[0] (the union with basetime[]), from the record's start.
struct TimensRecordShape {
  uint32_t seq;
  uint32_t clock_mode;
  uint32_t offset;
};
// The namespace page of any era's layout: BuildTimensPage()'s stores for
// records at `records` (page offsets) of shape `shape`.
vdso::VvarUpdate BuildTimensRecords(const TimensOffsets& offsets,
                                    const std::vector<uint32_t>& records,
                                    const TimensRecordShape& shape);

// A VsyscallSink that applies each update_vsyscall() to one page at once,
// continuing the seq the page holds. (The simulation, which lands stores
// one at a time, publishes through the variant's writer: sim/writer.h.)
class VvarPublisher : public VsyscallSink {
 public:
  // hrtimer_res: 1 ns with high-resolution timers, else TICK_NSEC;
  // boottime_shift_overflow: BuildUpdateVsyscall()'s 5.3 BOOTTIME.
  VvarPublisher(vdso::VvarPage* page, uint32_t hrtimer_res,
                bool boottime_shift_overflow = false);

  void UpdateVsyscall(const Timekeeper& tk) override;
  void UpdateAux(const Timekeeper& tk) override;

  uint64_t updates_published() const { return updates_published_; }

 private:
  vdso::VvarPage* page_;
  uint32_t hrtimer_res_;
  bool boottime_shift_overflow_;
  uint32_t seq_[2];  // The writer's view of both records' seq.
  uint32_t aux_seq_[kMaxAuxClocks] = {};
  uint64_t updates_published_ = 0;
};

}  // namespace vdsolab::timekeeper

#endif  // VDSOLAB_TIMEKEEPER_VSYSCALL_H_
