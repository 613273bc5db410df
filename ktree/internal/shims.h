// File: ktree/internal/shims.h
//
// What the kernel's build would supply around an unconfigured tree's vDSO
// code, and nothing else (docs/kernel-trees.md lists each item and why):
//
// - generated/autoconf.h: the x86-64 config symbols the headers the vDSO
//   includes test (CONFIG_GENERIC_GETTIMEOFDAY, ..._OVERFLOW_PROTECT,
//   PARAVIRT_CLOCK, TIME_NS, ...), hand-made; CONFIG_HYPERV_TIMER is left
//   out, which keeps the Hyper-V TSC page (and half the kernel) out.
// - generated/bounds.h and an empty generated/timeconst.h (made from
//   kernel/bounds.c and kernel/time/timeconst.bc by a configured build).
// - asm/ and uapi/asm/ wrappers of their asm-generic/ namesakes, made as
//   scripts/Makefile.asm-generic makes them: every generic-y of the arch's
//   Kbuild and every mandatory-y of asm-generic's Kbuild the arch does not
//   provide, read from the tree's own Kbuild files.
// - uapi/asm/unistd_64.h from the tree's syscall_64.tbl (common and 64
//   ABIs), as scripts/syscallhdr.sh makes it; empty unistd_64_x32.h and
//   unistd_32_ia32.h (only the x32/ia32 numbers, which the 64-bit vDSO
//   does not use).
// - The compiler flags of the kernel's x86 vDSO build that change code
//   (arch/x86/entry/vdso/Makefile's CFL, the top Makefile's -fno-strict-
//   aliasing, -fno-strict-overflow, ...), plus vdsolab's own:
//   -fsanitize=thread without its runtime (a hook before every load),
//   -mno-red-zone (the counter and syscall sites become calls) and -fPIC.

#ifndef VDSOLAB_KTREE_INTERNAL_SHIMS_H_
#define VDSOLAB_KTREE_INTERNAL_SHIMS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ktree/internal/source.h"

namespace vdsolab::ktree::internal {

// The CONFIG_HZ a tree is built with: the coarse clocks' clock_getres()
// (LOW_RES_NSEC, TICK_NSEC at HZ) is compiled into the vDSO, so the glue
// declares it (vdsolab_plugin3.config_hz) for the check of that answer.
inline constexpr int kTreeConfigHz = 250;

struct Shims {
  std::string dir;  // Holds arch/, include/ and uapi/ include roots.
  // Tree-relative files the shims were made from (for the cache).
  std::vector<std::string> inputs;
};

// Writes the generated headers for the tree at `root` into `dir`.
absl::StatusOr<Shims> WriteShims(const std::string& root,
                                 const std::string& dir);

// The fixed parts of the shims and flags, for the cache key.
std::string ShimsFingerprint();

struct Compiler {
  std::string cc;  // As given: "gcc", "clang-14", a path.
  bool clang = false;
  std::string version_text;      // `cc --version`, for the cache key.
  std::string first_line;        // Its first line, for provenance.
  std::string resource_include;  // `cc -print-file-name=include`
};

// Runs `cc --version`; an unusable compiler is an InvalidArgument error.
absl::StatusOr<Compiler> DetectCompiler(const std::string& cc);

// The flags for compiling the tree's vDSO code from `src_root` (the tree,
// or the patched copy) with the shims in `shims_dir`.
std::vector<std::string> KernelCflags(const Compiler& cc,
                                      const std::string& src_root,
                                      const std::string& shims_dir,
                                      const KernelVersion& version);

}  // namespace vdsolab::ktree::internal

#endif  // VDSOLAB_KTREE_INTERNAL_SHIMS_H_
