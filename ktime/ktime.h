// File: ktime/ktime.h
//
// A kernel tree's own kernel/time/timekeeping.c, ntp.c, vsyscall.c,
// clocksource.c and time.c, unmodified (patched with --patch if asked),
// compiled into a user-space shared object that speaks the C ABI of
// ktime/internal/ktime_abi.h, against vdsolab's shims (docs/ktime.md):
//
//   vdsolab conform-model --kernel-tree=/usr/src/linux-source-6.12.tar.xz
//
// The tree comes from a directory or a tarball as for ktree (the same
// extraction and patch code, ktree/internal); a tarball's build is cached
// under <cache>/ktime-v1 by the tarball's hash, the patches' hashes, the
// compiler and the shims (a directory tree is rebuilt every time).

#ifndef VDSOLAB_KTIME_KTIME_H_
#define VDSOLAB_KTIME_KTIME_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ktree/ktree.h"

namespace vdsolab::ktime {

struct BuildOptions {
  std::string tree;                  // A directory or a source tarball.
  std::vector<std::string> patches;  // Unified diffs, patch -p1, in order.
  std::string cache_dir;             // "" = ktree::DefaultCacheDir().
  std::string cc = "gcc";
  int hz = 250;  // CONFIG_HZ (the kernel's choices are 100, 250, 300, 1000).
};

struct BuiltKernelTime {
  std::string so_path;
  std::string version;  // "6.12.117"
  std::string name;     // "ktime-6.12.117", "+patch" per patch.
  bool from_cache = false;
  std::string build_log;
  // Files the patches change that the build does not compile (it compiles
  // some others they change), space-separated: for a note.
  std::string uncompiled_files;
  // Hunks the patches applied with fuzz ("PATCH: hunk #N of FILE at line
  // L, fuzz F", "; "-separated): for a note.
  std::string fuzzy_hunks;
  // The code map of the compiled tree (ktree/internal/code_map.h: each
  // function's fingerprint, and those the glue's API reaches), as the
  // cache's meta holds it: a patched build's map against the unpatched
  // tree's says what the patch changed and whether vdsolab runs it.
  std::string functions;
  std::string reached_functions;
};

// Builds (or finds in the cache) the tree's timekeeping object. Errors a
// user can act on are InvalidArgument with one line naming the file.
absl::StatusOr<BuiltKernelTime> BuildKernelTime(const BuildOptions& options);

// The functions a patched build's code differs from the unpatched tree's
// in, split by whether the glue's API reaches them: both empty when it
// compiles to the same code. nullopt when either build has no code map.
std::optional<ktree::PatchReach> ComparePatchedCode(
    const BuiltKernelTime& base, const BuiltKernelTime& patched);

}  // namespace vdsolab::ktime

#endif  // VDSOLAB_KTIME_KTIME_H_
