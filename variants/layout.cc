#include "variants/layout.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "vdso/datapage.h"

namespace vdsolab::variants {

Layout::Layout(std::string name, std::string summary, std::vector<Field> fields)
    : name_(std::move(name)),
      summary_(std::move(summary)),
      fields_(std::move(fields)) {
  std::sort(fields_.begin(), fields_.end(),
            [](const Field& a, const Field& b) { return a.offset < b.offset; });
  for (const Field& f : fields_) {
    if (f.kind == FieldKind::kData) continue;
    if (kind_at_.size() <= f.offset) kind_at_.resize(f.offset + 1);
    kind_at_[f.offset] = f.kind;
    if (f.kind != FieldKind::kSeq) continue;
    if (seq_start_.size() <= f.offset) seq_start_.resize(f.offset + 1);
    seq_start_[f.offset] = 1;
  }
}

const Field* Layout::FieldAt(uint32_t offset) const {
  auto it = std::upper_bound(
      fields_.begin(), fields_.end(), offset,
      [](uint32_t off, const Field& f) { return off < f.offset; });
  if (it == fields_.begin()) return nullptr;
  --it;
  return offset < it->offset + it->size ? &*it : nullptr;
}

std::string Layout::DescribeOffset(uint32_t offset) const {
  const Field* f = FieldAt(offset);
  if (f == nullptr) return absl::StrFormat("+%#x", offset);
  if (f->offset == offset) return f->name;
  return absl::StrFormat("%s+%d", f->name, offset - f->offset);
}

std::string Layout::DescribeDifference(
    uint32_t offset, const std::function<uint8_t(uint32_t)>& a,
    const std::function<uint8_t(uint32_t)>& b, std::string_view a_name,
    std::string_view b_name) const {
  const Field* f = FieldAt(offset);
  if (f == nullptr) {
    return absl::StrFormat("page byte vvar+%d (%s): %s 0x%02x, %s 0x%02x",
                           offset, DescribeOffset(offset), a_name, a(offset),
                           b_name, b(offset));
  }
  uint64_t va = 0, vb = 0;
  for (uint32_t k = f->size; k-- > 0;) {  // x86: little-endian.
    va = va << 8 | a(f->offset + k);
    vb = vb << 8 | b(f->offset + k);
  }
  return absl::StrFormat("page field vvar+%d %s (u%d): %s %#x, %s %#x",
                         f->offset, f->name, f->size * 8, a_name, va, b_name,
                         vb);
}

std::string Layout::DescribePage(const uint8_t* page, bool nonzero_only) const {
  std::string out;
  for (const Field& f : fields_) {
    uint64_t v = 0;
    std::memcpy(&v, page + f.offset, f.size);  // x86: little-endian.
    if (nonzero_only && v == 0) continue;
    absl::StrAppendFormat(&out, "    %-44s = %d (%#x)\n", f.name, v, v);
  }
  return out;
}

std::string Layout::DescribeStore(const vdso::VvarStore& store) const {
  return absl::StrFormat("%s%s = %#x (u%d)", store.wmb_before ? "wmb; " : "",
                         DescribeOffset(store.offset), store.value,
                         store.size * 8);
}

FieldList& FieldList::Add(std::string name, uint32_t offset, uint8_t size,
                          FieldKind kind) {
  fields_.push_back(Field{std::move(name), offset, size, kind});
  return *this;
}

FieldList& FieldList::AddPvclockPage() {
  const uint32_t pv = vdso::kPvclockPageOffset;
  return Add("pvti.version", pv + vdso::kPvtiVersion, 4)
      .Add("pvti.tsc_timestamp", pv + vdso::kPvtiTscTimestamp, 8)
      .Add("pvti.system_time", pv + vdso::kPvtiSystemTime, 8)
      .Add("pvti.tsc_to_system_mul", pv + vdso::kPvtiMul, 4)
      .Add("pvti.tsc_shift", pv + vdso::kPvtiShift, 1)
      .Add("pvti.flags", pv + vdso::kPvtiFlags, 1);
}

}  // namespace vdsolab::variants
