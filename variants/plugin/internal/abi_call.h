// File: variants/plugin/internal/abi_call.h
//
// A plugin's function called through a thunk that checks the x86-64 ABI's
// promises on its return (abi_call.S): rbx, rbp and r12-r15 and the stack
// pointer as they were, and the 64 bytes of its caller's frame above its
// return address untouched. MXCSR, the x87 control word and DF are checked
// by call_guard.h; these are the general registers: a plugin that returned
// with rbp changed crashed vdsolab, one with r15 changed made it run
// another simulation and print PASS. The thunk puts vdsolab's values back
// and returns to its caller whatever the plugin did to them, and records
// what changed; the caller makes that a finding (AbiFault()). Only the
// simulation's calls go through it (not NativeAccess's, the benchmarks').

#ifndef VDSOLAB_VARIANTS_PLUGIN_INTERNAL_ABI_CALL_H_
#define VDSOLAB_VARIANTS_PLUGIN_INTERNAL_ABI_CALL_H_

#include <cstdint>
#include <type_traits>

#include "vdso/access.h"

namespace vdsolab::variants::abi_internal {

// The thunk's record for this thread (abi_call.S reads and writes it by
// its TLS offset). Layout fixed: the assembly's offsets.
struct AbiFrame {
  uint64_t rbx, rbp, r12, r13, r14, r15;
  uint64_t return_address;
  uint64_t stack_after;  // The stack pointer once the thunk returns.
  uint64_t changed;      // kChanged* bits of the last return.
};
static_assert(sizeof(AbiFrame) == 72);

inline constexpr uint64_t kChangedRbx = 1;
inline constexpr uint64_t kChangedRbp = 2;
inline constexpr uint64_t kChangedR12 = 4;
inline constexpr uint64_t kChangedR13 = 8;
inline constexpr uint64_t kChangedR14 = 16;
inline constexpr uint64_t kChangedR15 = 32;
inline constexpr uint64_t kChangedRsp = 64;
inline constexpr uint64_t kChangedFrame = 128;

}  // namespace vdsolab::variants::abi_internal

extern "C" {
// Defined in abi_call.cc; abi_call.S addresses it through its TLS offset.
extern constinit thread_local vdsolab::variants::abi_internal::AbiFrame
    vdsolab_abi_frame;
// Calls fn(a0, a1, a2, a3) and answers rax.
uint64_t vdsolab_abi_call(const void* fn, uint64_t a0, uint64_t a1, uint64_t a2,
                          uint64_t a3);
}

namespace vdsolab::variants::abi_internal {

template <class T>
[[gnu::always_inline]] inline uint64_t Word(T v) {
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<uint64_t>(v);
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
}

// fn(args...) through the thunk (at most 4 arguments, integers or
// pointers; an integer or pointer result).
template <class R, class... Params, class... Args>
[[gnu::always_inline]] inline R Call(R (*fn)(Params...), Args... args) {
  static_assert(sizeof...(Args) <= 4 && sizeof...(Args) == sizeof...(Params));
  uint64_t w[4] = {0, 0, 0, 0};
  int i = 0;
  ((w[i++] = Word(static_cast<Params>(args))), ...);
  const uint64_t r = vdsolab_abi_call(reinterpret_cast<const void*>(fn), w[0],
                                      w[1], w[2], w[3]);
  if constexpr (std::is_pointer_v<R>) {
    return reinterpret_cast<R>(r);
  } else {
    return static_cast<R>(r);
  }
}

// What the last call through the thunk on this thread changed (kChanged*
// bits), cleared: 0 for a call that kept the ABI's promises.
inline uint64_t TakeChanged() {
  const uint64_t c = vdsolab_abi_frame.changed;
  if (c != 0) [[unlikely]] {
    vdsolab_abi_frame.changed = 0;
  }
  return c;
}

// The finding for `changed` (a crash kind: the call did what a vDSO call
// cannot), with a text every run prints the same.
vdso::CallFault AbiFault(uint64_t changed);

}  // namespace vdsolab::variants::abi_internal

#endif  // VDSOLAB_VARIANTS_PLUGIN_INTERNAL_ABI_CALL_H_
