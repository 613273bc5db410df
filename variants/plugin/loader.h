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
absl::StatusOr<const Variant*> LoadPluginVariant(const std::string& path);

}  // namespace vdsolab::variants

#endif  // VDSOLAB_VARIANTS_PLUGIN_LOADER_H_
