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
#include "variants/variant.h"

namespace vdsolab::cli {

// Builds (or finds in the cache) and loads the tree's kernel/time; one
// tree per process (a second different one is bad input).
absl::Status LoadKernelTime(const std::string& tree,
                            const std::vector<std::string>& patches,
                            const std::string& cc);

// Whether LoadKernelTime() ran; its tree and patches as given resolved.
bool KernelTimeLoaded();
const std::string& KernelTimeTree();
const std::vector<std::string>& KernelTimePatches();

// The built-in reader of the tree's era and layout ("6.10"): the reader
// when none is named.
std::string KernelTimeDefaultReader();

// "6.10@ktime-6.12.117" -> "6.10"; other names unchanged.
std::string ReaderOf(const std::string& name);

// Each reader paired with the tree's timekeeper. A reader of another page
// layout is bad input, or with `skip_other_layouts` left out (with a note).
absl::StatusOr<std::vector<const variants::Variant*>> PairWithKernelTime(
    const std::vector<const variants::Variant*>& readers,
    bool skip_other_layouts);

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_KERNEL_TIME_VARIANT_H_
