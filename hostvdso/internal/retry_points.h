// File: hostvdso/internal/retry_points.h
//
// Where a compiled vDSO's call would ask the simulation whether it may go
// on. Machine code never calls may_retry(); a built-in reader asks once per
// loop iteration. So the parent asks where a built-in reader would, from
// the loads alone (the seqlock protocol as its loads show it, with the
// layout's seq words): before a seq word is loaded again after it was odd
// (the spin) or after a re-check that failed (the retry), and before every
// load past a budget (a loop that loads anything else). This is the rule
// kernel-tree variants use (ktree/internal/glue.c), so both kinds of
// compiled code have the built-in readers' livelock coverage.

#ifndef VDSOLAB_HOSTVDSO_INTERNAL_RETRY_POINTS_H_
#define VDSOLAB_HOSTVDSO_INTERNAL_RETRY_POINTS_H_

#include <cstdint>

#include "variants/layout.h"

namespace vdsolab::hostvdso::internal {

class RetryPoints {
 public:
  // Loads per call before may_retry() is asked at every further one.
  static constexpr uint32_t kLoadBudget = 4096;

  explicit RetryPoints(const variants::Layout* layout) : layout_(layout) {}

  // How many times to ask may_retry() before loading `size` bytes at
  // `offset` (0, 1 or 2: past the budget, and a seq retry point).
  int AsksBefore(uint32_t offset, uint32_t size) {
    int asks = ++loads_ > kLoadBudget ? 1 : 0;
    if (IsSeq(offset, size) && retry_due_) {
      retry_due_ = false;
      ++asks;
    }
    return asks;
  }

  // After the load: what a seq word held.
  void Loaded(uint32_t offset, uint32_t size, uint32_t value) {
    if (!IsSeq(offset, size)) return;
    if (offset != seq_offset_) {
      seq_offset_ = offset;
      checking_ = false;
    }
    if (!checking_) {
      // A begin load: odd spins, even opens the section.
      if ((value & 1) != 0) {
        retry_due_ = true;
      } else {
        checking_ = true;
        seq_start_ = value;
      }
    } else {
      // The re-check: a different value retries.
      if (value != seq_start_) retry_due_ = true;
      checking_ = false;
    }
  }

 private:
  bool IsSeq(uint32_t offset, uint32_t size) const {
    return size == 4 && layout_->IsSeq(offset);
  }

  const variants::Layout* layout_;
  uint32_t loads_ = 0;
  uint32_t seq_offset_ = ~0u;
  uint32_t seq_start_ = 0;
  bool checking_ = false;
  bool retry_due_ = false;
};

}  // namespace vdsolab::hostvdso::internal

#endif  // VDSOLAB_HOSTVDSO_INTERNAL_RETRY_POINTS_H_
