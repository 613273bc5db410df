#include "ktree/internal/shims.h"

#include <set>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "ktree/internal/fs.h"
#include "ktree/internal/subprocess.h"
#include "ktree/internal/text.h"

namespace vdsolab::ktree::internal {
namespace {

// The config of an x86-64 SMP kernel as far as the headers the vDSO
// includes look. NR_CPUS and HZ are ordinary defconfig values; HZ is
// kTreeConfigHz (the vDSO's LOW_RES_NSEC).
constexpr char kAutoconf[] = R"(/* vdsolab: x86-64 config for the vDSO build */
#define CONFIG_X86 1
#define CONFIG_X86_64 1
#define CONFIG_64BIT 1
#define CONFIG_SMP 1
/* x86-64 selects it with a compiler that has __int128 (arch/x86/Kconfig):
 * include/vdso/math64.h's mul_u64_u32_add_u64_shr(), the slow path past
 * max_cycles, is the __int128 one in the kernel's vDSO. */
#define CONFIG_ARCH_SUPPORTS_INT128 1
/* vdsolab: KCSAN's barrier instrumentation (include/linux/kcsan-checks.h)
 * without KCSAN: under -fsanitize=thread every smp_rmb() and smp_mb()
 * becomes a __tsan_atomic_signal_fence() call, which the glue reports to
 * the simulation as the reader's barrier (relaxed ordering). */
#define CONFIG_KCSAN_WEAK_MEMORY 1
/* kcsan-checks.h defines its barrier-to-fence orders only with KCSAN on:
 * the same ones, for the instrumentation alone. */
#define __KCSAN_BARRIER_TO_SIGNAL_FENCE_mb __ATOMIC_SEQ_CST
#define __KCSAN_BARRIER_TO_SIGNAL_FENCE_wmb __ATOMIC_ACQ_REL
#define __KCSAN_BARRIER_TO_SIGNAL_FENCE_rmb __ATOMIC_ACQUIRE
#define __KCSAN_BARRIER_TO_SIGNAL_FENCE_release __ATOMIC_RELEASE
#define CONFIG_NR_CPUS 64
#define CONFIG_HZ 250
#define CONFIG_PAGE_SHIFT 12
#define CONFIG_PGTABLE_LEVELS 4
#define CONFIG_X86_L1_CACHE_SHIFT 6
#define CONFIG_X86_INTERNODE_CACHE_SHIFT 6
#define CONFIG_ILLEGAL_POINTER_VALUE 0xdead000000000000
#define CONFIG_PHYSICAL_START 0x1000000
#define CONFIG_PHYSICAL_ALIGN 0x200000
#define CONFIG_BASE_SMALL 0
#define CONFIG_TREE_RCU 1
#define CONFIG_TREE_SRCU 1
#define CONFIG_THREAD_INFO_IN_TASK 1
#define CONFIG_HAVE_ARCH_WITHIN_STACK_FRAMES 1
#define CONFIG_ARCH_HAS_CACHE_LINE_SIZE 1
#define CONFIG_ARCH_HAS_MEM_ENCRYPT 1
#define CONFIG_GENERIC_IOMAP 1
#define CONFIG_ZONE_DMA 1
#define CONFIG_ZONE_DMA32 1
#define CONFIG_GENERIC_GETTIMEOFDAY 1
#define CONFIG_HAVE_GENERIC_VDSO 1
#define CONFIG_GENERIC_VDSO_TIME_NS 1
#define CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT 1
#define CONFIG_TIME_NS 1
#define CONFIG_PARAVIRT_CLOCK 1
)";
static_assert(std::string_view(kAutoconf).find("#define CONFIG_HZ 250\n") !=
                  std::string_view::npos &&
              kTreeConfigHz == 250);

// kernel/bounds.c's output for the config above (four zones: DMA, DMA32,
// NORMAL, MOVABLE).
constexpr char kBounds[] = R"(/* vdsolab: kernel/bounds.c for the vDSO build */
#define NR_PAGEFLAGS 23
#define MAX_NR_ZONES 4
#define NR_CPUS_BITS 6
#define SPINLOCK_SIZE 4
)";

// The flags of the kernel's x86-64 vDSO build that change the code, and
// vdsolab's additions (see the header).
const std::vector<std::string>& CommonFlags() {
  static const auto* flags = new std::vector<std::string>{
      "-D__KERNEL__", "-DBUILD_VDSO", "-DBUILD_VDSO64",
      "-DDISABLE_BRANCH_PROFILING", "-nostdinc", "-std=gnu11",
      "-fno-strict-aliasing", "-fno-common", "-fshort-wchar",
      "-fno-strict-overflow", "-fno-delete-null-pointer-checks",
      "-fno-stack-protector", "-fno-omit-frame-pointer",
      "-foptimize-sibling-calls", "-fasynchronous-unwind-tables",
      "-mcmodel=small", "-m64", "-O2",
      // arch/x86/Makefile's: no FP or vector code, so no such register is
      // live at a rewritten site (the glue's thunks do not save them).
      "-mno-sse", "-mno-mmx", "-mno-sse2", "-mno-3dnow", "-mno-avx",
      "-mno-80387",
      // vdsolab's: position-independent (a shared object), no red zone (a
      // rewritten counter or syscall site pushes a return address), and
      // a call before every load.
      "-fPIC", "-mno-red-zone", "-fsanitize=thread",
      "-Wno-address-of-packed-member", "-fno-diagnostics-color"};
  return *flags;
}

// name += value lines of a Kbuild file (missing file: none).
std::vector<std::string> KbuildList(const std::string& root,
                                    const std::string& rel,
                                    const std::string& var,
                                    std::vector<std::string>* inputs) {
  std::vector<std::string> out;
  absl::StatusOr<std::string> text = ReadFile(JoinPath(root, rel));
  if (!text.ok()) return out;
  inputs->push_back(rel);
  for (std::string_view line : Split(*text, '\n')) {
    line = Trim(line);
    if (!line.starts_with(var)) continue;
    std::string_view rest = Trim(line.substr(var.size()));
    if (rest.starts_with("+=")) {
      rest.remove_prefix(2);
    } else if (rest.starts_with(":=") || rest.starts_with("?=")) {
      rest.remove_prefix(2);
    } else if (rest.starts_with("=")) {
      rest.remove_prefix(1);
    } else {
      continue;
    }
    for (std::string_view w : Split(Trim(rest), ' ')) {
      if (!Trim(w).empty()) out.emplace_back(Trim(w));
    }
  }
  return out;
}

// scripts/Makefile.asm-generic for one asm directory.
absl::Status WriteGenericWrappers(const std::string& root,
                                  const std::string& arch_asm,
                                  const std::string& generic_kbuild,
                                  const std::string& out_dir,
                                  std::vector<std::string>* inputs) {
  if (absl::Status s = MakeDirs(out_dir); !s.ok()) return s;
  const std::string kbuild = arch_asm + "/Kbuild";
  const std::vector<std::string> generated =
      KbuildList(root, kbuild, "generated-y", inputs);
  const std::set<std::string> gen_set(generated.begin(), generated.end());
  std::set<std::string> wrap;
  for (const std::string& f : KbuildList(root, kbuild, "generic-y", inputs)) {
    wrap.insert(f);
  }
  for (const std::string& f :
       KbuildList(root, generic_kbuild, "mandatory-y", inputs)) {
    if (gen_set.count(f) != 0) continue;
    if (Exists(JoinPath(root, JoinPath(arch_asm, f)))) continue;
    wrap.insert(f);
  }
  for (const std::string& f : wrap) {
    if (absl::Status s = WriteFileAtomic(JoinPath(out_dir, f),
                                         "#include <asm-generic/" + f + ">\n");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// scripts/syscallhdr.sh for the 64-bit ABI: "#define __NR_name nr".
absl::Status WriteUnistd64(const std::string& root, const std::string& out,
                           std::vector<std::string>* inputs) {
  const std::string rel = "arch/x86/entry/syscalls/syscall_64.tbl";
  absl::StatusOr<std::string> tbl = ReadFile(JoinPath(root, rel));
  if (!tbl.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the tree has no %s (the system call numbers)", rel));
  }
  inputs->push_back(rel);
  std::string h = "/* vdsolab: from " + rel + " */\n";
  for (std::string_view line : Split(*tbl, '\n')) {
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    for (std::string_view w : Split(line, '\t')) {
      for (std::string_view x : Split(w, ' ')) {
        if (!x.empty()) f.emplace_back(x);
      }
    }
    if (f.size() < 3 || (f[1] != "common" && f[1] != "64")) continue;
    h += "#define __NR_" + f[2] + " " + f[0] + "\n";
  }
  return WriteFileAtomic(out, h);
}

}  // namespace

absl::StatusOr<Shims> WriteShims(const std::string& root,
                                 const std::string& dir) {
  Shims sh;
  sh.dir = dir;
  const std::string gen_include = JoinPath(dir, "include/generated");
  const std::string gen_arch = JoinPath(dir, "arch/asm");
  const std::string gen_uapi = JoinPath(dir, "uapi/asm");
  for (const std::string& d : {gen_include, gen_arch, gen_uapi}) {
    if (absl::Status s = MakeDirs(d); !s.ok()) return s;
  }
  struct File {
    std::string path;
    std::string text;
  };
  for (const File& f : {File{JoinPath(gen_include, "autoconf.h"), kAutoconf},
                        File{JoinPath(gen_include, "bounds.h"), kBounds},
                        File{JoinPath(gen_include, "timeconst.h"), ""},
                        File{JoinPath(gen_arch, "unistd_64_x32.h"), ""},
                        File{JoinPath(gen_arch, "unistd_32_ia32.h"), ""}}) {
    if (absl::Status s = WriteFileAtomic(f.path, f.text); !s.ok()) return s;
  }
  if (absl::Status s = WriteGenericWrappers(root, "arch/x86/include/asm",
                                            "include/asm-generic/Kbuild",
                                            gen_arch, &sh.inputs);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteGenericWrappers(root, "arch/x86/include/uapi/asm",
                                            "include/uapi/asm-generic/Kbuild",
                                            gen_uapi, &sh.inputs);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          WriteUnistd64(root, JoinPath(gen_uapi, "unistd_64.h"), &sh.inputs);
      !s.ok()) {
    return s;
  }
  return sh;
}

std::string ShimsFingerprint() {
  std::string f = std::string(kAutoconf) + kBounds;
  for (const std::string& flag : CommonFlags()) f += flag + "\n";
  return f;
}

absl::StatusOr<Compiler> DetectCompiler(const std::string& cc) {
  Compiler c;
  c.cc = cc.empty() ? "gcc" : cc;
  // Named as the user chose it: the flag, or the default.
  const std::string named =
      cc.empty() ? "gcc (the default; --kernel-cc chooses another)"
                 : "--kernel-cc=" + cc;
  absl::StatusOr<RunOutput> v = RunProgram({c.cc, "--version"});
  if (!v.ok() || v->exit_code != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: cannot run it (%s)", named,
                        v.ok() ? "exit " + std::to_string(v->exit_code)
                               : std::string(v.status().message())));
  }
  c.version_text = v->output;
  c.first_line = std::string(Trim(v->output.substr(0, v->output.find('\n'))));
  c.clang = Contains(v->output, "clang");
  if (!c.clang && !Contains(v->output, "Free Software Foundation")) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: neither gcc nor clang (%s)", named, c.first_line));
  }
  absl::StatusOr<RunOutput> inc =
      RunProgram({c.cc, "-print-file-name=include"});
  if (!inc.ok() || inc->exit_code != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: no compiler include directory", named));
  }
  c.resource_include = std::string(Trim(inc->output));
  return c;
}

std::vector<std::string> KernelCflags(const Compiler& cc,
                                      const std::string& src_root,
                                      const std::string& shims_dir,
                                      const KernelVersion& version) {
  std::vector<std::string> f = CommonFlags();
  if (cc.clang) {
    f.insert(f.end(), {"-mllvm", "-tsan-instrument-func-entry-exit=0",
                       "-Wno-gnu-variable-sized-type-not-at-end",
                       "-Wno-unknown-warning-option"});
  } else {
    f.insert(f.end(), {"--param", "tsan-instrument-func-entry-exit=0"});
  }
  // Linux 6.2 made char unsigned on every architecture.
  if (version.AtLeast(6, 2)) f.push_back("-funsigned-char");
  f.insert(f.end(), {"-isystem", cc.resource_include});
  // The forced includes of the top Makefile (compiler-version.h since 5.13).
  for (const char* inc :
       {"include/linux/compiler-version.h", "include/linux/kconfig.h",
        "include/linux/compiler_types.h"}) {
    const std::string p = JoinPath(src_root, inc);
    if (Exists(p)) f.insert(f.end(), {"-include", p});
  }
  // The kernel's include order, with vdsolab's generated directories where
  // the kernel's generated ones go, but ahead of the tree's own include/ so
  // a configured tree's include/generated/autoconf.h is not picked up.
  f.insert(f.end(), {"-I" + JoinPath(src_root, "arch/x86/include"),
                     "-I" + JoinPath(shims_dir, "arch"),
                     "-I" + JoinPath(shims_dir, "include"),
                     "-I" + JoinPath(src_root, "include"),
                     "-I" + JoinPath(src_root, "arch/x86/include/uapi"),
                     "-I" + JoinPath(shims_dir, "uapi"),
                     "-I" + JoinPath(src_root, "include/uapi")});
  return f;
}

}  // namespace vdsolab::ktree::internal
