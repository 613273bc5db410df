#include "ktime/ktime.h"

#include <filesystem>
#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/sha256.h"
#include "ktime/internal/embedded.h"
#include "ktree/internal/code_map.h"
#include "ktree/internal/diagnostics.h"
#include "ktree/internal/fs.h"
#include "ktree/internal/patches.h"
#include "ktree/internal/shims.h"
#include "ktree/internal/source.h"
#include "ktree/internal/subprocess.h"
#include "ktree/ktree.h"

namespace vdsolab::ktime {
namespace {

namespace ki = ::vdsolab::ktree::internal;
using ki::JoinPath;

// v5: the meta file holds the code map (functions, reached_functions).
constexpr char kCacheLayout[] = "ktime-v5";

// What a tarball's extraction keeps: the vDSO build's subset (ResolveTree
// checks it is an x86 tree with the generic vDSO) and kernel/time.
const std::vector<std::string>& KtimeSubset() {
  static const auto* s = [] {
    auto* v = new std::vector<std::string>(ki::VdsoSubset());
    v->push_back("kernel/time");
    return v;
  }();
  return *s;
}

// The config of an x86-64 SMP kernel as far as kernel/time and the headers
// it includes look (docs/ktime.md: why each). Debian's amd64 values where
// they change timekeeping code: HZ=250, high-resolution timers, NO_HZ,
// GENERIC_CMOS_UPDATE, RTC_SYSTOHC, PM_SLEEP. Left out on purpose: AUDIT
// (audit_ntp_*() become no-ops), PARAVIRT (native lock and irq code),
// PREEMPT (no preempt counts), DEBUG_TIMEKEEPING, NTP_PPS (Debian: off).
constexpr char kAutoconf[] = R"(/* vdsolab: x86-64 config for kernel/time */
#define CONFIG_X86 1
#define CONFIG_X86_64 1
#define CONFIG_64BIT 1
#define CONFIG_SMP 1
/* vdsolab: KCSAN's barrier instrumentation (include/linux/kcsan-checks.h)
 * without KCSAN: in the one unit built with -fsanitize=thread (vsyscall.c)
 * every smp_wmb() becomes a __tsan_atomic_signal_fence() call, which the
 * glue logs with the next store. */
#define CONFIG_KCSAN_WEAK_MEMORY 1
/* kcsan-checks.h defines its barrier-to-fence orders only with KCSAN on:
 * the same ones, for the instrumentation alone. */
#define __KCSAN_BARRIER_TO_SIGNAL_FENCE_mb __ATOMIC_SEQ_CST
#define __KCSAN_BARRIER_TO_SIGNAL_FENCE_wmb __ATOMIC_ACQ_REL
#define __KCSAN_BARRIER_TO_SIGNAL_FENCE_rmb __ATOMIC_ACQUIRE
#define __KCSAN_BARRIER_TO_SIGNAL_FENCE_release __ATOMIC_RELEASE
#define CONFIG_NR_CPUS 64
#define CONFIG_HZ VDSOLAB_CONFIG_HZ
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
#define CONFIG_ARCH_HAS_CACHE_LINE_SIZE 1
#define CONFIG_GENERIC_IOMAP 1
#define CONFIG_ZONE_DMA 1
#define CONFIG_ZONE_DMA32 1
#define CONFIG_GENERIC_GETTIMEOFDAY 1
#define CONFIG_HAVE_GENERIC_VDSO 1
#define CONFIG_GENERIC_VDSO_TIME_NS 1
#define CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT 1
#define CONFIG_TIME_NS 1
#define CONFIG_PARAVIRT_CLOCK 1
#define CONFIG_GENERIC_TIME_VSYSCALL 1
#define CONFIG_GENERIC_CLOCKEVENTS 1
#define CONFIG_CLOCKSOURCE_VALIDATE_LAST_CYCLE 1
#define CONFIG_GENERIC_CMOS_UPDATE 1
#define CONFIG_RTC_SYSTOHC 1
#define CONFIG_RTC_SYSTOHC_DEVICE "rtc0"
#define CONFIG_RTC_HCTOSYS 1
#define CONFIG_RTC_HCTOSYS_DEVICE "rtc0"
#define CONFIG_PM_SLEEP 1
#define CONFIG_ARCH_CLOCKSOURCE_INIT 1
#define CONFIG_HIGH_RES_TIMERS 1
#define CONFIG_TICK_ONESHOT 1
#define CONFIG_NO_HZ_COMMON 1
#define CONFIG_POSIX_TIMERS 1
#define CONFIG_X86_TSC 1
#define CONFIG_PRINTK 1
#define CONFIG_MMU 1
#define CONFIG_SLUB 1
#define CONFIG_BUG 1
#define CONFIG_GENERIC_BUG 1
#define CONFIG_GENERIC_BUG_RELATIVE_POINTERS 1
#define CONFIG_DEBUG_BUGVERBOSE 1
#define CONFIG_X86_CMPXCHG64 1
#define CONFIG_ARCH_SUPPORTS_INT128 1
#define CONFIG_HAVE_ARCH_WITHIN_STACK_FRAMES 1
#define CONFIG_HAVE_ARCH_THREAD_STRUCT_WHITELIST 1
#define CONFIG_ARCH_HAS_MEM_ENCRYPT 1
#define CONFIG_AMD_MEM_ENCRYPT 1
#define CONFIG_HAVE_MOD_ARCH_SPECIFIC 1
#define CONFIG_ARCH_WANT_BATCHED_UNMAP_TLB_FLUSH 1
#define CONFIG_ARCH_HAS_PTE_SPECIAL 1
#define CONFIG_SPARSEMEM 1
#define CONFIG_SPARSEMEM_EXTREME 1
#define CONFIG_SPARSEMEM_VMEMMAP 1
#define CONFIG_NUMA 1
#define CONFIG_NODES_SHIFT 6
)";

// The kernel's flags that change code (the top Makefile's), for kernel
// code rather than the vDSO: no BUILD_VDSO, no instrumentation.
std::vector<std::string> KernelFlags(const ki::Compiler& cc,
                                     const std::string& src,
                                     const std::string& shims,
                                     const ki::KernelVersion& v) {
  std::vector<std::string> f = {"-D__KERNEL__",
                                "-nostdinc",
                                "-std=gnu11",
                                "-fno-strict-aliasing",
                                "-fno-common",
                                "-fshort-wchar",
                                "-fno-strict-overflow",
                                "-fno-delete-null-pointer-checks",
                                "-fno-stack-protector",
                                "-mcmodel=small",
                                "-m64",
                                "-O2",
                                "-fPIC",
                                "-fno-diagnostics-color",
                                "-Wno-address-of-packed-member",
                                "-DKBUILD_MODNAME=\"time\""};
  if (cc.clang) f.push_back("-Wno-unknown-warning-option");
  if (v.AtLeast(6, 2)) f.push_back("-funsigned-char");
  f.insert(f.end(), {"-isystem", cc.resource_include});
  for (const char* inc :
       {"include/linux/compiler-version.h", "include/linux/kconfig.h",
        "include/linux/compiler_types.h"}) {
    const std::string p = JoinPath(src, inc);
    if (ki::Exists(p)) f.insert(f.end(), {"-include", p});
  }
  f.insert(
      f.end(),
      {"-I" + JoinPath(src, "arch/x86/include"), "-I" + JoinPath(shims, "arch"),
       "-I" + JoinPath(shims, "include"), "-I" + JoinPath(src, "include"),
       "-I" + JoinPath(src, "arch/x86/include/uapi"),
       "-I" + JoinPath(shims, "uapi"), "-I" + JoinPath(src, "include/uapi"),
       "-I" + src});
  return f;
}

std::string Fingerprint() {
  std::string f = std::string(kAutoconf) + kCacheLayout + "\n";
  for (const internal::EmbeddedFile* e = internal::kEmbeddedFiles; e->name;
       ++e) {
    f += e->name;
    f += "\n";
    f += e->text;
  }
  return f;
}

class ScratchDir {
 public:
  explicit ScratchDir(std::string p) : path_(std::move(p)) {}
  ~ScratchDir() { ki::RemoveTree(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

absl::Status Run(const std::vector<std::string>& argv, const std::string& what,
                 const std::vector<ki::PathPrefix>& prefixes,
                 std::string* log) {
  *log += ki::ShellQuote(argv) + "\n";
  absl::StatusOr<ki::RunOutput> r = ki::RunProgram(argv);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    const std::string out = ki::RewritePaths(r->output, prefixes);
    *log += out;
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", what,
                        ki::FirstError(out).empty() ? "failed: " + argv[0]
                                                    : ki::FirstError(out)));
  }
  return absl::OkStatus();
}

// The files the compiler read for the tree's `objects` (their -MD
// dependency files, "X.o.d"), relative to `src` where they are under it,
// and kernel/time/timeconst.bc, which bc reads for timeconst.h. Make's
// escapes are undone (a backslash before a space in a path, "$$" a dollar
// sign), so a cache under a directory with a space in its name still
// matches.
absl::StatusOr<std::set<std::string>> CompiledFiles(
    const std::string& src, const std::vector<std::string>& objects) {
  std::set<std::string> files = {"kernel/time/timeconst.bc"};
  const std::filesystem::path root =
      std::filesystem::path(src).lexically_normal();
  for (const std::string& obj : objects) {
    absl::StatusOr<std::string> d = ki::ReadFile(obj + ".d");
    if (!d.ok()) {
      return absl::InternalError(absl::StrFormat(
          "%s.d: the compiler wrote no dependency list (-MD)", obj));
    }
    // "obj: dep dep \\\n dep ...": the words after the target's colon.
    std::vector<std::string> words;
    std::string word;
    bool after_target = false;
    for (size_t i = 0; i < d->size(); ++i) {
      const char c = (*d)[i];
      if (c == '\\' && i + 1 < d->size() &&
          ((*d)[i + 1] == ' ' || (*d)[i + 1] == '#')) {
        word += (*d)[++i];
      } else if (c == '$' && i + 1 < d->size() && (*d)[i + 1] == '$') {
        word += (*d)[++i];
      } else if (c == '\\' && i + 1 < d->size() && (*d)[i + 1] == '\n') {
        ++i;  // A continuation.
      } else if (c == ' ' || c == '\t' || c == '\n') {
        if (!word.empty()) words.push_back(std::move(word));
        word.clear();
      } else if (c == ':' && !after_target &&
                 (i + 1 == d->size() || (*d)[i + 1] == ' ' ||
                  (*d)[i + 1] == '\n')) {
        after_target = true;
        word.clear();  // The target.
      } else {
        word += c;
      }
    }
    if (!word.empty()) words.push_back(std::move(word));
    for (const std::string& w : words) {
      const std::filesystem::path rel =
          std::filesystem::path(w).lexically_normal().lexically_relative(root);
      if (!rel.empty() && *rel.begin() != "..") files.insert(rel.string());
    }
  }
  return files;
}

// A patch must change what the objects are compiled from: kernel/time is
// mirrored whole (its headers, its Makefile), but only timekeeping.c,
// ntp.c, vsyscall.c, time.c, clocksource.c and what they include are
// built, and a patch that changes none of them (hrtimer.c, a vDSO reader
// header) would be run under its name as the unpatched tree. Such a patch
// is bad input; the files of a patch that changes some of them and others
// besides are returned (space-separated) for a note.
absl::StatusOr<std::string> UncompiledFiles(
    const std::vector<ki::Patch>& patches,
    const std::vector<ki::Applied>& applied, const std::string& src,
    const std::vector<std::string>& objects) {
  if (patches.empty()) return std::string();
  absl::StatusOr<std::set<std::string>> compiled = CompiledFiles(src, objects);
  if (!compiled.ok()) return compiled.status();
  std::vector<std::string> uncompiled;
  for (size_t i = 0; i < patches.size() && i < applied.size(); ++i) {
    std::vector<std::string> outside = applied[i].skipped;
    bool any = false;
    for (const std::string& f : applied[i].touched) {
      if (compiled->contains(f)) {
        any = true;
      } else {
        outside.push_back(f);
      }
    }
    if (!any) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--patch=%s: changes none of the files the kernel/time build "
          "compiles (it changes %s; the build compiles kernel/time's "
          "timekeeping.c, ntp.c, vsyscall.c, time.c and clocksource.c and "
          "the headers they include)",
          patches[i].given, absl::StrJoin(outside, ", ")));
    }
    uncompiled.insert(uncompiled.end(), outside.begin(), outside.end());
  }
  return absl::StrJoin(uncompiled, " ");
}

// `assembly` without the EXPORT_SYMBOL() tables (6.1's __ksymtab sections,
// 6.5+'s .export_symbol, and __ADDRESSABLE()'s .discard.addressable): data
// that names every exported function, which would make each one look
// reached by vdsolab although only modules call them
// (ktime_get_boot_fast_ns()...). Each table is a .section directive and
// what follows until the next section switch.
std::string WithoutExportTables(absl::string_view assembly) {
  std::string out;
  bool in_table = false;
  for (absl::string_view line : absl::StrSplit(assembly, '\n')) {
    const absl::string_view t = absl::StripLeadingAsciiWhitespace(line);
    const bool section =
        absl::StartsWith(t, ".section") ||
        absl::StartsWith(t, ".pushsection") ||
        absl::StartsWith(t, ".popsection") ||
        absl::StartsWith(t, ".previous") || absl::StartsWith(t, ".text") ||
        absl::StartsWith(t, ".data") || absl::StartsWith(t, ".bss");
    if (section) {
      const bool table = absl::StrContains(t, "ksymtab") ||
                         absl::StrContains(t, "export_symbol") ||
                         absl::StrContains(t, ".discard");
      // 6.5+'s table is one line of inline asm (x86's ASM_NL is ';')
      // that ends with its .previous.
      if (table && absl::StrContains(t, ".previous")) continue;
      in_table = table;
    }
    if (in_table) continue;
    out.append(line.data(), line.size());
    out += '\n';
  }
  return out;
}

absl::StatusOr<BuiltKernelTime> Build(const ki::TreeSource& tree,
                                      const std::vector<ki::Patch>& patches,
                                      const ki::Compiler& cc,
                                      const std::string& cache_root,
                                      const std::string& out_dir, int hz,
                                      std::string* log) {
  absl::StatusOr<ki::KernelVersion> version = ki::ReadKernelVersion(tree.root);
  if (!version.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--kernel-tree=%s: %s", tree.given, version.status().message()));
  }
  for (const char* f : {"kernel/time/timekeeping.c", "kernel/time/ntp.c",
                        "kernel/time/vsyscall.c", "kernel/time/timeconst.bc"}) {
    if (!ki::IsRegularFile(JoinPath(tree.root, f))) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--kernel-tree=%s: no %s (a GENERIC_TIME_VSYSCALL tree is needed)",
          tree.given, f));
    }
  }
  absl::StatusOr<std::string> sp =
      ki::MakeTempDir(JoinPath(cache_root, "tmp"), "build-");
  if (!sp.ok()) return sp.status();
  ScratchDir scratch(*sp);
  std::string what = "in Linux " + version->String() + " (" + tree.absolute;
  for (const ki::Patch& p : patches) what += " + " + p.absolute;
  what += ")";

  std::string src = tree.root;
  std::vector<ki::Applied> applied;  // One per patch.
  if (!patches.empty()) {
    src = JoinPath(scratch.path(), "tree");
    for (const std::string& rel : KtimeSubset()) {
      if (!ki::Exists(JoinPath(tree.root, rel))) continue;
      absl::StatusOr<int> c = ki::MirrorTree(tree.root, src, rel);
      if (!c.ok()) return c.status();
    }
    for (const ki::Patch& p : patches) {
      absl::StatusOr<ki::Applied> a =
          ki::ApplyPatch(p, src, scratch.path(), log, KtimeSubset(),
                         "the kernel/time build reads (kernel/time and the "
                         "vDSO headers its vsyscall.c includes)");
      if (!a.ok()) return a.status();
      applied.push_back(std::move(*a));
    }
  }
  // ktree's generated asm-generic wrappers and unistd_64.h; then the
  // kernel-code config and timeconst.h (kernel/time/timeconst.bc, run by
  // bc as Kbuild runs it).
  const std::string shim_dir = JoinPath(scratch.path(), "shims");
  absl::StatusOr<ki::Shims> shims = ki::WriteShims(src, shim_dir);
  if (!shims.ok()) return shims.status();
  const std::string gen = JoinPath(shim_dir, "include/generated");
  if (absl::Status s = ki::WriteFileAtomic(
          JoinPath(gen, "autoconf.h"),
          absl::StrReplaceAll(kAutoconf,
                              {{"VDSOLAB_CONFIG_HZ", absl::StrCat(hz)}}));
      !s.ok()) {
    return s;
  }
  {
    const std::vector<std::string> argv = {
        "sh", "-c", absl::StrFormat("echo %d | bc -q \"$0\" > \"$1\"", hz),
        JoinPath(src, "kernel/time/timeconst.bc"),
        JoinPath(gen, "timeconst.h")};
    if (absl::Status s =
            Run(argv, what + ": timeconst.h (is bc installed?)", {}, log);
        !s.ok()) {
      return s;
    }
  }
  const std::string glue = JoinPath(scratch.path(), "glue");
  if (absl::Status s = ki::MakeDirs(glue); !s.ok()) return s;
  for (const internal::EmbeddedFile* e = internal::kEmbeddedFiles; e->name;
       ++e) {
    if (absl::Status s = ki::WriteFileAtomic(JoinPath(glue, e->name), e->text);
        !s.ok()) {
      return s;
    }
  }
  const std::vector<ki::PathPrefix> prefixes = {
      {src, ""},
      {tree.root, ""},
      {shim_dir, "<vdsolab-generated>"},
      {glue, "<vdsolab-glue>"},
      {scratch.path(), "<vdsolab>"}};
  std::vector<std::string> flags = KernelFlags(cc, src, shim_dir, *version);
  flags.push_back("-I" + glue);
  // __FILE__ (WARN()'s bug table) names files as the tree does, not by
  // where this build put them: a patched build's code then compiles alike
  // wherever its copy of the tree is (the code map below).
  for (const auto& [dir, as] :
       {std::pair{src, std::string()}, std::pair{glue, std::string("glue/")},
        std::pair{shim_dir, std::string("shims/")}}) {
    flags.push_back("-fmacro-prefix-map=" + dir + "/=" + as);
  }
  std::vector<std::string> objects;
  std::string assembly;  // Every unit's, for the code map.
  for (const char* unit :
       {"timekeeping", "ntp", "vsyscall", "time", "clocksource"}) {
    const std::string obj = JoinPath(scratch.path(), std::string(unit) + ".o");
    std::vector<std::string> argv = {cc.cc};
    argv.insert(argv.end(), flags.begin(), flags.end());
    if (std::string_view(unit) == "vsyscall") {
      // Its stores into _vdso_data are logged one by one through the
      // TSan hooks of glue_vsyscall.c (the simulation replays them).
      argv.push_back("-fsanitize=thread");
      if (cc.clang) {
        argv.insert(argv.end(),
                    {"-mllvm", "-tsan-instrument-func-entry-exit=0"});
      } else {
        argv.insert(argv.end(),
                    {"--param", "tsan-instrument-func-entry-exit=0"});
      }
    }
    argv.push_back(absl::StrFormat("-DKBUILD_BASENAME=\"%s\"", unit));
    const std::string source =
        JoinPath(glue, absl::StrFormat("glue_%s.c", unit));
    // The assembly too (the same flags): which functions a patch changes.
    {
      std::vector<std::string> s_argv = argv;
      const std::string s_file = obj + ".s";
      s_argv.insert(s_argv.end(), {"-S", source, "-o", s_file});
      if (absl::Status st = Run(s_argv, "compile error " + what, prefixes, log);
          !st.ok()) {
        return st;
      }
      absl::StatusOr<std::string> text = ki::ReadFile(s_file);
      if (!text.ok()) return text.status();
      assembly += WithoutExportTables(*text);
    }
    // The files it read (-MD): what a patch must change to be tested.
    argv.insert(argv.end(),
                {"-MD", "-MF", obj + ".d", "-c", source, "-o", obj});
    if (absl::Status s = Run(argv, "compile error " + what, prefixes, log);
        !s.ok()) {
      return s;
    }
    // EXPORT_SYMBOL()'s tables hold absolute addresses in read-only
    // sections: nothing here reads them, and they would need text
    // relocations in a shared object.
    if (absl::Status s = Run({"objcopy", "--wildcard", "-R", ".export_symbol",
                              "-R", "___ksymtab*", "-R", "__ksymtab*", obj},
                             what + ": objcopy", prefixes, log);
        !s.ok()) {
      return s;
    }
    objects.push_back(obj);
  }
  // Before shims.o joins them: the tree's objects, each with its -MD list.
  absl::StatusOr<std::string> uncompiled =
      UncompiledFiles(patches, applied, src, objects);
  if (!uncompiled.ok()) return uncompiled.status();
  const std::string shims_obj = JoinPath(scratch.path(), "shims.o");
  if (absl::Status s = Run({cc.cc, "-O2", "-fPIC", "-std=gnu11", "-c",
                            JoinPath(glue, "shims.c"), "-o", shims_obj},
                           what + ": shims.c", prefixes, log);
      !s.ok()) {
    return s;
  }
  objects.push_back(shims_obj);
  const std::string ver = JoinPath(scratch.path(), "exports.ver");
  if (absl::Status s = ki::WriteFileAtomic(
          ver, "{ global: vdsolab_ktime_api; local: *; };\n");
      !s.ok()) {
    return s;
  }
  const std::string so = JoinPath(scratch.path(), "ktime.so");
  std::vector<std::string> link = {cc.cc, "-shared", "-o", so};
  link.insert(link.end(), objects.begin(), objects.end());
  link.insert(link.end(), {"-Wl,--version-script=" + ver, "-Wl,-z,now",
                           "-Wl,-Bsymbolic", "-Wl,-z,defs", "-Wl,-z,text"});
  if (absl::Status s = Run(link, "link error " + what, prefixes, log);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ki::MakeDirs(out_dir); !s.ok()) return s;
  if (absl::Status s = ki::CopyFileAtomic(so, JoinPath(out_dir, "ktime.so"));
      !s.ok()) {
    return s;
  }
  BuiltKernelTime b;
  b.so_path = JoinPath(out_dir, "ktime.so");
  b.version = version->String();
  b.name = "ktime-" + b.version;
  for (const ki::Patch& p : patches) b.name += "+" + p.name;
  b.uncompiled_files = *uncompiled;
  std::vector<std::string> fuzzy;
  for (size_t i = 0; i < patches.size() && i < applied.size(); ++i) {
    for (const std::string& h : applied[i].fuzzy) {
      fuzzy.push_back(patches[i].given + ": " + h);
    }
  }
  b.fuzzy_hunks = absl::StrJoin(fuzzy, "; ");
  // vdsolab calls the tree only through the glue's API table.
  const ki::CodeMap map = ki::MapCode(assembly, "vdsolab_ktime_api");
  b.functions = ki::FormatFunctions(map);
  b.reached_functions = ki::FormatReached(map);
  if (absl::Status s = ki::WriteFileAtomic(
          JoinPath(out_dir, "meta"), b.version + "\n" + b.name + "\n" +
                                         b.uncompiled_files + "\n" +
                                         b.fuzzy_hunks + "\n" + b.functions +
                                         "\n" + b.reached_functions + "\n");
      !s.ok()) {
    return s;
  }
  return b;
}

}  // namespace

std::optional<ktree::PatchReach> ComparePatchedCode(
    const BuiltKernelTime& base, const BuiltKernelTime& patched) {
  if (base.functions.empty() || patched.functions.empty()) return std::nullopt;
  return ktree::ComparePatchedCode(base.functions, base.reached_functions,
                                   patched.functions,
                                   patched.reached_functions);
}

absl::StatusOr<BuiltKernelTime> BuildKernelTime(const BuildOptions& options) {
  if (options.hz < 1 || options.hz > 100000) {
    return absl::InvalidArgumentError(
        absl::StrFormat("CONFIG_HZ=%d: out of range", options.hz));
  }
  std::string log;
  std::string cache = options.cache_dir;
  if (cache.empty()) {
    absl::StatusOr<std::string> d = ktree::DefaultCacheDir();
    if (!d.ok()) return d.status();
    cache = *d;
  }
  const std::string cache_root = JoinPath(ki::Absolute(cache), kCacheLayout);
  if (absl::Status s = ki::MakeDirs(cache_root); !s.ok()) return s;
  absl::StatusOr<ki::Compiler> cc = ki::DetectCompiler(options.cc);
  if (!cc.ok()) return cc.status();
  std::vector<ki::Patch> patches;
  for (const std::string& p : options.patches) {
    absl::StatusOr<ki::Patch> patch = ki::ReadPatch(p);
    if (!patch.ok()) return patch.status();
    patches.push_back(std::move(*patch));
  }
  absl::StatusOr<ki::TreeSource> tree =
      ki::ResolveTree(options.tree, cache_root, KtimeSubset());
  if (!tree.ok()) return tree.status();
  log += tree->log;
  std::string key = Fingerprint() + "\ncc " + cc->cc + "\n" + cc->version_text;
  key += "\ntree " + tree->identity + "\n";
  for (const ki::Patch& p : patches) key += "patch " + p.sha256 + "\n";
  if (options.hz != 250) key += absl::StrCat("hz ", options.hz, "\n");
  const std::string hash = Sha256::Of(key);
  const std::string dir = JoinPath(JoinPath(cache_root, "results"), hash);
  // Only a tarball's content is known from its identity; a directory's
  // files may have changed, so it is rebuilt (into a fresh directory).
  if (tree->tarball && ki::IsRegularFile(JoinPath(dir, "ktime.so"))) {
    absl::StatusOr<std::string> meta = ki::ReadFile(JoinPath(dir, "meta"));
    if (meta.ok()) {
      BuiltKernelTime b;
      b.so_path = JoinPath(dir, "ktime.so");
      b.version = meta->substr(0, meta->find('\n'));
      const std::vector<std::string> lines = absl::StrSplit(*meta, '\n');
      b.name = lines.size() > 1 ? lines[1] : "";
      b.uncompiled_files = lines.size() > 2 ? lines[2] : "";
      b.fuzzy_hunks = lines.size() > 3 ? lines[3] : "";
      b.functions = lines.size() > 4 ? lines[4] : "";
      b.reached_functions = lines.size() > 5 ? lines[5] : "";
      b.from_cache = true;
      b.build_log = log + "cache hit: " + dir + "\n";
      return b;
    }
  }
  std::string out = dir;
  if (!tree->tarball) {
    absl::StatusOr<std::string> t =
        ki::MakeTempDir(JoinPath(cache_root, "results"), "dir-");
    if (!t.ok()) return t.status();
    out = *t;
  } else {
    absl::StatusOr<std::string> t =
        ki::MakeTempDir(JoinPath(cache_root, "results"), ".new-");
    if (!t.ok()) return t.status();
    out = *t;
  }
  absl::StatusOr<BuiltKernelTime> b =
      Build(*tree, patches, *cc, cache_root, out, options.hz, &log);
  if (!b.ok()) {
    ki::RemoveTree(out);
    return b.status();
  }
  if (tree->tarball) {
    // Complete entries only: a concurrent build of the same key may win.
    absl::StatusOr<bool> placed = ki::RenameIntoPlace(out, dir);
    if (!placed.ok()) return placed.status();
    b->so_path = JoinPath(dir, "ktime.so");
  }
  b->build_log = log;
  return b;
}

}  // namespace vdsolab::ktime
