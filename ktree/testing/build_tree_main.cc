// A developer's driver for the ktree library until the CLI has
// --kernel-tree (testonly): builds a tree variant, prints what it is and
// the build log, and with --load loads it and calls MONOTONIC once through
// the native path.
//
//   bazel run //ktree:build_tree -- TREE [PATCH...] [--cc=clang-14]
//       [--cache=DIR] [--log] [-o FILE.so]

#include <cstdio>
#include <string>
#include <vector>

#include "ktree/ktree.h"

int main(int argc, char** argv) {
  vdsolab::ktree::BuildOptions o;
  bool log = false;
  std::string out;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--cc=", 0) == 0) {
      o.cc = a.substr(5);
    } else if (a.rfind("--cache=", 0) == 0) {
      o.cache_dir = a.substr(8);
    } else if (a == "--log") {
      log = true;
    } else if (a == "-o" && i + 1 < argc) {
      out = argv[++i];
    } else {
      pos.push_back(a);
    }
  }
  if (pos.empty()) {
    std::fprintf(stderr, "usage: build_tree TREE [PATCH...]\n");
    return 2;
  }
  o.tree = pos[0];
  o.patches.assign(pos.begin() + 1, pos.end());
  if (!out.empty()) {
    absl::StatusOr<std::string> w = vdsolab::ktree::WriteTreeVariant(o, out);
    if (!w.ok()) {
      std::fprintf(stderr, "%s\n", std::string(w.status().message()).c_str());
      return 2;
    }
    std::printf("wrote %s\n", w->c_str());
    return 0;
  }
  absl::StatusOr<vdsolab::ktree::BuiltVariant> b =
      vdsolab::ktree::BuildTreeVariant(o);
  if (!b.ok()) {
    std::fprintf(stderr, "%s\n", std::string(b.status().message()).c_str());
    if (log) {
      std::fprintf(stderr, "%s",
                   vdsolab::ktree::BuildLogOf(b.status()).c_str());
    }
    return 2;
  }
  std::printf(
      "name %s\nversion %s\nlayout %s (%s)\nsemantics %s\nprovenance %s\n"
      "origin %s\nsites: %d ordered, %d plain, %d rdtscp, %d syscall\n"
      "so %s\nfrom_cache %d\n",
      b->name.c_str(), b->version.c_str(), b->layout.c_str(),
      b->data_layout.c_str(), b->semantics.c_str(), b->provenance.c_str(),
      b->origin.c_str(), b->ordered_reads, b->plain_reads, b->rdtscp_reads,
      b->syscalls, b->so_path.c_str(), b->from_cache ? 1 : 0);
  if (log) std::printf("--- build log ---\n%s", b->build_log.c_str());
  return 0;
}
