// File: ktree/ktree.h
//
// A kernel tree's own vDSO code as a vdsolab variant (docs/kernel-trees.md).
// Point it at a kernel source tree (a directory, or a linux-source-*.tar.xz)
// and optional unified-diff patches; it compiles the tree's unmodified
// lib/vdso/gettimeofday.c, include/vdso/* and
// arch/x86/include/asm/vdso/gettimeofday.h (through the tree's own
// arch/x86/entry/vdso/vclock_gettime.c) into a plugin shared object
// speaking plugin ABI version 2, which vdsolab then runs like any plugin:
//
//   vdsolab run SCENARIO --kernel-tree=/usr/src/linux-source-6.12.tar.xz
//       --patch=fix.diff
//   vdsolab build-variant --kernel-tree=... --patch=... -o FILE.so
//
// Page loads reach the simulation through compiler instrumentation, counter
// reads and the syscall through rewritten instructions (no signals); the
// page layout is derived from the tree's headers and matched against the
// built-in layouts; builds are cached by the content of what they read.
//
// Errors a user can act on (an unknown tree, a patch that does not apply,
// a compile error in the patched tree, a layout vdsolab does not know) are
// InvalidArgument, with one line naming the file (tree-relative for compile
// errors: "lib/vdso/gettimeofday.c:123:9: error: ..."); the full build log
// is attached as a payload (BuildLogOf).

#ifndef VDSOLAB_KTREE_KTREE_H_
#define VDSOLAB_KTREE_KTREE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace vdsolab::ktree {

struct BuildOptions {
  // A kernel source directory, or a source tarball (.tar.xz, .tar.gz, ...).
  std::string tree;
  // Unified diffs, applied with patch -p1 in this order.
  std::vector<std::string> patches;
  // "" = DefaultCacheDir().
  std::string cache_dir;
  // gcc or clang (e.g. "clang-14"), or a path to one.
  std::string cc = "gcc";
};

struct BuiltVariant {
  std::string so_path;  // The version-2 plugin, inside the cache.
  // "tree-6.12.117", "tree-6.12.117+fix" (patch basenames), with
  // "@clang-14" for a compiler other than gcc.
  std::string name;
  std::string version;  // "6.12.117"
  std::string layout;   // The built-in variant it reads like: "6.10".
  // Where the data is and which struct it is:
  // "struct vdso_data with max_cycles (6.10-6.14) (248 bytes) at vvar+128".
  std::string data_layout;
  // The semantics it declares (plugin ABI values): counter semantics
  // (VDSOLAB_COUNTER_*), flags (VDSOLAB_SEM_*), and in words.
  uint32_t counter_semantics = 0;
  uint32_t semantics_flags = 0;
  std::string semantics;  // "masked63, overflow-protected"
  std::string era;        // "Linux 6.12.117"
  std::string provenance;
  // The tree (path and content hash), each patch (path and hash), the
  // compiler: enough to say what a replay ran.
  std::string origin;
  std::string compiler;  // `cc --version`'s first line.
  // Counter and syscall sites the build rewrote, by what they became.
  int ordered_reads = 0;
  int plain_reads = 0;
  int rdtscp_reads = 0;
  int syscalls = 0;
  // SHA-256 of the tree's compiled vDSO code (the compiler's assembly,
  // comments and .file/.ident lines left out): equal for a patched and an
  // unpatched build when the patch changes nothing x86 compiles ("" from a
  // cache entry older than the field).
  std::string code_sha256;
  // Each function of that code with its own fingerprint, and those
  // vdsolab's entry point reaches (ktree/internal/code_map.h; "" from a
  // cache entry older than the fields).
  std::string functions;
  std::string reached_functions;
  // Files the patches change outside the vDSO build (kernel/time/...),
  // space-separated: their hunks were not applied.
  std::string skipped_files;
  // Files the patches change inside the copied subset that the compile
  // never read (arch/x86/entry/vdso/vma.c), space-separated: untested.
  std::string uncompiled_files;
  // Hunks the patches applied with fuzz, "PATCH: hunk #N of FILE at line
  // L, fuzz F", "; "-separated: for a note.
  std::string fuzzy_hunks;
  bool from_cache = false;  // Nothing was rebuilt.
  std::string build_log;    // What was run (for --verbose).
};

// The functions a patched build's code differs from the unpatched
// tree's in, split by whether vdsolab's entry point reaches them in either
// build (code outside functions counts as reached). Both empty when the
// builds cannot be compared (an old cache entry).
struct PatchReach {
  std::vector<std::string> reached;
  std::vector<std::string> unreached;
};
PatchReach ComparePatchedCode(const BuiltVariant& base,
                              const BuiltVariant& patched);
// The same over two code maps as a cache's meta keeps them (the
// functions' and the reached lines): ktime's builds keep theirs so too.
PatchReach ComparePatchedCode(std::string_view base_functions,
                              std::string_view base_reached,
                              std::string_view patched_functions,
                              std::string_view patched_reached);

// Builds (or finds in the cache) the variant of `options`.
absl::StatusOr<BuiltVariant> BuildTreeVariant(const BuildOptions& options);

// Builds it and copies the plugin to `out_so` (`build-variant -o`);
// returns the path written.
absl::StatusOr<std::string> WriteTreeVariant(const BuildOptions& options,
                                             const std::string& out_so);

// $VDSOLAB_CACHE_DIR, else $XDG_CACHE_HOME/vdsolab, else
// ~/.cache/vdsolab.
absl::StatusOr<std::string> DefaultCacheDir();

// The build log attached to an error of BuildTreeVariant ("" if none).
std::string BuildLogOf(const absl::Status& status);

}  // namespace vdsolab::ktree

#endif  // VDSOLAB_KTREE_KTREE_H_
