// File: ktree/internal/diagnostics.h
//
// Compiler diagnostics in the tree's own terms: the build compiles from a
// scratch copy (patched trees) or the cache (tarballs), so the compiler
// names files by those paths. They are rewritten back to tree-relative
// paths ("lib/vdso/gettimeofday.c:123:9: error: ..."), the paths ktree
// generated to "<vdsolab>/...".

#ifndef VDSOLAB_KTREE_INTERNAL_DIAGNOSTICS_H_
#define VDSOLAB_KTREE_INTERNAL_DIAGNOSTICS_H_

#include <string>
#include <string_view>
#include <vector>

namespace vdsolab::ktree::internal {

struct PathPrefix {
  std::string from;  // An absolute directory.
  std::string to;    // "" (tree-relative) or a label such as "<vdsolab>".
};

// Every path under one of the prefixes, rewritten and normalised ("a/b/../c"
// -> "a/c"). Longer prefixes win.
std::string RewritePaths(std::string_view text,
                         std::vector<PathPrefix> prefixes);

// The first "file:line[:col]: error: ..." or "fatal error" line; "" if
// there is none.
std::string FirstError(std::string_view text);

// The dependencies of a `-MD` file (make syntax), in order.
std::vector<std::string> ParseDepFile(std::string_view text);

}  // namespace vdsolab::ktree::internal

#endif  // VDSOLAB_KTREE_INTERNAL_DIAGNOSTICS_H_
