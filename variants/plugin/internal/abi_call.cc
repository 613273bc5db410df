#include "variants/plugin/internal/abi_call.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "variants/plugin/call_guard.h"

extern "C" {
constinit thread_local vdsolab::variants::abi_internal::AbiFrame
    vdsolab_abi_frame = {};
}

namespace vdsolab::variants::abi_internal {

vdso::CallFault AbiFault(uint64_t changed) {
  static constexpr const char* kRegisters[] = {"rbx", "rbp", "r12",
                                               "r13", "r14", "r15"};
  std::vector<std::string> what;
  std::vector<std::string> registers;
  for (int i = 0; i < 6; ++i) {
    if ((changed & (uint64_t{1} << i)) != 0) registers.push_back(kRegisters[i]);
  }
  if (!registers.empty()) {
    what.push_back(absl::StrCat("callee-saved register",
                                registers.size() > 1 ? "s " : " ",
                                absl::StrJoin(registers, ", "), " changed"));
  }
  if ((changed & kChangedRsp) != 0) what.push_back("the stack pointer moved");
  if ((changed & kChangedFrame) != 0) {
    what.push_back("its caller's stack frame written");
  }
  vdso::CallFault f;
  f.kind = vdso::CallFault::Kind::kCrash;
  f.called = call_guard_internal::Interned(
      absl::StrCat("returned with ", absl::StrJoin(what, " and ")));
  f.returned = true;
  f.why =
      "the x86-64 ABI has a call keep rbx, rbp, r12-r15 and the stack "
      "pointer, and leave its caller's frame alone; vdsolab put its own "
      "back";
  return f;
}

}  // namespace vdsolab::variants::abi_internal
