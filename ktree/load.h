// File: ktree/load.h
//
// A kernel tree's variant built (or found in the cache) and loaded as a
// plugin in one step: what `vdsolab run --kernel-tree=... --patch=...`
// does before it runs.

#ifndef VDSOLAB_KTREE_LOAD_H_
#define VDSOLAB_KTREE_LOAD_H_

#include "absl/status/statusor.h"
#include "ktree/ktree.h"
#include "variants/variant.h"

namespace vdsolab::ktree {

// Loads a built variant's plugin. Loading the same plugin again returns
// the variant already loaded; a different plugin of the same name (another
// tree of the same version and patches) is an InvalidArgument error.
absl::StatusOr<const variants::Variant*> LoadTreeVariant(
    const BuiltVariant& built);

// BuildTreeVariant, then LoadTreeVariant.
absl::StatusOr<const variants::Variant*> BuildAndLoadTreeVariant(
    const BuildOptions& options, BuiltVariant* built = nullptr);

}  // namespace vdsolab::ktree

#endif  // VDSOLAB_KTREE_LOAD_H_
