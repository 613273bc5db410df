// Writes one of the test patches (ktree/testing/defect_patches.h) for a
// kernel tree, made from the tree's own files at test time, and prints its
// path: for shell tests of `vdsolab ... --kernel-tree --patch` (testonly).
//
//   make_patch TREE KIND DIR
//
// TREE is a source directory or a tarball (extracted into the test's
// cache); KIND is a defect name (no-seq-retry, no-negative-motion-clamp,
// base-before-seq-loop, timens-no-nsec-offset, timens-no-seq-retry,
// unordered-counter-read, signed-clock-id, gettimeofday-usec,
// time-monotonic, getres-coarse-hres, vdso-time-wrapper), slow-loop
// (milliseconds of loop in every do_hres() call), comment (a
// comment appended: no code changes) or compile-error (then the line the
// compiler must name is printed too).

#include <cstdio>
#include <string>
#include <vector>

#include "ktree/testing/defect_patches.h"
#include "ktree/testing/test_trees.h"

int main(int argc, char** argv) {
  using namespace vdsolab::ktree::testing;
  if (argc != 4) {
    std::fprintf(stderr, "usage: make_patch TREE KIND DIR\n");
    return 2;
  }
  absl::StatusOr<std::string> root = TreeRoot(argv[1]);
  if (!root.ok()) {
    std::fprintf(stderr, "%s\n", std::string(root.status().message()).c_str());
    return 2;
  }
  const std::string kind = argv[2];
  if (kind == "compile-error") {
    int line = 0;
    absl::StatusOr<std::string> p =
        WriteCompileErrorPatch(*root, argv[3], &line);
    if (!p.ok()) {
      std::fprintf(stderr, "%s\n", std::string(p.status().message()).c_str());
      return 2;
    }
    std::printf("%s %d\n", p->c_str(), line);
    return 0;
  }
  if (kind == "slow-loop") {
    // Three million iterations in do_hres()'s loop: milliseconds per call,
    // each under the call bound.
    absl::StatusOr<std::string> p = WriteStatementPatch(
        *root, argv[3], "slow-loop",
        "{ volatile int spin; for (spin = 0; spin < 3000000; spin++); }");
    if (!p.ok()) {
      std::fprintf(stderr, "%s\n", std::string(p.status().message()).c_str());
      return 2;
    }
    std::printf("%s\n", p->c_str());
    return 0;
  }
  if (kind == "comment") {
    absl::StatusOr<std::string> p = WriteCommentPatch(*root, argv[3], "cli");
    if (!p.ok()) {
      std::fprintf(stderr, "%s\n", std::string(p.status().message()).c_str());
      return 2;
    }
    std::printf("%s\n", p->c_str());
    return 0;
  }
  std::vector<Defect> defects = AllDefects();
  for (Defect d : TimensDefects()) defects.push_back(d);
  for (Defect d : OtherEntryPointDefects()) defects.push_back(d);
  for (Defect d :
       {Defect::kUnorderedCounterRead, Defect::kSignedClockId,
        Defect::kVdsoTimeWrapper, Defect::kMonotonicToSyscall,
        Defect::kTimeTimensTestInverted, Defect::kPvclockModeInverted}) {
    defects.push_back(d);
  }
  for (Defect d : defects) {
    if (kind != DefectName(d)) continue;
    absl::StatusOr<std::string> p = WriteDefectPatch(*root, d, argv[3]);
    if (!p.ok()) {
      std::fprintf(stderr, "%s\n", std::string(p.status().message()).c_str());
      return 2;
    }
    std::printf("%s\n", p->c_str());
    return 0;
  }
  std::fprintf(stderr, "unknown kind %s\n", kind.c_str());
  return 2;
}
