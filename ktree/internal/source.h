// File: ktree/internal/source.h
//
// Where a kernel tree's files come from: a directory, read in place, or a
// source tarball (Debian's linux-source-*.tar.xz, kernel.org's
// linux-*.tar.xz), of which only the parts the vDSO build reads are
// extracted, once, into the cache under the tarball's SHA-256.

#ifndef VDSOLAB_KTREE_INTERNAL_SOURCE_H_
#define VDSOLAB_KTREE_INTERNAL_SOURCE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace vdsolab::ktree::internal {

// The tree-relative paths the vDSO build reads: the top Makefile (the
// version), the generic vDSO, the headers, the x86 vDSO directory (the
// wrapper compiles its vclock_gettime.c) and the syscall table (the
// generated unistd_64.h).
const std::vector<std::string>& VdsoSubset();
// Whether a tree-relative path is inside VdsoSubset() (or `subset`).
bool InVdsoSubset(const std::string& rel);
bool InSubset(const std::vector<std::string>& subset, const std::string& rel);

struct TreeSource {
  std::string given;     // As the user named it (for messages).
  std::string absolute;  // Made absolute (for provenance and the key).
  std::string root;      // The directory with Makefile, lib/, include/, ...
  bool tarball = false;
  // What the cache keys on: "tarball sha256:<hex>" (the content) or
  // "directory <realpath>" (whose files are hashed one by one).
  std::string identity;
  std::string log;         // What was run (for --verbose).
  bool extracted = false;  // This call extracted the tarball.
};

// An InvalidArgument error names the tree and what is wrong with it.
// `subset` is what a tarball's extraction keeps (ktime/ extracts
// kernel/time too, into its own cache).
absl::StatusOr<TreeSource> ResolveTree(
    const std::string& tree, const std::string& cache_root,
    const std::vector<std::string>& subset = VdsoSubset());

struct KernelVersion {
  int version = 0;
  int patchlevel = 0;
  int sublevel = 0;
  std::string extra;  // EXTRAVERSION, e.g. "-rc1"; usually empty.

  std::string String() const;  // "6.12.117"
  // At least major.minor.
  bool AtLeast(int major, int minor) const {
    return version != major ? version > major : patchlevel >= minor;
  }
};

// VERSION / PATCHLEVEL / SUBLEVEL / EXTRAVERSION of the top Makefile.
absl::StatusOr<KernelVersion> ReadKernelVersion(const std::string& root);

}  // namespace vdsolab::ktree::internal

#endif  // VDSOLAB_KTREE_INTERNAL_SOURCE_H_
