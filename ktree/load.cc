#include "ktree/load.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "variants/plugin/loader.h"
#include "variants/registry.h"

namespace vdsolab::ktree {

absl::StatusOr<const variants::Variant*> LoadTreeVariant(
    const BuiltVariant& built) {
  if (absl::StatusOr<const variants::Variant*> v =
          variants::FindVariant(built.name);
      v.ok()) {
    const variants::PluginInfo* info = variants::FindPluginInfo(*v);
    if (info != nullptr && info->path == built.so_path) return *v;
    return absl::InvalidArgumentError(absl::StrFormat(
        "a different variant named %s is already loaded (%s)", built.name,
        info != nullptr ? info->origin : std::string((*v)->provenance)));
  }
  // The vDSO keeps no state between calls: its .data and .bss are linked
  // into the read-only text segment (arch/x86/entry/vdso/vdso-layout.lds.S),
  // so a write there faults; the glue's state is per call. The simulation
  // may run a call of the tree's code again from its start.
  variants::PluginOptions options;
  options.rerunnable = true;
  return variants::LoadPluginVariant(built.so_path, options);
}

absl::StatusOr<const variants::Variant*> BuildAndLoadTreeVariant(
    const BuildOptions& options, BuiltVariant* built) {
  absl::StatusOr<BuiltVariant> b = BuildTreeVariant(options);
  if (!b.ok()) return b.status();
  if (built != nullptr) *built = *b;
  return LoadTreeVariant(*b);
}

}  // namespace vdsolab::ktree
