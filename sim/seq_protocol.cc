#include "sim/seq_protocol.h"

#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace vdsolab::sim {

std::string SeqProtocolMismatch(const vdso::VvarUpdate& update,
                                const variants::Layout& layout,
                                std::map<uint32_t, uint32_t>* words) {
  // The values each seq word is given, in store order.
  std::map<uint32_t, std::vector<uint64_t>> written;
  for (const vdso::VvarStore& s : update.stores) {
    if (layout.IsSeq(s.offset)) written[s.offset].push_back(s.value);
  }
  std::string finding;
  for (const auto& [offset, values] : written) {
    uint32_t& between = (*words)[offset];
    const uint64_t begin = static_cast<uint32_t>(between + 1);
    const uint64_t end = static_cast<uint32_t>(between + 2);
    if (finding.empty() &&
        (values.size() != 2 || values[0] != begin || values[1] != end)) {
      finding = absl::StrFormat(
          "the update wrote %s = %s over %#x; the write protocol makes it "
          "%#x (odd) and then %#x",
          layout.DescribeOffset(offset),
          absl::StrJoin(values, " then ",
                        [](std::string* out, uint64_t v) {
                          absl::StrAppendFormat(out, "%#x", v);
                        }),
          between, begin, end);
    }
    between = static_cast<uint32_t>(values.back());
  }
  return finding;
}

}  // namespace vdsolab::sim
