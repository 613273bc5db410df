#include "cli/variant_flags.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/cli_util.h"
#include "variants/plugin/call_guard.h"
#include "variants/plugin/loader.h"
#include "variants/registry.h"

namespace vdsolab::cli {
namespace {

// Loads the flags' files; returns the variants they registered, in order.
absl::StatusOr<std::vector<const variants::Variant*>> Load(
    const ParsedFlags& flags) {
  if (std::optional<uint64_t> ns = flags.DurationNs("call-timeout")) {
    variants::SetCallTimeLimit(static_cast<double>(*ns) / 1e9);
  }
  std::vector<const variants::Variant*> loaded;
  for (const std::string& so : flags.List("variant-so")) {
    absl::StatusOr<const variants::Variant*> v =
        variants::LoadPluginVariant(ResolveInputPath(so));
    if (!v.ok()) return v.status();
    loaded.push_back(*v);
  }
  if (flags.Has("patch") && !flags.Has("kernel-tree")) {
    return absl::InvalidArgumentError(
        "--patch applies to a --kernel-tree: name the tree to patch");
  }
  if (flags.Has("kernel-tree")) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--kernel-tree=%s: kernel trees are not supported by this build",
        flags.String("kernel-tree")));
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
      MakeFlag(
          "kernel-tree", FlagKind::kString, "PATH",
          "build and run a kernel tree's own vDSO code: a source directory or "
          "a Debian linux-source-*.tar.xz (docs/kernel-trees.md)",
          ""),
      MakeFlag("patch", FlagKind::kList, "FILE",
               "apply this unified diff (-p1) to the kernel tree first", ""),
      MakeFlag("call-timeout", FlagKind::kDuration, "DURATION",
               "a call of a plugin or kernel tree that has not returned after "
               "this much wall time is stopped and reported as spinning (0: "
               "never)",
               "1s", 0, 3600e9),
  };
}

absl::Status LoadVariantFiles(const ParsedFlags& flags) {
  return Load(flags).status();
}

absl::StatusOr<std::vector<const variants::Variant*>> ChooseVariants(
    const ParsedFlags& flags, bool many, const std::string& fallback) {
  absl::StatusOr<std::vector<const variants::Variant*>> loaded = Load(flags);
  if (!loaded.ok()) return loaded.status();
  std::vector<const variants::Variant*> chosen;
  for (const std::string& name : flags.List("variant")) {
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
  absl::StatusOr<const variants::Variant*> v = variants::FindVariant(fallback);
  if (!v.ok()) return v.status();
  return std::vector<const variants::Variant*>{*v};
}

}  // namespace vdsolab::cli
