// File: ktree/internal/code_map.h
//
// The functions in the compiler's assembly of a tree's vDSO code, each with
// a fingerprint of its own code, and which of them vdsolab's entry points
// reach. A patch whose changed functions are all unreached (x86's exported
// __vdso_*() wrappers, or the 32-bit paths: vdsolab calls the
// __cvdso_*_data() functions) is tested by nothing vdsolab runs;
// comparing a patched build's map with the unpatched tree's says so.

#ifndef VDSOLAB_KTREE_INTERNAL_CODE_MAP_H_
#define VDSOLAB_KTREE_INTERNAL_CODE_MAP_H_

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace vdsolab::ktree::internal {

// What is not inside any function (data, constants) is one pseudo-function
// of this name, always counted as reached: a change there is not
// attributed.
inline constexpr char kOutsideFunctions[] = "(data)";

struct CodeMap {
  // Function name -> 16 hex digits of the SHA-256 of its lines, local
  // labels (.L*) renumbered in order of appearance so that a change in one
  // function does not renumber another's; '#' comment lines left out.
  std::map<std::string, std::string> functions;
  // The functions the entries reach through any reference to them (a call,
  // a jump, an address taken), and those referenced from data.
  std::set<std::string> reached;

  friend bool operator==(const CodeMap&, const CodeMap&) = default;
};

// Maps GCC or Clang x86-64 assembly (`.type NAME, @function` ... `.size`).
CodeMap MapCode(std::string_view assembly,
                const std::vector<std::string>& entries);
inline CodeMap MapCode(std::string_view assembly, std::string_view entry) {
  return MapCode(assembly, std::vector<std::string>{std::string(entry)});
}

// The functions whose fingerprint differs between `base` and `patched`
// (present in only one counts as differing), in name order.
std::vector<std::string> ChangedFunctions(const CodeMap& base,
                                          const CodeMap& patched);

// One line each for a cache's meta file ("name:hash name:hash ...", and
// the reached names), and back; an empty text gives an empty map.
std::string FormatFunctions(const CodeMap& map);
std::string FormatReached(const CodeMap& map);
CodeMap ParseCodeMap(std::string_view functions, std::string_view reached);

}  // namespace vdsolab::ktree::internal

#endif  // VDSOLAB_KTREE_INTERNAL_CODE_MAP_H_
