// File: ktree/internal/fs.h
//
// The file system operations ktree's build and cache need, with errors that
// name the path. Writes that other processes may read concurrently (cache
// entries) go to a temporary name in the same directory and are renamed
// into place, so a reader sees the old content or the new, never a part.

#ifndef VDSOLAB_KTREE_INTERNAL_FS_H_
#define VDSOLAB_KTREE_INTERNAL_FS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace vdsolab::ktree::internal {

bool Exists(const std::string& path);
bool IsDirectory(const std::string& path);
bool IsRegularFile(const std::string& path);

absl::StatusOr<std::string> ReadFile(const std::string& path);
// Writes `content` to `path` through a temporary file and rename().
absl::Status WriteFileAtomic(const std::string& path,
                             const std::string& content);
// Copies a file (through a temporary and rename()), keeping it executable
// if it was.
absl::Status CopyFileAtomic(const std::string& from, const std::string& to);

// mkdir -p.
absl::Status MakeDirs(const std::string& path);
// A new empty directory under `parent` (created if missing).
absl::StatusOr<std::string> MakeTempDir(const std::string& parent,
                                        const std::string& prefix);
// rm -rf; missing is fine.
void RemoveTree(const std::string& path);

// The canonical absolute path of an existing file or directory.
absl::StatusOr<std::string> RealPath(const std::string& path);
// `path` made absolute against the current directory, lexically (no
// symlinks resolved).
std::string Absolute(const std::string& path);
// Collapses "a/b/../c" into "a/c" and drops "." components, lexically.
std::string NormalizePath(const std::string& path);
std::string Basename(const std::string& path);
std::string JoinPath(const std::string& a, const std::string& b);

// Mirrors the files under `from_root`/`rel` at `to_root`/`rel`: hard links
// where the two are on one file system, copies otherwise (symlinks are
// recreated). GNU patch replaces a file it changes instead of writing
// through the link, so the source stays untouched. Returns how many files
// were copied rather than linked.
absl::StatusOr<int> MirrorTree(const std::string& from_root,
                               const std::string& to_root,
                               const std::string& rel);

// Every entry name directly in `dir` (no "." or "..").
absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir);

// Renames `from` to `to` if `to` does not exist yet. false (and `from`
// removed) when another process put `to` there first.
absl::StatusOr<bool> RenameIntoPlace(const std::string& from,
                                     const std::string& to);

}  // namespace vdsolab::ktree::internal

#endif  // VDSOLAB_KTREE_INTERNAL_FS_H_
