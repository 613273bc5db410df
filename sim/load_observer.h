// File: sim/load_observer.h
//
// What both simulation strategies' hooks record about a call's page loads:
// the value of each load (read from the page just before it happens), which
// seq the call's last attempt began with, and when the last seq load was
// (where an unordered counter read may come from). The records are a
// vdso::LoadLane's, so that HookedAccess can keep them inline.

#ifndef VDSOLAB_SIM_LOAD_OBSERVER_H_
#define VDSOLAB_SIM_LOAD_OBSERVER_H_

#include <cstdint>
#include <cstring>

#include "absl/strings/str_format.h"
#include "common/bytes.h"
#include "sim/call.h"
#include "variants/layout.h"
#include "vdso/access.h"
#include "vdso/vvar_page.h"

namespace vdsolab::sim::internal {

// Whether a counter read of this kind may execute before the loads that
// precede it: a bare rdtsc always may; rdtsc_ordered only where the
// scenario breaks its fence (faults.unordered_counter_read); rdtscp never.
inline bool MayReadEarly(vdso::CounterRead kind, bool unordered_fault) {
  switch (kind) {
    case vdso::CounterRead::kPlain:
      return true;
    case vdso::CounterRead::kOrdered:
      return unordered_fault;
    case vdso::CounterRead::kRdtscp:
      return false;
  }
  return false;
}

class LoadObserver {
 public:
  explicit LoadObserver(const variants::Layout* layout) : layout_(layout) {
    lane_.seq_start = layout->seq_starts().data();
    lane_.seq_start_size = layout->seq_starts().size();
  }

  // Records a load of `size` bytes at `offset` at true time `now`; returns
  // the value the load sees. A data load takes the last seq seen as the
  // seq its attempt began with.
  uint64_t OnLoad(const uint8_t* page, uint32_t offset, uint32_t size,
                  uint64_t now, CallRecord* rec) {
    lane_.now = now;
    lane_.Note(page + offset, offset, size);
    if (!lane_.IsSeq(offset)) rec->begin_seq = lane_.begin_seq;
    return LoadSized(page + offset, size);
  }

  std::string Describe(uint32_t offset, uint64_t value) const {
    return absl::StrFormat("load %s = %#x", layout_->DescribeOffset(offset),
                           value);
  }
  bool IsSeq(uint32_t offset) const { return lane_.IsSeq(offset); }

  uint32_t last_seq() const { return lane_.last_seq; }
  uint64_t last_seq_ns() const { return lane_.last_seq_ns; }
  uint32_t last_seq_offset() const { return lane_.last_seq_offset; }

  // The same records as the inline path's (vdso::LoadLane): the random
  // strategy's hooks hand this to HookedAccess, which then notes most loads
  // itself; the lane's `now` is then the call's true time.
  vdso::LoadLane& lane() { return lane_; }

 private:
  const variants::Layout* layout_;
  vdso::LoadLane lane_;
};

}  // namespace vdsolab::sim::internal

#endif  // VDSOLAB_SIM_LOAD_OBSERVER_H_
