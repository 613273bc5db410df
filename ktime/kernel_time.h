// File: ktime/kernel_time.h
//
// A built kernel/time object (ktime.h) loaded into this process: the
// ktime ABI's operations (ktime/internal/ktime_abi.h) on the tree's own
// timekeeping code. One object per process per path (dlopen shares a
// path's statics); Reset() returns every static to its state at load, so
// many runs share one load.

#ifndef VDSOLAB_KTIME_KERNEL_TIME_H_
#define VDSOLAB_KTIME_KERNEL_TIME_H_

#include <string>

#include "absl/status/statusor.h"
#include "ktime/internal/ktime_abi.h"

namespace vdsolab::ktime {

class KernelTime {
 public:
  // dlopen()s `so_path` and checks its ABI version.
  static absl::StatusOr<KernelTime> Load(const std::string& so_path);
  const vdsolab_kt_api& api() const { return *api_; }

 private:
  explicit KernelTime(const vdsolab_kt_api* api) : api_(api) {}
  const vdsolab_kt_api* api_;
};

}  // namespace vdsolab::ktime

#endif  // VDSOLAB_KTIME_KERNEL_TIME_H_
