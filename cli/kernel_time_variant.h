// File: cli/kernel_time_variant.h
//
// --kernel-time=PATH (with --patch, or --kernel-time-patch beside a
// --kernel-tree): a kernel tree's own kernel/time code, built by ktime/,
// publishes the page of every run while the model judges (docs/ktime.md).
// The readers chosen as usual are paired with it: each becomes the variant
// "<reader>@ktime-<version>[+patch...]", which carries the tree's
// timekeeper (Variant::timekeeping) and is registered under that name, so
// that a replay file names it.

#ifndef VDSOLAB_CLI_KERNEL_TIME_VARIANT_H_
#define VDSOLAB_CLI_KERNEL_TIME_VARIANT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ktime/ktime.h"
#include "variants/variant.h"

namespace vdsolab::cli {

// Builds (or finds in the cache) and loads the tree's kernel/time; one
// tree per process (a second different one is bad input).
absl::Status LoadKernelTime(const std::string& tree,
                            const std::vector<std::string>& patches,
                            const std::string& cc);

// On stderr: the files the patches change that the tree's kernel/time
// build does not compile (BuiltKernelTime::uncompiled_files), and the
// hunks applied with fuzz, if any.
void NoteUncompiledFiles(const ktime::BuiltKernelTime& built);

// On stderr, for a patched build of `options`: that it compiles to exactly
// the unpatched tree's code (a comment), or that every function it changes
// is one vdsolab never runs (nothing the glue's API reaches:
// ktime_get_boot_fast_ns(), ktime_get_update_offsets_now(), ...), from the
// unpatched tree's build (cached after the first time). Nothing else.
void NoteUntestedKernelTimePatch(const ktime::BuildOptions& options,
                                 const ktime::BuiltKernelTime& built);

// Whether LoadKernelTime() ran; its tree and patches as given resolved.
bool KernelTimeLoaded();
const std::string& KernelTimeTree();
const std::vector<std::string>& KernelTimePatches();

// The built-in reader of the tree's era and layout ("6.10"): the reader
// when none is named.
std::string KernelTimeDefaultReader();

// "6.10@ktime-6.12.117" -> "6.10"; other names unchanged.
std::string ReaderOf(const std::string& name);

// A name given for a reader (`what`: the flag or key it came from) that
// names a pairing ("6.10@ktime-6.12.117+fix") needs a tree loaded by
// --kernel-time, and unless `any_tree` that very tree: otherwise the run
// would be the plain reader's (or another tree's) while the name says the
// named tree wrote the page. `any_tree`: a recorded reader, run again
// against another build of the tree (a replay with the fix).
absl::Status CheckPairedName(const std::string& name, const std::string& what,
                             bool any_tree);

// Each reader paired with the tree's timekeeper. A reader of another page
// layout is bad input, or with `skip_other_layouts` left out (with a note).
absl::StatusOr<std::vector<const variants::Variant*>> PairWithKernelTime(
    const std::vector<const variants::Variant*>& readers,
    bool skip_other_layouts);

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_KERNEL_TIME_VARIANT_H_
