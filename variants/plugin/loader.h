// File: variants/plugin/loader.h
//
// Loads a plugin variant (vdsolab_plugin.h) from a shared object and
// registers it, so `run`, `compare` and the property suite can use it by
// name. The plugin's reader runs through the same access policies as a
// built-in variant's: HookedAccess in the simulation (so races and counter
// faults reach it), NativeAccess in benchmarks (through function pointers).

#ifndef VDSOLAB_VARIANTS_PLUGIN_LOADER_H_
#define VDSOLAB_VARIANTS_PLUGIN_LOADER_H_

#include <string>

#include "absl/status/statusor.h"
#include "variants/variant.h"

namespace vdsolab::variants {

// dlopen()s `path`, checks the ABI version and the record, builds the
// variant on the layout it names and registers it. The error says what is
// wrong with the file.
//
// A version-2 plugin (vdsolab_plugin_v2, looked up first) is judged by the
// semantics it declares and reports the counter instruction it declares;
// a version-1 plugin borrows both from its layout's built-in variant.
// What the loader may assume of a plugin beyond its record.
struct PluginOptions {
  // The plugin keeps no state between calls, so that the simulation may
  // run a call again from its start (vdso::QuietAccess's aborted attempts).
  // Never assumed of a user's plugin; a kernel tree's vDSO code holds it
  // (ktree/load.cc).
  bool rerunnable = false;
};
// A plugin crashed inside dlopen() (a constructor): the dynamic loader's
// lock is still held, so the process must end without exit()'s handlers
// (fflush, then _exit(); cli/main.cc does).
bool LoaderPoisoned();
// A plugin (or a kernel tree's compiled code) was loaded into the process:
// vdsolab then ends with _exit() after flushing its output, so that the
// plugin's destructors and atexit() handlers (a crash, an _exit(0)) cannot
// change the exit status its report stands for.
bool ForeignCodeLoaded();

absl::StatusOr<const Variant*> LoadPluginVariant(
    const std::string& path, const PluginOptions& options = {});

// What a loaded plugin says beyond the Variant record (for reports and
// replay files).
struct PluginInfo {
  std::string path;  // As given to LoadPluginVariant.
  int abi_version = 1;
  std::string era;     // v2: "Linux 6.12.117"; empty for v1.
  std::string origin;  // v2: tree, patches and hashes; may be empty.
};

// The info of a variant LoadPluginVariant returned; nullptr for others.
const PluginInfo* FindPluginInfo(const Variant* variant);

}  // namespace vdsolab::variants

#endif  // VDSOLAB_VARIANTS_PLUGIN_LOADER_H_
