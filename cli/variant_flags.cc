#include "cli/variant_flags.h"

#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/cli_util.h"
#include "cli/kernel_time_variant.h"
#include "common/sha256.h"
#include "hostvdso/host_variant.h"
#include "ktree/ktree.h"
#include "ktree/load.h"
#include "sim/durations.h"
#include "variants/plugin/call_guard.h"
#include "variants/plugin/loader.h"
#include "variants/registry.h"

namespace vdsolab::cli {

// A patch that changes nothing the compiler emits (a comment, code an
// #ifdef leaves out, a lib/vdso helper x86 overrides), or only functions
// vdsolab never calls (x86's __vdso_gettimeofday(), __vdso_time(),
// __vdso_clock_getres()), would pass every check without being tested:
// say so, from the unpatched tree's build (cached after the first time).
void NoteUntestedPatch(const ktree::BuildOptions& options,
                       const ktree::BuiltVariant& built) {
  if (options.patches.empty() || built.code_sha256.empty()) return;
  ktree::BuildOptions plain = options;
  plain.patches.clear();
  absl::StatusOr<ktree::BuiltVariant> base = ktree::BuildTreeVariant(plain);
  if (!base.ok()) return;
  if (base->code_sha256 == built.code_sha256) {
    std::fprintf(stderr,
                 "vdsolab: note: %s compiles to exactly the code of the "
                 "unpatched tree (%s): the patch changes nothing the "
                 "compiler emits for x86-64 (a comment, code an #ifdef "
                 "leaves out, or a lib/vdso helper x86 overrides, such as "
                 "vdso_calc_delta() before 6.10, vdso_calc_ns() after), so "
                 "every result is the unpatched tree's\n",
                 built.name.c_str(), base->name.c_str());
    return;
  }
  const ktree::PatchReach reach = ktree::ComparePatchedCode(*base, built);
  if (!reach.reached.empty() || reach.unreached.empty()) return;
  std::fprintf(stderr,
               "vdsolab: note: %s changes only %s() of the tree's code, "
               "which vdsolab never runs (it calls clock_gettime()'s path, "
               "__cvdso_clock_gettime_data(), alone): no check here tests "
               "the change\n",
               built.name.c_str(),
               absl::StrJoin(reach.unreached, "(), ").c_str());
}

namespace {

// Where each variant loaded from a file came from.
std::map<const variants::Variant*, sim::VariantSource>& Sources() {
  static auto* sources =
      new std::map<const variants::Variant*, sim::VariantSource>;
  return *sources;
}

// The --kernel-cc each tree variant was built with ("": the default).
std::map<const variants::Variant*, std::string>& TreeCompilers() {
  static auto* compilers = new std::map<const variants::Variant*, std::string>;
  return *compilers;
}

// --call-timeout as given (nullopt: the default bound), recorded in replay
// files and replay command lines so that they bound calls as the run did.
std::optional<uint64_t>& GivenCallTimeout() {
  static std::optional<uint64_t> ns;
  return ns;
}

std::string SemanticsText(const variants::Semantics& s) {
  return absl::StrFormat(
      "%s, %s, %s",
      s.counter == variants::CounterSemantics::kMasked63 ? "masked63"
                                                         : "clamp-to-last",
      s.overflow_protected ? "overflow-protected" : "delta * mult may wrap",
      s.coarse_from_coarse_nsec ? "coarse from coarse_nsec"
                                : "coarse from xtime_nsec");
}

// A plugin is judged by the semantics it declares (v2), whatever its
// layout's built-in reader does: a declaration copied from another era
// turns what that era did by design into known behaviour, or a design the
// layout's writer has into a defect. Said, so the verdicts can be read.
void NoteDeclaredSemantics(const variants::Variant& plugin) {
  for (const variants::Variant* v : variants::AllVariants()) {
    if (v == &plugin || v->layout != plugin.layout ||
        variants::FindPluginInfo(v) != nullptr) {
      continue;
    }
    if (v->semantics == plugin.semantics) return;
    std::fprintf(stderr,
                 "vdsolab: note: %s declares %s; its layout's built-in "
                 "reader (%s) is %s: the plugin is judged by its "
                 "declaration, so what the declared era does by design is "
                 "known behaviour, not a defect\n",
                 std::string(plugin.name).c_str(),
                 SemanticsText(plugin.semantics).c_str(),
                 std::string(v->name).c_str(),
                 SemanticsText(v->semantics).c_str());
    return;
  }
}

absl::StatusOr<const variants::Variant*> LoadPlugin(const std::string& path) {
  const std::string file = ResolveInputPath(path);
  absl::StatusOr<const variants::Variant*> v =
      variants::LoadPluginVariant(file);
  if (!v.ok()) return v.status();
  sim::VariantSource source;
  source.present = true;
  source.plugin = AbsoluteInputPath(file);
  if (absl::StatusOr<std::string> sha = Sha256File(file); sha.ok()) {
    source.plugin_sha256 = *sha;
  }
  if (const variants::PluginInfo* info = variants::FindPluginInfo(*v)) {
    source.origin = info->origin;
  }
  Sources()[*v] = source;
  NoteDeclaredSemantics(**v);
  return v;
}

absl::StatusOr<const variants::Variant*> LoadTree(
    const std::string& tree, const std::vector<std::string>& patches,
    const std::string& cc) {
  ktree::BuildOptions options;
  options.tree = ResolveInputPath(tree);
  for (const std::string& p : patches) {
    options.patches.push_back(ResolveInputPath(p));
  }
  if (!cc.empty()) options.cc = cc;
  ktree::BuiltVariant built;
  absl::StatusOr<const variants::Variant*> v =
      ktree::BuildAndLoadTreeVariant(options, &built);
  if (!v.ok()) {
    return absl::InvalidArgumentError(
        FlagError("kernel-tree", tree, std::string(v.status().message())));
  }
  // What was built and how it will be judged, for the person running it.
  std::fprintf(stderr,
               "vdsolab: kernel tree %s: variant %s (%s), page layout of "
               "variant %s: %s; judged as %s%s\n",
               tree.c_str(), built.name.c_str(), built.era.c_str(),
               built.layout.c_str(), built.data_layout.c_str(),
               built.semantics.c_str(),
               built.from_cache ? " (built before: from the cache)" : "");
  NoteUntestedPatch(options, built);
  NoteFuzzyHunks(built.fuzzy_hunks);
  if (!built.skipped_files.empty()) {
    std::fprintf(stderr,
                 "vdsolab: note: the patches also change %s, outside the "
                 "vDSO build: those hunks are not applied here (the page's "
                 "writer is vdsolab's model; --kernel-time=TREE with "
                 "--kernel-time-patch runs a tree's own kernel/time)\n",
                 built.skipped_files.c_str());
  }
  if (!built.uncompiled_files.empty()) {
    std::fprintf(stderr,
                 "vdsolab: note: the patches also change %s, which the "
                 "compiled vDSO code never reads (kernel code around the "
                 "vDSO): no check here tests that change\n",
                 built.uncompiled_files.c_str());
  }
  sim::VariantSource source;
  source.present = true;
  source.kernel_tree = AbsoluteInputPath(options.tree);
  for (const std::string& p : options.patches) {
    source.patches.push_back(AbsoluteInputPath(p));
  }
  source.origin = built.origin;
  source.tree_code_sha256 = built.code_sha256;
  Sources()[*v] = source;
  TreeCompilers()[*v] = cc;
  return v;
}

// A compiled vDSO image (hostvdso/): "" or "[vdso]" for the running
// kernel's. Its layout, era and where its data pages are, for the person
// running it.
absl::StatusOr<const variants::Variant*> LoadImage(const std::string& path) {
  const bool running = path.empty() || path == hostvdso::kRunningImage;
  const std::string file = running ? "" : ResolveInputPath(path);
  absl::StatusOr<const variants::Variant*> v = hostvdso::LoadHostVariant(file);
  if (!v.ok()) return v.status();
  const hostvdso::HostImageInfo* info = hostvdso::FindHostImageInfo(*v);
  if (Sources().count(*v) == 0 && info != nullptr) {
    std::fprintf(stderr,
                 "vdsolab: %s: variant %s, Linux %s's compiled vDSO; page "
                 "layout, writer and era semantics of built-in %s (a probe "
                 "agreed on %d calls); %zu counter/syscall sites "
                 "intercepted; data pages: %s\n",
                 running ? "the running kernel's [vdso]" : path.c_str(),
                 std::string((*v)->name).c_str(), info->version.c_str(),
                 info->era.c_str(), info->probe_calls, info->sites.size(),
                 info->geometry.c_str());
    if (!info->probe_fault.empty()) {
      std::fprintf(stderr,
                   "vdsolab: note: on the probe the image misbehaved: %s; "
                   "the run reports such calls as findings\n",
                   info->probe_fault.c_str());
    }
  }
  sim::VariantSource source;
  source.present = true;
  source.vdso_image =
      running ? hostvdso::kRunningImage : AbsoluteInputPath(file);
  if (info != nullptr) source.vdso_image_sha256 = info->sha256;
  Sources()[*v] = source;
  return v;
}

// --variant=host loads the running kernel's image on demand.
absl::Status LoadNamed(const std::string& name) {
  if (name != "host" || variants::FindVariant(name).ok()) {
    return absl::OkStatus();
  }
  return LoadImage("").status();
}

// Loads the flags' files; returns the variants they registered, in order.
absl::StatusOr<std::vector<const variants::Variant*>> Load(
    const ParsedFlags& flags) {
  if (std::optional<uint64_t> ns = flags.DurationNs("call-timeout")) {
    variants::SetCallTimeLimit(static_cast<double>(*ns) / 1e9);
    GivenCallTimeout() = *ns;
  }
  std::vector<const variants::Variant*> loaded;
  // The same file named twice is loaded once (its name would clash).
  std::set<std::string> seen;
  for (const std::string& so : flags.List("variant-so")) {
    if (!seen.insert(AbsoluteInputPath(ResolveInputPath(so))).second) continue;
    absl::StatusOr<const variants::Variant*> v = LoadPlugin(so);
    if (!v.ok()) return v.status();
    loaded.push_back(*v);
  }
  const bool tree = flags.Has("kernel-tree");
  const bool time = flags.Has("kernel-time");
  if ((flags.Has("patch") || flags.Has("kernel-cc")) && !tree && !time) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--%s applies to a --kernel-tree or --kernel-time: name the tree",
        flags.Has("patch") ? "patch" : "kernel-cc"));
  }
  if (flags.Has("kernel-time-patch") && !time) {
    return absl::InvalidArgumentError(
        "--kernel-time-patch applies to a --kernel-time: name the tree");
  }
  if (time) {
    // --patch is the reader tree's when there is one.
    std::vector<std::string> patches =
        tree ? std::vector<std::string>{} : flags.List("patch");
    for (const std::string& p : flags.List("kernel-time-patch")) {
      patches.push_back(p);
    }
    if (absl::Status s = LoadKernelTime(flags.String("kernel-time"), patches,
                                        flags.String("kernel-cc"));
        !s.ok()) {
      return s;
    }
  }
  if (tree) {
    absl::StatusOr<const variants::Variant*> v =
        LoadTree(flags.String("kernel-tree"), flags.List("patch"),
                 flags.String("kernel-cc"));
    if (!v.ok()) return v.status();
    loaded.push_back(*v);
  }
  for (const std::string& image : flags.List("vdso-image")) {
    absl::StatusOr<const variants::Variant*> v = LoadImage(image);
    if (!v.ok()) return v.status();
    loaded.push_back(*v);
  }
  for (const std::string& name : flags.List("variant")) {
    if (absl::Status s = LoadNamed(name); !s.ok()) return s;
  }
  return loaded;
}

}  // namespace

std::vector<FlagSpec> VariantFlags(bool many) {
  FlagSpec variant =
      MakeFlag("variant", many ? FlagKind::kList : FlagKind::kString, "NAME",
               many ? "the variants to run (default: every variant)"
                    : "the variant to run (vdsolab variants lists them)",
               "");
  return {
      variant,
      MakeFlag("variant-so", FlagKind::kList, "FILE",
               "load a plugin variant from a shared object (docs/plugins.md)",
               ""),
      MakeFlag("kernel-tree", FlagKind::kString, "PATH",
               "build and run a kernel tree's own vDSO code: a source "
               "directory or a Debian linux-source-*.tar.xz "
               "(docs/kernel-trees.md)",
               ""),
      MakeFlag("patch", FlagKind::kList, "FILE",
               "apply this unified diff (-p1) to the kernel tree first", ""),
      MakeFlag("kernel-time", FlagKind::kString, "PATH",
               "a kernel tree's own kernel/time code publishes the page, "
               "store by store, while the model judges the readers "
               "(docs/ktime.md); --patch applies to it unless --kernel-tree "
               "is given too",
               ""),
      MakeFlag("kernel-time-patch", FlagKind::kList, "FILE",
               "apply this unified diff (-p1) to the --kernel-time tree", ""),
      MakeFlag("kernel-cc", FlagKind::kString, "CC",
               "the compiler for the kernel tree (gcc, clang-14, a path)",
               "gcc"),
      MakeFlag("vdso-image", FlagKind::kList, "FILE",
               "run a compiled vDSO (a kernel build's vdso64.so or "
               "vdso64.so.dbg, or a dump of [vdso]) as machine code under "
               "the simulation, as variant host-<version>; --variant=host "
               "runs the running kernel's (docs/host-variant.md)",
               ""),
      MakeFlag("call-timeout", FlagKind::kDuration, "DURATION",
               "a call of a plugin, kernel tree or vDSO image that has not "
               "returned after this much CPU time, or (a plugin or kernel "
               "tree) has been asleep in the kernel for as long, or after 30 "
               "times it of wall time, is stopped and reported as spinning "
               "or blocked; a plugin's or kernel tree's call that returns "
               "after a quarter of it is reported as spinning too (0: "
               "never)",
               "1s", 0, 3600e9),
  };
}

FlagSpec AcceptFlag() {
  return MakeChoice("accept", {"known"},
                    "treat documented kernel behaviours (known kernel or era "
                    "behaviour in the report) as passing, so that only "
                    "defects fail",
                    "");
}

bool NamesAVariant(const ParsedFlags& flags) {
  return flags.Has("variant") || flags.Has("variant-so") ||
         flags.Has("kernel-tree") || flags.Has("vdso-image") ||
         flags.Has("kernel-time");
}

absl::Status LoadVariantFiles(const ParsedFlags& flags) {
  return Load(flags).status();
}

void ApplyRecordedCallTimeout(const sim::VariantSource& source) {
  if (source.call_timeout_ns == 0 || GivenCallTimeout().has_value()) return;
  variants::SetCallTimeLimit(static_cast<double>(source.call_timeout_ns) / 1e9);
  GivenCallTimeout() = source.call_timeout_ns;
}

absl::Status LoadRecordedVariant(const sim::VariantSource& source,
                                 const variants::Variant** reader) {
  const variants::Variant* unused = nullptr;
  if (reader == nullptr) reader = &unused;
  *reader = nullptr;
  if (!source.present) return absl::OkStatus();
  ApplyRecordedCallTimeout(source);
  if (!source.kernel_time.empty()) {
    if (absl::Status s =
            LoadKernelTime(source.kernel_time, source.kernel_time_patches, "");
        !s.ok()) {
      return s;
    }
  }
  if (!source.vdso_image.empty()) {
    absl::StatusOr<const variants::Variant*> v = LoadImage(source.vdso_image);
    if (!v.ok()) return v.status();
    *reader = *v;
    const hostvdso::HostImageInfo* info = hostvdso::FindHostImageInfo(*v);
    if (info != nullptr && !source.vdso_image_sha256.empty() &&
        info->sha256 != source.vdso_image_sha256) {
      std::fprintf(stderr,
                   "vdsolab: note: %s is not the image the replay was "
                   "written with (sha256 %s, was %s)\n",
                   source.vdso_image.c_str(), info->sha256.c_str(),
                   source.vdso_image_sha256.c_str());
    }
    return absl::OkStatus();
  }
  if (!source.kernel_tree.empty()) {
    absl::StatusOr<const variants::Variant*> v =
        LoadTree(source.kernel_tree, source.patches, "");
    if (!v.ok()) return v.status();
    *reader = *v;
    const std::string& now = Sources()[*v].tree_code_sha256;
    if (!source.tree_code_sha256.empty() && !now.empty() &&
        now != source.tree_code_sha256) {
      std::fprintf(stderr,
                   "vdsolab: note: the tree's code is not the code the "
                   "replay was written with (compiled code sha256 %s, was "
                   "%s): the tree or a patch was edited since, and a replay "
                   "that does not reproduce may not mean a fix\n",
                   now.c_str(), source.tree_code_sha256.c_str());
    }
    return absl::OkStatus();
  }
  if (source.plugin.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> sha = Sha256File(source.plugin);
  if (sha.ok() && !source.plugin_sha256.empty() &&
      *sha != source.plugin_sha256) {
    std::fprintf(stderr,
                 "vdsolab: note: %s changed since the replay was written "
                 "(sha256 %s, was %s)\n",
                 source.plugin.c_str(), sha->c_str(),
                 source.plugin_sha256.c_str());
  }
  absl::StatusOr<const variants::Variant*> v = LoadPlugin(source.plugin);
  if (!v.ok()) return v.status();
  *reader = *v;
  return absl::OkStatus();
}

namespace {

absl::StatusOr<std::vector<const variants::Variant*>> ChooseReaders(
    const ParsedFlags& flags, bool many, std::string fallback,
    const std::string& fallback_key) {
  absl::StatusOr<std::vector<const variants::Variant*>> loaded = Load(flags);
  if (!loaded.ok()) return loaded.status();
  // The name as given: checked only where it is used (below), since a
  // variant given by flag replaces it.
  const std::string given_fallback = fallback;
  fallback = ReaderOf(fallback);
  if (KernelTimeLoaded()) {
    // The default reader reads another layout than the tree writes: the
    // tree's era's reader instead.
    absl::StatusOr<const variants::Variant*> f =
        variants::FindVariant(fallback);
    absl::StatusOr<const variants::Variant*> era =
        variants::FindVariant(KernelTimeDefaultReader());
    if (!f.ok() || (era.ok() && (*f)->layout != (*era)->layout)) {
      fallback = KernelTimeDefaultReader();
    }
  }
  std::vector<const variants::Variant*> chosen;
  for (const std::string& named : flags.List("variant")) {
    if (absl::Status s = CheckPairedName(named, "--variant", false); !s.ok())
      return s;
    const std::string name = ReaderOf(named);
    absl::StatusOr<const variants::Variant*> v = variants::FindVariant(name);
    if (!v.ok()) return v.status();
    chosen.push_back(*v);
  }
  if (!chosen.empty()) return chosen;
  if (many) return variants::AllVariants();
  if (loaded->size() > 1) {
    std::vector<std::string> names;
    for (const variants::Variant* v : *loaded) names.emplace_back(v->name);
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d variants loaded (%s): name the one to run with --variant",
        loaded->size(), absl::StrJoin(names, ", ")));
  }
  if (loaded->size() == 1) return *loaded;
  if (absl::Status s = CheckPairedName(
          given_fallback,
          fallback_key.empty() ? "the default reader" : fallback_key, true);
      !s.ok()) {
    return s;
  }
  absl::Status s = LoadNamed(fallback);
  absl::StatusOr<const variants::Variant*> v =
      s.ok() ? variants::FindVariant(fallback) : s;
  if (v.ok()) return std::vector<const variants::Variant*>{*v};
  if (fallback_key.empty()) return v.status();
  return absl::Status(v.status().code(), absl::StrFormat("%s: %s", fallback_key,
                                                         v.status().message()));
}

}  // namespace

absl::StatusOr<std::vector<const variants::Variant*>> ChooseVariants(
    const ParsedFlags& flags, bool many, const std::string& fallback,
    const std::string& fallback_key) {
  absl::StatusOr<std::vector<const variants::Variant*>> readers =
      ChooseReaders(flags, many, fallback, fallback_key);
  if (!readers.ok() || !KernelTimeLoaded()) return readers;
  return PairWithKernelTime(*readers, many && !flags.Has("variant"));
}

SpeedBase SpeedBaseline(const variants::Variant* v) {
  auto it = Sources().find(v);
  if (it == Sources().end() || v->native_loop == nullptr) return {};
  const sim::VariantSource source = it->second;
  if (!source.kernel_tree.empty() && !source.patches.empty()) {
    // The same compiler: the ratio is then the patch's own.
    absl::StatusOr<const variants::Variant*> base =
        LoadTree(source.kernel_tree, {}, TreeCompilers()[v]);
    if (!base.ok() || (*base)->native_loop == nullptr) return {};
    return {*base, true};
  }
  // The built-in reader of the layout, of the same semantics where one
  // has them (a 6.1 tree's layout is 5.3's too): the newest such era.
  const variants::Variant* same_layout = nullptr;
  const variants::Variant* same_era = nullptr;
  for (const variants::Variant* b : variants::AllVariants()) {
    if (b != v && b->layout == v->layout && b->native_loop != nullptr &&
        !Sources().contains(b) && variants::FindPluginInfo(b) == nullptr) {
      if (same_layout == nullptr) same_layout = b;
      if (b->semantics == v->semantics) same_era = b;
    }
  }
  if (same_era != nullptr) return {same_era, false};
  if (same_layout != nullptr) return {same_layout, false};
  return {};
}

sim::VariantSource SourceOf(const variants::Variant* variant) {
  if (variant->timekeeping != nullptr && KernelTimeLoaded()) {
    // The reader's source, and the tree that publishes.
    absl::StatusOr<const variants::Variant*> reader =
        variants::FindVariant(ReaderOf(std::string(variant->name)));
    sim::VariantSource s =
        reader.ok() ? SourceOf(*reader) : sim::VariantSource{};
    s.present = true;
    s.call_timeout_ns = GivenCallTimeout().value_or(0);
    s.kernel_time = AbsoluteInputPath(KernelTimeTree());
    s.kernel_time_patches.clear();
    for (const std::string& p : KernelTimePatches()) {
      s.kernel_time_patches.push_back(AbsoluteInputPath(p));
    }
    return s;
  }
  auto it = Sources().find(variant);
  if (it == Sources().end()) return sim::VariantSource{};
  sim::VariantSource s = it->second;
  s.call_timeout_ns = GivenCallTimeout().value_or(0);
  return s;
}

namespace {

std::string ReaderFlags(const sim::VariantSource& s) {
  if (!s.present) return "";
  if (s.plugin.empty() && s.vdso_image.empty() && s.kernel_tree.empty()) {
    return "";  // A built-in reader (beside --kernel-time).
  }
  if (!s.plugin.empty()) return absl::StrFormat(" --variant-so=%s", s.plugin);
  if (s.vdso_image == hostvdso::kRunningImage) return "";  // --variant=host
  if (!s.vdso_image.empty()) {
    return absl::StrFormat(" --vdso-image=%s", s.vdso_image);
  }
  std::string o = absl::StrFormat(" --kernel-tree=%s", s.kernel_tree);
  for (const std::string& p : s.patches)
    absl::StrAppendFormat(&o, " --patch=%s", p);
  return o;
}

}  // namespace

std::string FlagsToLoad(const variants::Variant* variant) {
  const sim::VariantSource s = SourceOf(variant);
  std::string o = ReaderFlags(s);
  if (!s.kernel_time.empty()) {
    absl::StrAppendFormat(&o, " --kernel-time=%s", s.kernel_time);
    for (const std::string& p : s.kernel_time_patches)
      absl::StrAppendFormat(&o, " --kernel-time-patch=%s", p);
  }
  if (s.present && s.call_timeout_ns != 0) {
    absl::StrAppendFormat(&o, " --call-timeout=%s",
                          sim::FormatDurationNs(s.call_timeout_ns));
  }
  return o;
}

void UseVariant(const variants::Variant& variant, sim::Scenario* scenario) {
  scenario->run.reader = std::string(variant.name);
  // A replay file says where a plugin or tree came from, so that `vdsolab
  // replay FILE` alone loads it again.
  scenario->variant = SourceOf(&variant);
  // The model judges a tree's timekeeper in the tree's own era.
  if (variant.timekeeping != nullptr) {
    scenario->kernel.era = variant.timekeeping->era;
    scenario->kernel.backports = variant.timekeeping->backports;
  }
}

}  // namespace vdsolab::cli
