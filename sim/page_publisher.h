// File: sim/page_publisher.h
//
// update_vsyscall() through a variant's writer (its layout, its seq
// protocol), each update applied to a page at once: the sink of a
// timekeeper whose page is read only between updates (the oracle check,
// the default job's native timing). The simulation's writer, whose stores
// race the readers one by one, is sim/writer.h (its VariantPublisher
// keeps them pending).

#ifndef VDSOLAB_SIM_PAGE_PUBLISHER_H_
#define VDSOLAB_SIM_PAGE_PUBLISHER_H_

#include <cstdint>

#include "timekeeper/timekeeping.h"
#include "variants/variant.h"
#include "vdso/vvar_page.h"

namespace vdsolab::sim {

class PagePublisher : public timekeeper::VsyscallSink {
 public:
  PagePublisher(const variants::Variant* variant, vdso::VvarPage* page)
      : variant_(variant), page_(page) {}
  void UpdateVsyscall(const timekeeper::Timekeeper& tk) override {
    page_->Apply(variant_->build_update(tk, seq_, context));
    seq_ += 2;
    ++updates;
  }
  variants::PublishContext context;
  uint64_t updates = 0;

 private:
  const variants::Variant* variant_;
  vdso::VvarPage* page_;
  uint32_t seq_ = 0;  // Every seq word's value between updates.
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_PAGE_PUBLISHER_H_
