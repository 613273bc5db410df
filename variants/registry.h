// File: variants/registry.h
//
// Every variant vdsolab knows: the built-in ones (upstream, the upstream
// eras, the seeds' patches, user-space clocks) and plugins loaded from
// shared objects (variants/plugin.h).

#ifndef VDSOLAB_VARIANTS_REGISTRY_H_
#define VDSOLAB_VARIANTS_REGISTRY_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "variants/variant.h"

namespace vdsolab::variants {

// Built-ins first, in a fixed order, then plugins in the order loaded.
std::vector<const Variant*> AllVariants();

// The variant with this name; the error lists the names there are.
absl::StatusOr<const Variant*> FindVariant(std::string_view name);

// Adds a variant (a loaded plugin). Fails if the name is taken.
absl::Status RegisterVariant(const Variant* variant);

}  // namespace vdsolab::variants

#endif  // VDSOLAB_VARIANTS_REGISTRY_H_
