// File: ktree/internal/patches.h
//
// Unified diffs applied to a kernel tree with GNU patch -p1, in order, on a
// private copy of the vDSO subset of the tree (hard links; patch replaces
// the files it changes, so the tree and the cache stay untouched).
//
// Files a patch touches outside the vDSO build (kernel/time/*.c, docs) are
// left out of what is applied, and the build log says so: vdsolab's writer
// is its model of the era's kernel/time code, not the tree's.

#ifndef VDSOLAB_KTREE_INTERNAL_PATCHES_H_
#define VDSOLAB_KTREE_INTERNAL_PATCHES_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ktree/internal/source.h"

namespace vdsolab::ktree::internal {

// One file's part of a unified diff.
struct FileDiff {
  std::string target;    // Tree-relative (after -p1).
  bool creates = false;  // --- /dev/null
  int hunks = 0;
  std::string text;  // Headers and hunks, as in the diff.
};

// The file sections of a unified diff (git's or diff -u's). An error says
// what is malformed and at which line.
absl::StatusOr<std::vector<FileDiff>> ParseUnifiedDiff(std::string_view diff);

struct Patch {
  std::string given;     // As the user named it (for messages).
  std::string absolute;  // Made absolute (for provenance and the key).
  std::string name;      // Its basename without .diff/.patch.
  std::string sha256;
  std::string text;
  std::vector<FileDiff> files;
};

// Reads and parses a patch file; errors are InvalidArgument and name it.
absl::StatusOr<Patch> ReadPatch(const std::string& path);

struct Applied {
  std::vector<std::string> touched;  // Tree-relative files it changes.
  std::vector<std::string> skipped;  // Outside the vDSO build.
  // Hunks patch placed by dropping context lines ("hunk #2 of
  // lib/vdso/gettimeofday.c at line 150, fuzz 1"): they may have landed
  // somewhere other than the author meant, so the user is told.
  std::vector<std::string> fuzzy;
};

// Applies `patch` to the copy of the tree at `view` (made by MirrorTree of
// the vDSO subset). A hunk that does not apply is an InvalidArgument error
// naming the patch, the hunk and the file.
// A hunk applied with fuzz is applied, and listed in `fuzzy`.
// `subset` (default: the vDSO build's) is what the build compiles;
// `build` names it in the error of a patch that changes none of it
// (default: "the vDSO build compiles (...)").
absl::StatusOr<Applied> ApplyPatch(
    const Patch& patch, const std::string& view, const std::string& scratch,
    std::string* log, const std::vector<std::string>& subset = VdsoSubset(),
    const char* build = nullptr);

}  // namespace vdsolab::ktree::internal

#endif  // VDSOLAB_KTREE_INTERNAL_PATCHES_H_
