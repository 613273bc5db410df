// File: ktime/tree_timekeeping.h
//
// A kernel tree's own kernel/time code (kernel_time.h) as the writer of a
// simulation (--kernel-time; variants/foreign_timekeeping.h): it runs every
// writer operation beside the model at the same counter value, and the
// stores its update_vsyscall() made, logged one by one in the tree's
// program order (internal/glue_vsyscall.c), are what the readers see. The
// model stays the oracle (docs/ktime.md).

#ifndef VDSOLAB_KTIME_TREE_TIMEKEEPING_H_
#define VDSOLAB_KTIME_TREE_TIMEKEEPING_H_

#include <string>

#include "absl/status/statusor.h"
#include "ktime/ktime.h"
#include "variants/foreign_timekeeping.h"

namespace vdsolab::ktime {

// The source of Variant::timekeeping for the tree and patches of
// `options`: built now at CONFIG_HZ=options.hz (so that bad input is
// reported at once; `built` says what was built), and again for another
// HZ when a scenario asks. Judged by the model in the era profile of the
// tree's version. Trees whose vvar data is not x86's _vdso_data at
// vvar+128 (6.13+) are refused.
absl::StatusOr<variants::ForeignTimekeepingSource> TreeTimekeepingSource(
    const BuildOptions& options, BuiltKernelTime* built);

}  // namespace vdsolab::ktime

#endif  // VDSOLAB_KTIME_TREE_TIMEKEEPING_H_
