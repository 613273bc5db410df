// File: ktree/internal/asm_rewrite.h
//
// Rewrites the counter reads and system calls of a compiled kernel vDSO
// object's assembly (gcc or clang -S output) into calls to the runtime
// glue's register-preserving thunks (ktree/internal/glue.c), so the
// simulation answers them without a signal handler:
//
//   rdtsc_ordered()  (the ALTERNATIVE_2 block: `rdtsc` in the text with
//                     `lfence; rdtsc` / `rdtscp` replacements), or
//   lfence; rdtsc / mfence; rdtsc  -> call vdsolab_thunk_rdtsc_ordered
//   a bare rdtsc                   -> call vdsolab_thunk_rdtsc
//   rdtscp                         -> call vdsolab_thunk_rdtscp
//   syscall                        -> call vdsolab_thunk_syscall
//
// The replacements of alternatives (.altinstr_replacement) are never
// executed (vdsolab does not apply alternatives, so the original
// instruction runs); their section is renamed to a non-executable one, so
// the final object's executable code can be checked for any counter or
// system call instruction that was not rewritten.

#ifndef VDSOLAB_KTREE_INTERNAL_ASM_REWRITE_H_
#define VDSOLAB_KTREE_INTERNAL_ASM_REWRITE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vdsolab::ktree::internal {

struct AsmRewrite {
  std::string text;  // The rewritten assembly.
  // Sites rewritten, by what they became.
  int ordered = 0;  // rdtsc_ordered() / lfence; rdtsc
  int plain = 0;    // bare rdtsc
  int rdtscp = 0;
  int syscalls = 0;
  int replacement_sections = 0;  // .altinstr_replacement made non-executable
};

inline constexpr char kThunkOrdered[] = "vdsolab_thunk_rdtsc_ordered";
inline constexpr char kThunkPlain[] = "vdsolab_thunk_rdtsc";
inline constexpr char kThunkRdtscp[] = "vdsolab_thunk_rdtscp";
inline constexpr char kThunkSyscall[] = "vdsolab_thunk_syscall";

// An error names an instruction in executable code that reaches the kernel
// or the counter in a way the glue cannot answer (sysenter, int $0x80), and
// the function it is in.
absl::StatusOr<AsmRewrite> RewriteCounterAndSyscallSites(
    std::string_view assembly);

}  // namespace vdsolab::ktree::internal

#endif  // VDSOLAB_KTREE_INTERNAL_ASM_REWRITE_H_
