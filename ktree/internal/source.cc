#include "ktree/internal/source.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/sha256.h"
#include "ktree/internal/fs.h"
#include "ktree/internal/subprocess.h"
#include "ktree/internal/text.h"

namespace vdsolab::ktree::internal {
namespace {

absl::Status NotATree(const std::string& given, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("--kernel-tree=%s: %s", given, why));
}

// A tree must have these to be built at all.
absl::Status CheckTree(const std::string& given, const std::string& root) {
  for (const char* f : {"Makefile", "lib/vdso/gettimeofday.c",
                        "arch/x86/entry/vdso/vclock_gettime.c",
                        "arch/x86/include/asm/vdso/gettimeofday.h"}) {
    if (!IsRegularFile(JoinPath(root, f))) {
      return NotATree(given,
                      absl::StrFormat("not an x86 kernel source tree with the "
                                      "generic vDSO (no %s)",
                                      f));
    }
  }
  return absl::OkStatus();
}

// Extracts the vDSO subset of `tarball` into `dest` (a new directory).
absl::StatusOr<std::string> Extract(const std::string& given,
                                    const std::string& tarball,
                                    const std::string& dest,
                                    const std::vector<std::string>& subset,
                                    std::string* log) {
  std::vector<std::string> argv = {"tar",
                                   "-xf",
                                   tarball,
                                   "-C",
                                   dest,
                                   "--wildcards",
                                   "--no-wildcards-match-slash"};
  // One leading component: the tarball's top directory, whatever its name.
  for (const std::string& rel : subset) argv.push_back("*/" + rel);
  *log += ShellQuote(argv) + "\n";
  absl::StatusOr<RunOutput> r = RunProgram(argv);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    std::string first = std::string(Trim(r->output));
    first = first.substr(0, first.find('\n'));
    return NotATree(given,
                    absl::StrFormat("not a kernel source tarball (tar: %s)",
                                    first.empty() ? "failed" : first));
  }
  absl::StatusOr<std::vector<std::string>> top = ListDir(dest);
  if (!top.ok()) return top.status();
  if (top->size() != 1) {
    return NotATree(given, absl::StrFormat("expected one top directory in the "
                                           "tarball, found %d",
                                           top->size()));
  }
  return (*top)[0];
}

}  // namespace

const std::vector<std::string>& VdsoSubset() {
  static const std::vector<std::string>* subset = new std::vector<std::string>{
      "Makefile",
      "lib/vdso",
      "include",
      "arch/x86/include",
      "arch/x86/entry/vdso",
      "arch/x86/entry/syscalls",
  };
  return *subset;
}

bool InVdsoSubset(const std::string& rel) {
  return InSubset(VdsoSubset(), rel);
}

bool InSubset(const std::vector<std::string>& subset, const std::string& rel) {
  for (const std::string& s : subset) {
    if (rel == s ||
        (rel.size() > s.size() && rel.starts_with(s) && rel[s.size()] == '/')) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<TreeSource> ResolveTree(const std::string& tree,
                                       const std::string& cache_root,
                                       const std::vector<std::string>& subset) {
  TreeSource src;
  src.given = tree;
  if (tree.empty()) return NotATree(tree, "no tree given");
  src.absolute = Absolute(tree);
  absl::StatusOr<std::string> real = RealPath(tree);
  if (!real.ok()) return NotATree(tree, "no such file or directory");
  if (IsDirectory(*real)) {
    src.root = *real;
    src.identity = "directory " + *real;
    if (absl::Status s = CheckTree(tree, src.root); !s.ok()) return s;
    return src;
  }
  if (!IsRegularFile(*real)) {
    return NotATree(tree, "neither a directory nor a tarball");
  }
  // A tarball: its content names the extraction, so a renamed or copied
  // tarball reuses it and a replaced one does not.
  src.tarball = true;
  absl::StatusOr<std::string> hash = Sha256File(*real);
  if (!hash.ok()) return NotATree(tree, std::string(hash.status().message()));
  src.identity = "tarball sha256:" + *hash;
  const std::string trees = JoinPath(cache_root, "trees");
  const std::string dir = JoinPath(trees, *hash);
  if (!IsDirectory(dir)) {
    absl::StatusOr<std::string> tmp = MakeTempDir(trees, ".extract-");
    if (!tmp.ok()) return tmp.status();
    absl::StatusOr<std::string> top =
        Extract(tree, *real, *tmp, subset, &src.log);
    if (!top.ok()) {
      RemoveTree(*tmp);
      return top.status();
    }
    if (absl::Status s = CheckTree(tree, JoinPath(*tmp, *top)); !s.ok()) {
      RemoveTree(*tmp);
      return s;
    }
    // Another process may have extracted the same tarball meanwhile: the
    // first rename wins, the other copy is dropped.
    absl::StatusOr<bool> placed = RenameIntoPlace(*tmp, dir);
    if (!placed.ok()) return placed.status();
    src.extracted = *placed;
  } else {
    src.log += "(extracted before: " + dir + ")\n";
  }
  absl::StatusOr<std::vector<std::string>> top = ListDir(dir);
  if (!top.ok()) return top.status();
  if (top->size() != 1) {
    return absl::InternalError(
        absl::StrFormat("cache entry %s is damaged (remove it)", dir));
  }
  src.root = JoinPath(dir, (*top)[0]);
  if (absl::Status s = CheckTree(tree, src.root); !s.ok()) return s;
  return src;
}

std::string KernelVersion::String() const {
  return absl::StrFormat("%d.%d.%d%s", version, patchlevel, sublevel, extra);
}

absl::StatusOr<KernelVersion> ReadKernelVersion(const std::string& root) {
  absl::StatusOr<std::string> mk = ReadFile(JoinPath(root, "Makefile"));
  if (!mk.ok()) return mk.status();
  KernelVersion v;
  int found = 0;
  for (std::string_view line : Split(*mk, '\n')) {
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = Trim(line.substr(0, eq));
    const std::string value(Trim(line.substr(eq + 1)));
    auto number = [&](int* out) {
      if (value.empty() ||
          value.find_first_not_of("0123456789") != std::string::npos) {
        return;
      }
      *out = std::stoi(value);
      ++found;
    };
    if (key == "VERSION") {
      number(&v.version);
    } else if (key == "PATCHLEVEL") {
      number(&v.patchlevel);
    } else if (key == "SUBLEVEL") {
      number(&v.sublevel);
    } else if (key == "EXTRAVERSION") {
      v.extra = value;
    }
    if (key == "NAME") break;  // The version block is over.
  }
  if (found != 3) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s/Makefile has no VERSION, PATCHLEVEL and SUBLEVEL numbers", root));
  }
  return v;
}

}  // namespace vdsolab::ktree::internal
