// File: sim/page_view.h
//
// The page as one reader call sees it. Stores visible at the call's start
// are committed to the page for good; stores that land while the call runs
// are applied with an undo log and rolled back afterwards, because the next
// call may start earlier in true time than this one ended (a preempted
// call runs ahead of the others).

#ifndef VDSOLAB_SIM_PAGE_VIEW_H_
#define VDSOLAB_SIM_PAGE_VIEW_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "sim/writer.h"
#include "vdso/vvar_page.h"

namespace vdsolab::sim {

class PageView {
 public:
  PageView(vdso::VvarPage* page, Writer* writer)
      : page_(page), writer_(writer) {}

  // Commits every store visible at or before t (no call may be in flight).
  void CommitThrough(uint64_t t_ns) {
    // Before every call; mostly nothing is due: the writer has no operation
    // by t and no pending store is visible (Writer::PopPending(0) does
    // nothing).
    if (t_ns < DueAt()) return;
    writer_->AdvanceTo(t_ns);
    size_t n = 0;
    for (const TimedStore& s : writer_->pending()) {
      if (s.visible_ns > t_ns) break;
      page_->Apply(s.store);
      ++n;
    }
    writer_->PopPending(n);
  }

  // Applies, undoably, the pending stores visible at or before t; returns
  // how many it applied now.
  uint32_t ApplyThrough(uint64_t t_ns) {
    if (NothingDueBy(t_ns)) return 0;
    writer_->AdvanceTo(t_ns);
    uint32_t n = 0;
    while (applied_ < writer_->pending().size() &&
           writer_->pending()[applied_].visible_ns <= t_ns) {
      ApplyNext();
      ++n;
    }
    return n;
  }

  // Whether ApplyThrough(t_ns) would do nothing: the writer has nothing
  // due and no pending store is visible yet. True before most loads.
  bool NothingDueBy(uint64_t t_ns) const { return t_ns < DueAt(); }

  // The earliest time at which ApplyThrough() has anything to do (the
  // writer's next operation, or the next pending store becoming visible).
  // Changes only when ApplyThrough() or
  // CommitThrough() runs, so a call's hooks may keep it between those.
  uint64_t DueAt() const {
    uint64_t t = writer_->next_operation_ns();
    const absl::Span<const TimedStore> pending = writer_->pending();
    if (applied_ < pending.size())
      t = std::min(t, pending[applied_].visible_ns);
    return t;
  }

  // Applies the next `n` pending stores regardless of time (exhaustive).
  void ApplyCount(size_t n) {
    for (size_t i = 0; i < n && applied_ < writer_->pending().size(); ++i) {
      ApplyNext();
    }
  }

  // The next pending store not yet applied, if any.
  const TimedStore* NextPending() const {
    return applied_ < writer_->pending().size() ? &writer_->pending()[applied_]
                                                : nullptr;
  }
  size_t applied() const { return applied_; }

  // Undoes everything applied since the last commit.
  void Rollback() {
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) {
      page_->Store(it->offset, it->size, it->value);
    }
    undo_.clear();
    applied_ = 0;
  }

  const vdso::VvarPage& page() const { return *page_; }

  // Relaxed ordering (faults.reorder_ppm): shows `size` (at most
  // kMaxStaleBytes) bytes at `offset`
  // as they were when only the first `version` (< applied()) of this
  // call's stores had landed, for the one load that follows; EndStale()
  // puts the page back before anything else reads or stores it. The page
  // itself holds the bytes, so a reader that loads it directly (compiled
  // kernel code after its before_load hook) sees them too.
  void ShowStale(size_t version, uint32_t offset, uint32_t size) {
    stale_offset_ = offset;
    stale_size_ = size;
    std::memcpy(stale_saved_, page_->data() + offset, size);
    uint8_t bytes[kMaxStaleBytes];
    std::memcpy(bytes, stale_saved_, size);
    // Undo, newest first, the stores after `version`, byte by byte where
    // they overlap the load.
    for (size_t k = applied_; k-- > version;) {
      const vdso::VvarStore& u = undo_[k];
      for (uint32_t b = 0; b < u.size; ++b) {
        const uint32_t at = u.offset + b;
        if (at < offset || at >= offset + size) continue;
        bytes[at - offset] = static_cast<uint8_t>(u.value >> (8 * b));
      }
    }
    page_->CopyIn(offset, bytes, size);
  }
  void EndStale() { page_->CopyIn(stale_offset_, stale_saved_, stale_size_); }
  static constexpr uint32_t kMaxStaleBytes = 16;  // The widest load.

 private:
  void ApplyNext() {
    const vdso::VvarStore& s = writer_->pending()[applied_].store;
    undo_.push_back(vdso::VvarStore{s.offset, s.size,
                                    page_->Load(s.offset, s.size), false});
    page_->Apply(s);
    ++applied_;
  }

  vdso::VvarPage* page_;
  Writer* writer_;
  size_t applied_ = 0;  // Pending stores applied (undoably) so far.
  std::vector<vdso::VvarStore> undo_;
  // ShowStale()'s bytes to put back.
  uint32_t stale_offset_ = 0;
  uint32_t stale_size_ = 0;
  uint8_t stale_saved_[kMaxStaleBytes] = {};
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_PAGE_VIEW_H_
