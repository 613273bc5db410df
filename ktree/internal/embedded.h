// File: ktree/internal/embedded.h
//
// Sources compiled into every tree variant at run time, embedded into the
// vdsolab binary by a genrule (so a `bazel run` or an installed binary
// needs no data files): the runtime glue and the plugin ABI header.

#ifndef VDSOLAB_KTREE_INTERNAL_EMBEDDED_H_
#define VDSOLAB_KTREE_INTERNAL_EMBEDDED_H_

namespace vdsolab::ktree::internal {

extern const char kGlueSource[];    // ktree/internal/glue.c
extern const char kPluginHeader[];  // variants/plugin/vdsolab_plugin.h

}  // namespace vdsolab::ktree::internal

#endif  // VDSOLAB_KTREE_INTERNAL_EMBEDDED_H_
