#include "cli/kernel_time_variant.h"

#include <cstdio>
#include <deque>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/cli_util.h"
#include "ktime/ktime.h"
#include "ktime/tree_timekeeping.h"
#include "variants/registry.h"

namespace vdsolab::cli {
namespace {

struct Loaded {
  std::string tree;
  std::vector<std::string> patches;
  variants::ForeignTimekeepingSource source;
  // The paired variants and their names (Variant::name is a view).
  std::deque<variants::Variant> paired;
  std::deque<std::string> names;
};

Loaded*& State() {
  static Loaded* loaded = nullptr;
  return loaded;
}

}  // namespace

void NoteUncompiledFiles(const ktime::BuiltKernelTime& built) {
  NoteFuzzyHunks(built.fuzzy_hunks);
  if (built.uncompiled_files.empty()) return;
  std::fprintf(stderr,
               "vdsolab: note: %s: the patches also change %s, which the "
               "kernel/time build does not compile (it compiles "
               "timekeeping.c, ntp.c, vsyscall.c, time.c and clocksource.c "
               "and what they include): those changes are not tested\n",
               built.name.c_str(), built.uncompiled_files.c_str());
}

void NoteUntestedKernelTimePatch(const ktime::BuildOptions& options,
                                 const ktime::BuiltKernelTime& built) {
  if (options.patches.empty() || built.functions.empty()) return;
  ktime::BuildOptions plain = options;
  plain.patches.clear();
  absl::StatusOr<ktime::BuiltKernelTime> base = ktime::BuildKernelTime(plain);
  if (!base.ok()) return;
  const std::optional<ktree::PatchReach> reach =
      ktime::ComparePatchedCode(*base, built);
  if (!reach) return;
  if (reach->reached.empty() && reach->unreached.empty()) {
    std::fprintf(stderr,
                 "vdsolab: note: %s compiles to exactly the code of the "
                 "unpatched tree (%s): the patch changes nothing the compiler "
                 "emits for x86-64 (a comment, or code an #ifdef leaves out), "
                 "so every result is the unpatched tree's\n",
                 built.name.c_str(), base->name.c_str());
    return;
  }
  if (!reach->reached.empty()) return;
  std::fprintf(stderr,
               "vdsolab: note: %s changes only %s() of the tree's kernel/time "
               "code, which vdsolab never runs (it calls the tree through "
               "timekeeping_init(), update_wall_time(), do_adjtimex(), "
               "settimeofday, offset and sleep-time injection, suspend and "
               "resume, a clocksource change and the syscall readers): no "
               "check here tests the change\n",
               built.name.c_str(),
               absl::StrJoin(reach->unreached, "(), ").c_str());
}

absl::Status LoadKernelTime(const std::string& tree,
                            const std::vector<std::string>& patches,
                            const std::string& cc) {
  ktime::BuildOptions options;
  options.tree = ResolveInputPath(tree);
  for (const std::string& p : patches) {
    options.patches.push_back(ResolveInputPath(p));
  }
  if (State() != nullptr) {
    if (State()->tree == options.tree && State()->patches == options.patches) {
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        "--kernel-time: one kernel tree's timekeeper per run");
  }
  if (!cc.empty()) options.cc = cc;
  ktime::BuiltKernelTime built;
  absl::StatusOr<variants::ForeignTimekeepingSource> source =
      ktime::TreeTimekeepingSource(options, &built);
  if (!source.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--kernel-time=%s: %s", tree, source.status().message()));
  }
  NoteUncompiledFiles(built);
  NoteUntestedKernelTimePatch(options, built);
  if (!source->note.empty()) {
    std::fprintf(stderr, "vdsolab: note: %s: %s\n", built.name.c_str(),
                 source->note.c_str());
  }
  auto loaded = std::make_unique<Loaded>();
  loaded->tree = options.tree;
  loaded->patches = options.patches;
  loaded->source = *source;
  std::fprintf(
      stderr,
      "vdsolab: kernel tree %s: %s publishes the page (update_vsyscall() "
      "store by store, layout of variant %s); the model judges it "
      "in era %s%s%s\n",
      tree.c_str(), built.name.c_str(), loaded->source.layout_variant.c_str(),
      loaded->source.era.c_str(),
      loaded->source.backports.empty()
          ? ""
          : (" + " + absl::StrJoin(loaded->source.backports, ", ")).c_str(),
      built.from_cache ? " (built before: from the cache)" : "");
  State() = loaded.release();  // Lives as long as the variants naming it.
  return absl::OkStatus();
}

bool KernelTimeLoaded() { return State() != nullptr; }

const std::string& KernelTimeTree() { return State()->tree; }

const std::vector<std::string>& KernelTimePatches() { return State()->patches; }

std::string KernelTimeDefaultReader() {
  return State() == nullptr ? "" : State()->source.layout_variant;
}

std::string ReaderOf(const std::string& name) {
  const size_t at = name.find("@ktime-");
  return at == std::string::npos ? name : name.substr(0, at);
}

absl::Status CheckPairedName(const std::string& name, const std::string& what,
                             bool any_tree) {
  const size_t at = name.find("@ktime-");
  if (at == std::string::npos) return absl::OkStatus();
  const std::string tree = name.substr(at + 1);
  const std::string given = absl::StartsWith(what, "--")
                                ? absl::StrFormat("%s=%s", what, name)
                                : absl::StrFormat("%s = \"%s\"", what, name);
  if (State() == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: reader %s paired with kernel tree %s, which no --kernel-time "
        "loaded (give the tree with --kernel-time=TREE and the --patch "
        "files it was built with, or name the reader alone)",
        given, name.substr(0, at), tree));
  }
  if (!any_tree && tree != State()->source.name) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: names kernel tree %s, but --kernel-time loaded %s",
                        given, tree, State()->source.name));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<const variants::Variant*>> PairWithKernelTime(
    const std::vector<const variants::Variant*>& readers,
    bool skip_other_layouts) {
  Loaded& s = *State();
  absl::StatusOr<const variants::Variant*> era =
      variants::FindVariant(s.source.layout_variant);
  if (!era.ok()) return era.status();
  std::vector<const variants::Variant*> out;
  std::vector<std::string> skipped;
  for (const variants::Variant* r : readers) {
    if (r->timekeeping != nullptr) {  // Paired already.
      out.push_back(r);
      continue;
    }
    if (r->layout != (*era)->layout) {
      if (skip_other_layouts) {
        skipped.emplace_back(r->name);
        continue;
      }
      return absl::InvalidArgumentError(absl::StrFormat(
          "--kernel-time: %s writes the page layout of variant %s; reader %s "
          "reads another (name a reader of that layout, e.g. --variant=%s)",
          s.source.name, s.source.layout_variant, r->name,
          s.source.layout_variant));
    }
    const std::string name = std::string(r->name) + "@" + s.source.name;
    absl::StatusOr<const variants::Variant*> known =
        variants::FindVariant(name);
    if (known.ok()) {
      out.push_back(*known);
      continue;
    }
    s.names.push_back(name);
    variants::Variant v = *r;
    v.name = s.names.back();
    v.timekeeping = &s.source;
    v.timens = false;  // The tree writes no namespace page.
    s.paired.push_back(std::move(v));
    if (absl::Status st = variants::RegisterVariant(&s.paired.back());
        !st.ok()) {
      return st;
    }
    out.push_back(&s.paired.back());
  }
  if (!skipped.empty()) {
    std::fprintf(stderr,
                 "vdsolab: note: --kernel-time: %zu readers of other page "
                 "layouts left out (%s)\n",
                 skipped.size(), absl::StrJoin(skipped, ", ").c_str());
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(
        "--kernel-time: no reader of the tree's page layout to run");
  }
  return out;
}

}  // namespace vdsolab::cli
