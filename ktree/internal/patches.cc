#include "ktree/internal/patches.h"

#include <cstdlib>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/sha256.h"
#include "ktree/internal/fs.h"
#include "ktree/internal/source.h"
#include "ktree/internal/subprocess.h"
#include "ktree/internal/text.h"

namespace vdsolab::ktree::internal {
namespace {

// "+++ b/lib/vdso/x.c\t2024-01-01 ..." -> "lib/vdso/x.c" (-p1); nullopt
// for /dev/null.
std::optional<std::string> HeaderPath(std::string_view rest) {
  rest = Trim(rest.substr(0, rest.find('\t')));
  if (rest == "/dev/null") return std::nullopt;
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::string(rest);
  return NormalizePath(std::string(rest.substr(slash + 1)));
}

// "@@ -a,b +c,d @@" -> (b, d); a missing count is 1.
bool HunkCounts(std::string_view line, long* old_n, long* new_n) {
  auto count = [](std::string_view r, char sign, long* n) {
    const size_t at = r.find(sign);
    if (at == std::string_view::npos) return false;
    r.remove_prefix(at + 1);
    const size_t end = r.find_first_of(" @");
    r = r.substr(0, end);
    const size_t comma = r.find(',');
    if (comma == std::string_view::npos) {
      *n = 1;
    } else {
      *n = std::strtol(std::string(r.substr(comma + 1)).c_str(), nullptr, 10);
    }
    return true;
  };
  std::string_view body = line.substr(2);
  const size_t close = body.find("@@");
  if (close == std::string_view::npos) return false;
  body = body.substr(0, close);
  const size_t plus = body.find('+');
  if (plus == std::string_view::npos) return false;
  return count(body.substr(0, plus), '-', old_n) &&
         count(body.substr(plus), '+', new_n);
}

absl::Status BadPatch(const std::string& given, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrFormat("--patch=%s: %s", given, what));
}

}  // namespace

absl::StatusOr<std::vector<FileDiff>> ParseUnifiedDiff(std::string_view diff) {
  const std::vector<std::string_view> lines = Split(diff, '\n');
  std::vector<FileDiff> files;
  std::vector<size_t> starts;
  bool open_git = false;  // A "diff --git" section without ---/+++ yet.
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view l = lines[i];
    if (l.starts_with("diff ")) {
      files.emplace_back();
      starts.push_back(i);
      open_git = true;
      // Renames and mode changes have no ---/+++: the git line names it.
      const size_t b = l.rfind(" b/");
      if (l.starts_with("diff --git ") && b != std::string_view::npos) {
        files.back().target = NormalizePath(std::string(l.substr(b + 3)));
      }
      continue;
    }
    if (l.starts_with("--- ") && i + 1 < lines.size() &&
        lines[i + 1].starts_with("+++ ")) {
      if (!open_git) {
        files.emplace_back();
        starts.push_back(i);
      }
      open_git = false;
      const std::optional<std::string> from = HeaderPath(l.substr(4));
      const std::optional<std::string> to = HeaderPath(lines[i + 1].substr(4));
      FileDiff& f = files.back();
      f.creates = !from.has_value();
      if (to) {
        f.target = *to;
      } else if (from) {
        f.target = *from;
      }
      ++i;
      continue;
    }
    if (l.starts_with("@@ ")) {
      if (files.empty() || files.back().target.empty()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "line %d: a hunk before any ---/+++ file header", i + 1));
      }
      long old_n = 0, new_n = 0;
      if (!HunkCounts(l, &old_n, &new_n)) {
        return absl::InvalidArgumentError(
            absl::StrFormat("line %d: malformed hunk header", i + 1));
      }
      ++files.back().hunks;
      const size_t header = i;
      while (old_n > 0 || new_n > 0) {
        if (++i >= lines.size()) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "the hunk at line %d ends before its line counts do",
              header + 1));
        }
        const std::string_view h = lines[i];
        const char c = h.empty() ? ' ' : h[0];
        if (c == ' ') {
          --old_n;
          --new_n;
        } else if (c == '-') {
          --old_n;
        } else if (c == '+') {
          --new_n;
        } else if (c != '\\') {
          return absl::InvalidArgumentError(absl::StrFormat(
              "line %d: the hunk at line %d ends before its line counts do",
              i + 1, header + 1));
        }
      }
    }
  }
  if (files.empty()) {
    return absl::InvalidArgumentError(
        "not a unified diff (no ---/+++ file header)");
  }
  for (size_t f = 0; f < files.size(); ++f) {
    const size_t end = f + 1 < starts.size() ? starts[f + 1] : lines.size();
    std::string text;
    for (size_t i = starts[f]; i < end; ++i) {
      text.append(lines[i]);
      text.push_back('\n');
    }
    files[f].text = std::move(text);
    if (files[f].target.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "line %d: a file section without a file name", starts[f] + 1));
    }
  }
  return files;
}

absl::StatusOr<Patch> ReadPatch(const std::string& path) {
  Patch p;
  p.given = path;
  p.absolute = Absolute(path);
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return BadPatch(path, "cannot read it (no such file?)");
  p.text = *text;
  p.sha256 = Sha256::Of(p.text);
  p.name = Basename(path);
  for (const char* ext : {".diff", ".patch"}) {
    if (p.name.size() > std::string(ext).size() && p.name.ends_with(ext)) {
      p.name.resize(p.name.size() - std::string(ext).size());
    }
  }
  // The variant's name carries it: only what a variant name may hold
  // (variants/plugin/loader.cc), the rest as '_'.
  for (char& c : p.name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                    c == '+' || c == '@' || c == '-';
    if (!ok) c = '_';
  }
  absl::StatusOr<std::vector<FileDiff>> files = ParseUnifiedDiff(p.text);
  if (!files.ok()) return BadPatch(path, std::string(files.status().message()));
  p.files = std::move(*files);
  return p;
}

// Whether a tree-relative path starts at a kernel tree's top directory:
// a patch made from elsewhere (diff -u without a/ and b/, or from the
// tree's parent) names files with one component too few or too many once
// patch -p1 has dropped the first.
bool FromTreeTop(const std::string& path) {
  static const char* const kTop[] = {
      "arch",    "block",       "certs",     "crypto",   "Documentation",
      "drivers", "fs",          "include",   "init",     "io_uring",
      "ipc",     "kernel",      "lib",       "mm",       "net",
      "rust",    "samples",     "scripts",   "security", "sound",
      "tools",   "usr",         "virt",      "Makefile", "Kconfig",
      "Kbuild",  "MAINTAINERS", "COPYING",   "CREDITS",  "LICENSES",
      "README",  ".mailmap",    ".gitignore"};
  const std::string first = path.substr(0, path.find('/'));
  for (const char* t : kTop) {
    if (first == t) return true;
  }
  return false;
}

absl::StatusOr<Applied> ApplyPatch(const Patch& patch, const std::string& view,
                                   const std::string& scratch, std::string* log,
                                   const std::vector<std::string>& subset,
                                   const char* build) {
  Applied a;
  std::string kept;
  for (const FileDiff& f : patch.files) {
    if (!InSubset(subset, f.target)) {
      a.skipped.push_back(f.target);
      *log += absl::StrFormat(
          "%s: %s is not part of this build; its change is not compiled "
          "here (a reader variant's writer is vdsolab's model of the era; "
          "vdsolab conform-model compiles kernel/time)\n",
          patch.given, f.target);
      continue;
    }
    if (!f.creates && !IsRegularFile(JoinPath(view, f.target))) {
      return BadPatch(patch.given,
                      absl::StrFormat("%s is not in the tree", f.target));
    }
    a.touched.push_back(f.target);
    kept += f.text;
  }
  if (kept.empty()) {
    // A patch with no effect on what is compiled would test the unpatched
    // tree under the patch's name.
    bool from_top = false;
    bool kernel_time = false;
    for (const std::string& f : a.skipped) {
      from_top = from_top || FromTreeTop(f);
      kernel_time = kernel_time || f.starts_with("kernel/time/");
    }
    return BadPatch(
        patch.given,
        absl::StrFormat(
            "changes none of the files %s: it changes %s%s",
            build != nullptr
                ? build
                : "the vDSO build compiles (lib/vdso, include/vdso, "
                  "include/asm-generic/vdso and arch/x86's vdso headers)",
            absl::StrJoin(a.skipped, ", "),
            !from_top ? ", a path no kernel tree starts with: its paths are "
                        "read as patch -p1 reads them, the first component "
                        "dropped, so make the diff from the tree's top "
                        "directory with a/ and b/ prefixes"
            : kernel_time && build == nullptr
                ? "; a kernel/time patch is checked by `vdsolab "
                  "conform-model --kernel-tree=TREE --patch=FILE`, or "
                  "publishes the page with --kernel-time=TREE "
                  "--kernel-time-patch=FILE"
                : ""));
  }
  const std::string file =
      JoinPath(scratch, absl::StrFormat("patch-%s.diff", patch.sha256));
  if (absl::Status s = WriteFileAtomic(file, kept); !s.ok()) return s;
  const std::vector<std::string> argv = {"patch",
                                         "-p1",
                                         "--batch",
                                         "--forward",
                                         "--no-backup-if-mismatch",
                                         "--reject-file=/dev/null",
                                         "--quoting-style=literal",
                                         "-d",
                                         view,
                                         "-i",
                                         file};
  *log += ShellQuote(argv) + "\n";
  absl::StatusOr<RunOutput> r = RunProgram(argv);
  if (!r.ok()) return r.status();
  *log += r->output;
  // Name the fuzzy hunks of a patch that applied, or the first failure:
  // which file, which hunk.
  std::string current;
  for (std::string_view l : Split(r->output, '\n')) {
    l = Trim(l);
    if (l.starts_with("patching file ")) {
      current = std::string(l.substr(14));
    } else if (r->exit_code == 0) {
      // "Hunk #2 succeeded at 150 with fuzz 1 (offset 3 lines)."
      const size_t fuzz = l.find(" with fuzz ");
      const size_t at = l.find(" succeeded at ");
      if (!l.starts_with("Hunk #") || fuzz == std::string_view::npos ||
          at == std::string_view::npos || at > fuzz) {
        continue;
      }
      std::string_view level = l.substr(fuzz + 11);
      level = level.substr(0, level.find_first_of(" ."));
      a.fuzzy.push_back(absl::StrFormat(
          "hunk #%s of %s at line %s, fuzz %s",
          std::string(l.substr(6, l.find(' ', 6) - 6)), current,
          std::string(l.substr(at + 14, fuzz - at - 14)), std::string(level)));
    } else if (l.starts_with("Hunk #") && Contains(l, "FAILED")) {
      const std::string_view n = l.substr(6, l.find(' ', 6) - 6);
      std::string where;
      const size_t at = l.find(" at ");
      if (at != std::string_view::npos) {
        where = absl::StrFormat(
            " (near line %s)",
            std::string(Trim(l.substr(at + 4)))
                .substr(0, std::string(Trim(l.substr(at + 4))).find('.')));
      }
      return BadPatch(patch.given,
                      absl::StrFormat("hunk #%s of %s does not apply%s",
                                      std::string(n), current, where));
    } else if (l.starts_with("Reversed (or previously applied) patch")) {
      return BadPatch(patch.given,
                      absl::StrFormat("%s already has this change (reversed "
                                      "or previously applied patch)",
                                      current));
    } else if (Contains(l, "malformed patch")) {
      return BadPatch(patch.given, std::string(l));
    }
  }
  if (r->exit_code == 0) return a;
  std::string first = std::string(Trim(r->output));
  first = first.substr(0, first.find('\n'));
  return BadPatch(patch.given, absl::StrFormat("patch failed (exit %d): %s",
                                               r->exit_code, first));
}

}  // namespace vdsolab::ktree::internal
