// File: ktime/kernel_time.h
//
// A built kernel/time object (ktime.h) loaded into this process: the
// ktime ABI's operations (ktime/internal/ktime_abi.h) on the tree's own
// timekeeping code. One object per process per path (dlopen shares a
// path's statics); Reset() returns every static to its state at load, so
// many runs share one load.

#ifndef VDSOLAB_KTIME_KERNEL_TIME_H_
#define VDSOLAB_KTIME_KERNEL_TIME_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ktime/internal/ktime_abi.h"
#include "vdso/access.h"

namespace vdsolab::ktime {

class KernelTime {
 public:
  // dlopen()s `so_path` and checks its ABI version.
  static absl::StatusOr<KernelTime> Load(const std::string& so_path);
  const vdsolab_kt_api& api() const { return *api_; }
  // The source place of the object's WARN() whose trap is at `addr`
  // ("kernel/time/timekeeping.c:2043"), or "" if none is there. Its WARN()s
  // go on after the trap inside guarded calls (call_guard.h's
  // RegisterWarnSites(), done by Load()) and are counted in
  // GuardState::warns.
  std::string WarnPlace(uintptr_t addr) const;
  // What a fault of the object's code was, as "the tree's <what>() ...":
  // a trap at one of its BUG()s is named by the BUG()'s source place ("hit
  // BUG() at kernel/time/ntp.c:301"), any other fault described as usual.
  std::string DescribeFault(const char* what, const vdso::CallFault& f) const;

 private:
  using Places = std::map<uintptr_t, std::string>;
  KernelTime(const vdsolab_kt_api* api, std::shared_ptr<const Places> warns,
             std::shared_ptr<const Places> bugs, std::string object)
      : api_(api),
        warns_(std::move(warns)),
        bugs_(std::move(bugs)),
        object_(std::move(object)) {}
  const vdsolab_kt_api* api_;
  std::shared_ptr<const Places> warns_;
  // BUG() sites by offset into the object (CallFault::address's terms).
  std::shared_ptr<const Places> bugs_;
  std::string object_;  // The object's file name, as CallFault::object.
};

}  // namespace vdsolab::ktime

#endif  // VDSOLAB_KTIME_KERNEL_TIME_H_
