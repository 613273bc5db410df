// File: variants/layout.h
//
// A page layout as data: every field's name, offset (from the start of the
// simulated time data page, vdso::VvarPage::data()) and size, and which
// fields are seq words or cycle_last. The simulation's load observers,
// traces and replays read layouts through this; the readers and writers use
// their own structs with static_asserts on every offset.

#ifndef VDSOLAB_VARIANTS_LAYOUT_H_
#define VDSOLAB_VARIANTS_LAYOUT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "vdso/vvar_page.h"

namespace vdsolab::variants {

enum class FieldKind : uint8_t {
  kData,
  kSeq,        // A seq word readers spin on and re-check.
  kCycleLast,  // Where a counter read's delta starts from.
};

struct Field {
  std::string name;  // "clock_data[0].basetime[CLOCK_MONOTONIC].nsec"
  uint32_t offset = 0;
  uint8_t size = 0;  // 1, 2, 4 or 8.
  FieldKind kind = FieldKind::kData;
};

class Layout {
 public:
  Layout(std::string name, std::string summary, std::vector<Field> fields);

  const std::string& name() const { return name_; }
  const std::string& summary() const { return summary_; }
  const std::vector<Field>& fields() const { return fields_; }  // By offset.

  // The field covering `offset`, or nullptr.
  const Field* FieldAt(uint32_t offset) const;
  bool IsSeq(uint32_t offset) const {
    return offset < kind_at_.size() && kind_at_[offset] == FieldKind::kSeq;
  }
  // 1 at each offset where a seq word starts, 0 elsewhere, up to the last
  // seq word: IsSeq() as bytes, for the simulation's inline load path
  // (vdso::LoadLane), which cannot know this header's types.
  const std::vector<uint8_t>& seq_starts() const { return seq_start_; }
  bool IsCycleLast(uint32_t offset) const {
    return offset < kind_at_.size() &&
           kind_at_[offset] == FieldKind::kCycleLast;
  }
  // "gtod.raw_mult" or "+0x1234" for bytes no field covers.
  std::string DescribeOffset(uint32_t offset) const;
  // Two pages that differ at byte `offset`, as the whole field there:
  // "page field vvar+280 clock_data[0].basetime[CLOCK_BOOTTIME].nsec (u64):
  // model 0x..., tree 0x..." (`a_name`, `b_name`); the byte alone where no
  // field covers it. `a` and `b` give a page's byte at an offset.
  std::string DescribeDifference(uint32_t offset,
                                 const std::function<uint8_t(uint32_t)>& a,
                                 const std::function<uint8_t(uint32_t)>& b,
                                 std::string_view a_name,
                                 std::string_view b_name) const;
  // Every field of `page` with its value, one per line, indented; with
  // `nonzero_only`, fields holding 0 are left out.
  std::string DescribePage(const uint8_t* page,
                           bool nonzero_only = false) const;
  // "gtod.seq = 0x1f (u32)", with "wmb; " before when an smp_wmb() precedes.
  std::string DescribeStore(const vdso::VvarStore& store) const;

 private:
  std::string name_;
  std::string summary_;
  std::vector<Field> fields_;
  // The kind of the field starting at each offset (the simulation asks for
  // every load): kData where no seq or cycle_last field starts.
  std::vector<FieldKind> kind_at_;
  std::vector<uint8_t> seq_start_;
};

// Builds field lists: Add("seq", offset, 4, FieldKind::kSeq), ...
class FieldList {
 public:
  FieldList& Add(std::string name, uint32_t offset, uint8_t size,
                 FieldKind kind = FieldKind::kData);
  // The pvclock page's fields (struct pvclock_vcpu_time_info), where the
  // 6.x vvar area has it: every layout that serves kvm-clock lists them.
  FieldList& AddPvclockPage();
  std::vector<Field> Take() { return std::move(fields_); }

 private:
  std::vector<Field> fields_;
};

}  // namespace vdsolab::variants

#endif  // VDSOLAB_VARIANTS_LAYOUT_H_
