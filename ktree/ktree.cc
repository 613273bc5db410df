#include "ktree/ktree.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/sha256.h"
#include "ktree/internal/build_steps.h"
#include "ktree/internal/cache.h"
#include "ktree/internal/code_map.h"
#include "ktree/internal/fs.h"
#include "ktree/internal/layout_match.h"
#include "ktree/internal/patches.h"
#include "ktree/internal/shims.h"
#include "ktree/internal/source.h"
#include "ktree/internal/text.h"
#include "variants/plugin/vdsolab_plugin.h"

namespace vdsolab::ktree {
namespace {

using internal::JoinPath;

constexpr char kCacheLayout[] = "ktree-v1";
constexpr char kLogPayload[] = "type.googleapis.com/vdsolab.ktree.BuildLog";

// "5 rdtsc_ordered", "4 rdtsc_ordered, 1 bare rdtsc (unordered)": a patch
// that drops a counter read's ordering shows in the variant's line. The
// simulation lets an unordered read run early only within its call, where
// the negative-motion clamp hides it (docs/kernel-trees.md).
std::string CounterSitesText(const internal::AsmRewrite& r) {
  std::vector<std::string> parts;
  if (r.ordered > 0)
    parts.push_back(absl::StrFormat("%d rdtsc_ordered", r.ordered));
  if (r.rdtscp > 0) parts.push_back(absl::StrFormat("%d rdtscp", r.rdtscp));
  if (r.plain > 0) {
    parts.push_back(absl::StrFormat("%d bare rdtsc (unordered)", r.plain));
  }
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

// Attaches the build log to an error.
absl::Status WithLog(absl::Status s, const std::string& log) {
  if (!s.ok()) s.SetPayload(kLogPayload, absl::Cord(log));
  return s;
}

// Removes the scratch directory however the build ends.
class ScratchDir {
 public:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  ~ScratchDir() { internal::RemoveTree(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string SemanticsWords(uint32_t counter, uint32_t flags) {
  std::string s = counter == VDSOLAB_COUNTER_CLAMP_TO_LAST
                      ? "clamp-to-last (raw counter, behind cycle_last "
                        "counts as cycle_last)"
                      : "masked63 (counter & S64_MAX, bit-62 negative motion)";
  if (flags & VDSOLAB_SEM_OVERFLOW_PROTECTED) s += ", overflow-protected";
  if (flags & VDSOLAB_SEM_COARSE_FROM_COARSE_NSEC) {
    s += ", coarse clocks from coarse_nsec";
  }
  if (flags & VDSOLAB_SEM_TIME_NAMESPACE) s += ", time namespaces";
  if (flags & VDSOLAB_SEM_PVCLOCK) s += ", kvm-clock";
  return s;
}

// The struct generation the version predicts (the probe tries it first).
internal::ProbeAttempt Predicted(const internal::KernelVersion& v) {
  internal::ProbeAttempt a;
  a.time_data = v.AtLeast(6, 15);
  a.aux = v.AtLeast(6, 17);
  a.max_cycles = v.AtLeast(6, 10);
  return a;
}

BuiltVariant FromMeta(const std::map<std::string, std::string>& m,
                      const std::string& dir) {
  auto get = [&](const char* k) {
    auto it = m.find(k);
    return it == m.end() ? std::string() : it->second;
  };
  auto num = [&](const char* k) {
    return static_cast<int>(std::strtol(get(k).c_str(), nullptr, 10));
  };
  BuiltVariant b;
  b.so_path = JoinPath(dir, "plugin.so");
  b.name = get("name");
  b.version = get("version");
  b.layout = get("layout");
  b.data_layout = get("data_layout");
  b.counter_semantics = static_cast<uint32_t>(num("counter_semantics"));
  b.semantics_flags = static_cast<uint32_t>(num("semantics_flags"));
  b.semantics = SemanticsWords(b.counter_semantics, b.semantics_flags);
  b.era = get("era");
  b.provenance = get("provenance");
  b.origin = get("origin");
  b.compiler = get("compiler");
  b.ordered_reads = num("ordered_reads");
  b.plain_reads = num("plain_reads");
  b.rdtscp_reads = num("rdtscp_reads");
  b.syscalls = num("syscalls");
  b.code_sha256 = get("code_sha256");
  b.functions = get("functions");
  b.reached_functions = get("reached_functions");
  b.skipped_files = get("skipped_files");
  b.uncompiled_files = get("uncompiled_files");
  b.fuzzy_hunks = get("fuzzy_hunks");
  return b;
}

// What the compiler made of the tree's code: its assembly without the
// lines that name source files or the compiler, so that two builds of
// the same code hash alike whatever patch file they came from.
std::string CodeFingerprint(std::string_view assembly) {
  Sha256 h;
  size_t pos = 0;
  while (pos < assembly.size()) {
    size_t end = assembly.find('\n', pos);
    if (end == std::string_view::npos) end = assembly.size();
    const std::string_view line = assembly.substr(pos, end - pos);
    pos = end + 1;
    const size_t first = line.find_first_not_of(" \t");
    const std::string_view t =
        first == std::string_view::npos ? "" : line.substr(first);
    // '#' lines are comments: inline asm's line markers name the source
    // path, which differs between a patched copy and the tree.
    if (t.starts_with("#") || t.starts_with(".file") ||
        t.starts_with(".ident")) {
      continue;
    }
    h.Update(line);
    h.Update("\n");
  }
  return Sha256::Hex(h.Finish());
}

std::map<std::string, std::string> ToMeta(const BuiltVariant& b) {
  return {{"name", b.name},
          {"version", b.version},
          {"layout", b.layout},
          {"data_layout", b.data_layout},
          {"counter_semantics", std::to_string(b.counter_semantics)},
          {"semantics_flags", std::to_string(b.semantics_flags)},
          {"era", b.era},
          {"provenance", b.provenance},
          {"origin", b.origin},
          {"compiler", b.compiler},
          {"ordered_reads", std::to_string(b.ordered_reads)},
          {"plain_reads", std::to_string(b.plain_reads)},
          {"rdtscp_reads", std::to_string(b.rdtscp_reads)},
          {"syscalls", std::to_string(b.syscalls)},
          {"code_sha256", b.code_sha256},
          {"functions", b.functions},
          {"reached_functions", b.reached_functions},
          {"skipped_files", b.skipped_files},
          {"uncompiled_files", b.uncompiled_files},
          {"fuzzy_hunks", b.fuzzy_hunks}};
}

// Everything a build is keyed on before it compiles.
struct Inputs {
  internal::Compiler cc;
  internal::TreeSource tree;
  std::vector<internal::Patch> patches;
  std::string cache_root;
  std::string key;
};

// The build itself (a cache miss). `log` collects what ran.
absl::StatusOr<BuiltVariant> Build(const Inputs& in, std::string* log) {
  absl::StatusOr<internal::KernelVersion> version =
      internal::ReadKernelVersion(in.tree.root);
  if (!version.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--kernel-tree=%s: %s", in.tree.given, version.status().message()));
  }
  absl::StatusOr<std::string> scratch_path =
      internal::MakeTempDir(JoinPath(in.cache_root, "tmp"), "build-");
  if (!scratch_path.ok()) return scratch_path.status();
  ScratchDir scratch(*scratch_path);

  std::string what = "in Linux " + version->String() + " (" + in.tree.absolute;
  for (const internal::Patch& p : in.patches) what += " + " + p.absolute;
  what += ")";

  // Patches go to a private copy of the vDSO subset.
  std::string src_root = in.tree.root;
  std::vector<std::string> touched;
  std::vector<std::string> skipped;  // Patched files outside the build.
  std::vector<std::string> fuzzy;    // Hunks applied with fuzz.
  if (!in.patches.empty()) {
    src_root = JoinPath(scratch.path(), "tree");
    int copied = 0;
    for (const std::string& rel : internal::VdsoSubset()) {
      if (!internal::Exists(JoinPath(in.tree.root, rel))) continue;
      absl::StatusOr<int> c = internal::MirrorTree(in.tree.root, src_root, rel);
      if (!c.ok()) return c.status();
      copied += *c;
    }
    *log += absl::StrFormat(
        "patch copy of the vDSO subset in %s (%s)\n", src_root,
        copied == 0 ? "hard links" : std::to_string(copied) + " copies");
    for (const internal::Patch& p : in.patches) {
      absl::StatusOr<internal::Applied> a =
          internal::ApplyPatch(p, src_root, scratch.path(), log);
      if (!a.ok()) return a.status();
      touched.insert(touched.end(), a->touched.begin(), a->touched.end());
      skipped.insert(skipped.end(), a->skipped.begin(), a->skipped.end());
      for (const std::string& h : a->fuzzy) fuzzy.push_back(p.given + ": " + h);
    }
  }

  absl::StatusOr<internal::Shims> shims =
      internal::WriteShims(src_root, JoinPath(scratch.path(), "shims"));
  if (!shims.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--kernel-tree=%s: %s", in.tree.given, shims.status().message()));
  }
  internal::StepContext ctx;
  ctx.cc = in.cc;
  ctx.cflags = internal::KernelCflags(in.cc, src_root, shims->dir, *version);
  ctx.src_root = src_root;
  ctx.scratch = scratch.path();
  ctx.prefixes = {{src_root, ""},
                  {in.tree.root, ""},
                  {shims->dir, "<vdsolab-generated>"},
                  {scratch.path(), "<vdsolab>"}};
  ctx.what = what;
  ctx.log = log;

  absl::StatusOr<internal::CompiledTree> compiled =
      internal::CompileTree(ctx, Predicted(*version));
  if (!compiled.ok()) return compiled.status();
  absl::StatusOr<internal::LayoutMatch> match =
      internal::MatchLayout(compiled->probe, compiled->attempt, *version);
  if (!match.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", what, match.status().message()));
  }
  // Patched files the compile never read (arch/x86/entry/vdso/vma.c: kernel
  // code around the vDSO, in the copied subset but not in the vDSO's code):
  // their change is not tested. Only those: the patch tested nothing.
  std::vector<std::string> uncompiled;
  {
    std::set<std::string> read;
    for (const std::string& dep : compiled->deps) {
      const std::string p = internal::NormalizePath(dep);
      if (p.starts_with(src_root + "/"))
        read.insert(p.substr(src_root.size() + 1));
    }
    for (const std::string& rel : touched) {
      if (read.count(rel) == 0 &&
          std::find(uncompiled.begin(), uncompiled.end(), rel) ==
              uncompiled.end()) {
        uncompiled.push_back(rel);
      }
    }
  }
  if (!touched.empty() &&
      uncompiled.size() ==
          std::set<std::string>(touched.begin(), touched.end()).size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--patch: changes none of the files the vDSO build compiles: it "
        "changes %s, which the compiled vDSO code (lib/vdso/gettimeofday.c "
        "and the headers it includes) never reads%s",
        absl::StrJoin(uncompiled, ", "),
        skipped.empty() ? ""
                        : absl::StrCat(", and ", absl::StrJoin(skipped, ", "),
                                       ", outside the vDSO build")));
  }
  absl::StatusOr<internal::AsmRewrite> rewrite =
      internal::RewriteCounterAndSyscallSites(compiled->assembly);
  if (!rewrite.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", what, rewrite.status().message()));
  }
  *log += absl::StrFormat(
      "layout %s: %s; rewrote %d rdtsc_ordered(), %d rdtsc, %d rdtscp, %d "
      "syscall sites (%d alternative replacement sections made "
      "non-executable)\n",
      match->base, match->description, rewrite->ordered, rewrite->plain,
      rewrite->rdtscp, rewrite->syscalls, rewrite->replacement_sections);

  BuiltVariant b;
  b.version = version->String();
  b.name = "tree-" + b.version;
  for (const internal::Patch& p : in.patches) b.name += "+" + p.name;
  // A variant name is at most 128 bytes (variants/plugin/loader.cc): many
  // long patch names (git format-patch's) keep the first and a count.
  if (constexpr size_t kMaxPatchPart = 96;
      b.name.size() > kMaxPatchPart && !in.patches.empty()) {
    // The patches' hashes keep two such names apart.
    std::string shas;
    for (const internal::Patch& p : in.patches) shas += p.sha256;
    b.name = absl::StrFormat("tree-%s+%s", b.version,
                             in.patches[0].name.substr(0, 48));
    if (in.patches.size() > 1) {
      b.name += absl::StrFormat("+%d-more", in.patches.size() - 1);
    }
    b.name += "-" + Sha256::Of(shas).substr(0, 8);
  }
  if (internal::Basename(in.cc.cc) != "gcc") {
    b.name += "@" + internal::Basename(in.cc.cc);
  }
  b.layout = match->base;
  b.data_layout = match->description;
  b.counter_semantics = match->counter_semantics;
  b.semantics_flags = match->semantics_flags;
  b.semantics = SemanticsWords(b.counter_semantics, b.semantics_flags);
  b.era = "Linux " + b.version;
  b.compiler = in.cc.first_line;
  b.provenance = absl::StrFormat(
      "Linux %s from %s: lib/vdso/gettimeofday.c and "
      "arch/x86/include/asm/vdso/gettimeofday.h, %s",
      b.version, in.tree.absolute,
      in.patches.empty() ? "unmodified" : "as patched by");
  for (size_t i = 0; i < in.patches.size(); ++i) {
    b.provenance += (i == 0 ? " " : ", ") + in.patches[i].absolute;
  }
  b.origin =
      absl::StrFormat("tree %s (%s)", in.tree.absolute, in.tree.identity);
  for (const internal::Patch& p : in.patches) {
    b.origin += absl::StrFormat("; patch %s (sha256:%s)", p.absolute, p.sha256);
  }
  b.origin += "; cc " + in.cc.first_line;
  b.ordered_reads = rewrite->ordered;
  b.plain_reads = rewrite->plain;
  b.rdtscp_reads = rewrite->rdtscp;
  b.syscalls = rewrite->syscalls;
  b.code_sha256 = CodeFingerprint(compiled->assembly);
  b.skipped_files = absl::StrJoin(skipped, " ");
  b.uncompiled_files = absl::StrJoin(uncompiled, " ");
  b.fuzzy_hunks = absl::StrJoin(fuzzy, "; ");
  const internal::CodeMap map =
      internal::MapCode(compiled->assembly,
                        {internal::kTreeEntryPoint, internal::kTreeGettimeofday,
                         internal::kTreeTime, internal::kTreeClockGetres});
  b.functions = internal::FormatFunctions(map);
  b.reached_functions = internal::FormatReached(map);

  internal::GlueConfig g;
  g.name = b.name;
  g.provenance = b.provenance;
  g.summary = absl::StrFormat(
      "the tree's own vDSO code (%s; %s), loads hooked by the compiler, "
      "%d counter sites (%s) and %d syscall sites rewritten",
      in.cc.first_line, match->description,
      rewrite->ordered + rewrite->plain + rewrite->rdtscp,
      CounterSitesText(*rewrite), rewrite->syscalls);
  g.layout = b.layout;
  g.era = b.era;
  g.config_hz = internal::kTreeConfigHz;
  g.origin = b.origin;
  g.data_offset = match->data_offset;
  g.seq_offsets = match->seq_offsets;
  g.clocks = match->clocks;
  g.counter_semantics = match->counter_semantics;
  g.semantics_flags = match->semantics_flags;
  g.counter_read = rewrite->ordered > 0  ? VDSOLAB_RDTSC_ORDERED
                   : rewrite->rdtscp > 0 ? VDSOLAB_RDTSCP
                   : rewrite->plain > 0  ? VDSOLAB_RDTSC
                                         : VDSOLAB_RDTSC_ORDERED;
  const std::string so = JoinPath(scratch.path(), "plugin.so");
  if (absl::Status s = internal::LinkPlugin(ctx, rewrite->text, g, so);
      !s.ok()) {
    return s;
  }

  // The manifest: every file the build read, hashed in the unpatched tree
  // (the patches' content is in the key).
  internal::Manifest manifest;
  std::map<std::string, bool> seen;
  auto add = [&](const std::string& path) {
    if (seen[path]) return;
    seen[path] = true;
    manifest.files.push_back(
        {path, internal::HashDependency(in.tree.root, path)});
  };
  add("Makefile");
  for (const std::string& rel : shims->inputs) add(rel);
  for (const std::string& rel : touched) add(rel);
  for (const std::string& dep : compiled->deps) {
    const std::string p = internal::NormalizePath(dep);
    if (p.starts_with(src_root + "/")) {
      add(p.substr(src_root.size() + 1));
    } else if (!p.starts_with(scratch.path() + "/")) {
      add("sys:" + p);
    }
  }
  std::string content = in.key;
  for (const internal::Dependency& d : manifest.files) {
    content += d.sha256 + " " + d.path + "\n";
  }
  manifest.result = Sha256::Of(content);

  // Into the cache: a complete results/ entry first, then the manifest
  // that names it.
  const std::string results = JoinPath(in.cache_root, "results");
  const std::string dir = JoinPath(results, manifest.result);
  absl::StatusOr<std::string> tmp = internal::MakeTempDir(results, ".new-");
  if (!tmp.ok()) return tmp.status();
  for (const auto& [name, text] :
       std::vector<std::pair<std::string, std::string>>{
           {"meta", internal::FormatMeta(ToMeta(b))}, {"build.log", *log}}) {
    if (absl::Status s = internal::WriteFileAtomic(JoinPath(*tmp, name), text);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s =
          internal::CopyFileAtomic(so, JoinPath(*tmp, "plugin.so"));
      !s.ok()) {
    return s;
  }
  absl::StatusOr<bool> placed = internal::RenameIntoPlace(*tmp, dir);
  if (!placed.ok()) return placed.status();
  if (absl::Status s = internal::StoreManifest(
          JoinPath(JoinPath(in.cache_root, "keys"), in.key), manifest);
      !s.ok()) {
    return s;
  }
  b.so_path = JoinPath(dir, "plugin.so");
  return b;
}

}  // namespace

absl::StatusOr<std::string> DefaultCacheDir() {
  if (const char* d = std::getenv("VDSOLAB_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) {
    return JoinPath(d, "vdsolab");
  }
  if (const char* h = std::getenv("HOME"); h && *h) {
    return JoinPath(h, ".cache/vdsolab");
  }
  // No home (a Bazel test's sandbox): the test's own scratch, else /tmp.
  if (const char* t = std::getenv("TEST_TMPDIR"); t && *t) {
    return JoinPath(t, "vdsolab-cache");
  }
  return absl::StrFormat("/tmp/vdsolab-cache-%d", getuid());
}

PatchReach ComparePatchedCode(const BuiltVariant& base,
                              const BuiltVariant& patched) {
  return ComparePatchedCode(base.functions, base.reached_functions,
                            patched.functions, patched.reached_functions);
}

PatchReach ComparePatchedCode(std::string_view base_functions,
                              std::string_view base_reached,
                              std::string_view patched_functions,
                              std::string_view patched_reached) {
  PatchReach out;
  if (base_functions.empty() || patched_functions.empty()) return out;
  const internal::CodeMap a =
      internal::ParseCodeMap(base_functions, base_reached);
  const internal::CodeMap b =
      internal::ParseCodeMap(patched_functions, patched_reached);
  for (const std::string& f : internal::ChangedFunctions(a, b)) {
    const bool reached = a.reached.count(f) != 0 || b.reached.count(f) != 0;
    (reached ? out.reached : out.unreached).push_back(f);
  }
  return out;
}

absl::StatusOr<BuiltVariant> BuildTreeVariant(const BuildOptions& options) {
  std::string log;
  Inputs in;
  std::string cache = options.cache_dir;
  if (cache.empty()) {
    absl::StatusOr<std::string> d = DefaultCacheDir();
    if (!d.ok()) return d.status();
    cache = *d;
  }
  in.cache_root = JoinPath(internal::Absolute(cache), kCacheLayout);
  if (absl::Status s = internal::MakeDirs(in.cache_root); !s.ok()) return s;

  absl::StatusOr<internal::Compiler> cc = internal::DetectCompiler(options.cc);
  if (!cc.ok()) return cc.status();
  in.cc = *cc;
  for (const std::string& p : options.patches) {
    absl::StatusOr<internal::Patch> patch = internal::ReadPatch(p);
    if (!patch.ok()) return patch.status();
    in.patches.push_back(std::move(*patch));
  }
  absl::StatusOr<internal::TreeSource> tree =
      internal::ResolveTree(options.tree, in.cache_root);
  if (!tree.ok()) return tree.status();
  in.tree = std::move(*tree);
  log += in.tree.log;

  std::string key = internal::BuildFingerprint();
  key += "\ncc " + in.cc.cc + "\n" + in.cc.version_text;
  key += "\ntree " + in.tree.absolute + "\n" + in.tree.identity + "\n";
  for (const internal::Patch& p : in.patches) {
    key += "patch " + p.absolute + " " + p.sha256 + "\n";
  }
  in.key = Sha256::Of(key);

  const std::string key_dir = JoinPath(JoinPath(in.cache_root, "keys"), in.key);
  int checked = 0;
  if (std::optional<std::string> result =
          internal::FindValidManifest(key_dir, in.tree.root, &checked)) {
    const std::string dir =
        JoinPath(JoinPath(in.cache_root, "results"), *result);
    absl::StatusOr<std::string> meta =
        internal::ReadFile(JoinPath(dir, "meta"));
    if (meta.ok() && internal::IsRegularFile(JoinPath(dir, "plugin.so"))) {
      BuiltVariant b = FromMeta(internal::ParseMeta(*meta), dir);
      b.from_cache = true;
      absl::StatusOr<std::string> old =
          internal::ReadFile(JoinPath(dir, "build.log"));
      b.build_log =
          log + absl::StrFormat("cache hit: %s (%d files hashed unchanged)\n",
                                dir, checked);
      if (old.ok()) b.build_log += "--- the build that made it ---\n" + *old;
      return b;
    }
  }
  log += absl::StrFormat("cache miss (key %s)\n", in.key);
  absl::StatusOr<BuiltVariant> built = Build(in, &log);
  if (!built.ok()) return WithLog(built.status(), log);
  built->build_log = log;
  return built;
}

absl::StatusOr<std::string> WriteTreeVariant(const BuildOptions& options,
                                             const std::string& out_so) {
  absl::StatusOr<BuiltVariant> b = BuildTreeVariant(options);
  if (!b.ok()) return b.status();
  if (absl::Status s = internal::CopyFileAtomic(b->so_path, out_so); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("-o %s: %s", out_so, s.message()));
  }
  return out_so;
}

std::string BuildLogOf(const absl::Status& status) {
  const auto p = status.GetPayload(kLogPayload);
  return p.has_value() ? std::string(*p) : std::string();
}

}  // namespace vdsolab::ktree
