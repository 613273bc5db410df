// File: vdso/store_list.h
//
// Builds a writer's VvarUpdate (design rule 3): stores appended in program
// order, with wmb_before set on the first store after each barrier. Every
// writer uses it: update_vsyscall() by era, the 4.x gtod writers and the
// perf mmap page's.

#ifndef VDSOLAB_VDSO_STORE_LIST_H_
#define VDSOLAB_VDSO_STORE_LIST_H_

#include <cstdint>
#include <utility>

#include "vdso/vvar_page.h"

namespace vdsolab::vdso {

class StoreList {
 public:
  void U16(uint32_t offset, uint16_t value) { Add(offset, 2, value); }
  void U32(uint32_t offset, uint32_t value) { Add(offset, 4, value); }
  void U64(uint32_t offset, uint64_t value) { Add(offset, 8, value); }
  void Add(uint32_t offset, uint8_t size, uint64_t value) {
    update_.stores.push_back(VvarStore{offset, size, value, wmb_pending_});
    wmb_pending_ = false;
  }
  // smp_wmb(), or barrier() where that is what the writer has (on x86
  // smp_wmb() is barrier(): TSO keeps stores in order): orders the stores
  // before it against those after it, the order the reader's smp_rmb()
  // pairs with.
  void Wmb() { wmb_pending_ = true; }
  VvarUpdate Take() { return std::move(update_); }

 private:
  VvarUpdate update_;
  bool wmb_pending_ = false;
};

}  // namespace vdsolab::vdso

#endif  // VDSOLAB_VDSO_STORE_LIST_H_
