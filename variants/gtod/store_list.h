// File: variants/gtod/store_list.h
//
// Builds a writer's VvarUpdate: stores appended in program order, with
// wmb_before set on the first store after each smp_wmb().

#ifndef VDSOLAB_VARIANTS_GTOD_STORE_LIST_H_
#define VDSOLAB_VARIANTS_GTOD_STORE_LIST_H_

#include <cstdint>
#include <utility>

#include "vdso/vvar_page.h"

namespace vdsolab::variants::gtod {

class StoreList {
 public:
  void U32(uint32_t offset, uint32_t value) { Add(offset, 4, value); }
  void U64(uint32_t offset, uint64_t value) { Add(offset, 8, value); }
  // smp_wmb(): orders the stores before it against those after it.
  void Wmb() { wmb_pending_ = true; }
  vdso::VvarUpdate Take() { return std::move(update_); }

 private:
  void Add(uint32_t offset, uint8_t size, uint64_t value) {
    update_.stores.push_back(
        vdso::VvarStore{offset, size, value, wmb_pending_});
    wmb_pending_ = false;
  }
  vdso::VvarUpdate update_;
  bool wmb_pending_ = false;
};

}  // namespace vdsolab::variants::gtod

#endif  // VDSOLAB_VARIANTS_GTOD_STORE_LIST_H_
