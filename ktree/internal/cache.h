// File: ktree/internal/cache.h
//
// The build cache, in ccache's "direct mode": a build is looked up by a key
// of everything known before compiling (tool versions, the compiler, the
// tree's identity, the patches' content), under which manifests list the
// files the build actually read (the compiler's -MD list, the Kbuild files
// and syscall table the shims come from, the Makefile, the patched files)
// with their SHA-256. A manifest whose files all still hash the same names
// the built result; otherwise the build runs and adds a manifest.
//
//   <cache>/ktree-v1/trees/<tarball sha256>/   extracted vDSO subsets
//   <cache>/ktree-v1/keys/<key>/<result>.manifest
//   <cache>/ktree-v1/results/<result>/         plugin.so, meta, build.log
//   <cache>/ktree-v1/tmp/                      scratch, removed after use
//
// Entries are written under temporary names and renamed into place, so
// concurrent builds into one cache never see a partial entry.

#ifndef VDSOLAB_KTREE_INTERNAL_CACHE_H_
#define VDSOLAB_KTREE_INTERNAL_CACHE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace vdsolab::ktree::internal {

struct Dependency {
  // Tree-relative ("include/vdso/datapage.h"), or "sys:/abs/path" for the
  // compiler's own headers.
  std::string path;
  std::string sha256;  // Or "absent".
};

struct Manifest {
  std::string result;  // The results/ entry.
  std::vector<Dependency> files;
};

std::string FormatManifest(const Manifest& m);
absl::StatusOr<Manifest> ParseManifest(const std::string& text);

// The hash of a dependency as it is now, files read from `root`.
std::string HashDependency(const std::string& root, const std::string& path);

// The result of the first manifest under `key_dir` whose files all hash as
// recorded; nullopt if none does. `checked` counts the files hashed.
std::optional<std::string> FindValidManifest(const std::string& key_dir,
                                             const std::string& root,
                                             int* checked);

absl::Status StoreManifest(const std::string& key_dir, const Manifest& m);

// A result's metadata: "key value" lines (values without newlines).
std::string FormatMeta(const std::map<std::string, std::string>& meta);
std::map<std::string, std::string> ParseMeta(const std::string& text);

}  // namespace vdsolab::ktree::internal

#endif  // VDSOLAB_KTREE_INTERNAL_CACHE_H_
