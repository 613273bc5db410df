#include "ktime/kernel_time.h"

#include <dlfcn.h>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace vdsolab::ktime {

absl::StatusOr<KernelTime> KernelTime::Load(const std::string& so_path) {
  // RTLD_LOCAL: the kernel's symbol names stay out of the global scope
  // (the object also exports only vdsolab_ktime_api).
  void* h = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: cannot load (%s)", so_path, dlerror()));
  }
  using Entry = const vdsolab_kt_api* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(h, "vdsolab_ktime_api"));
  if (entry == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: no vdsolab_ktime_api", so_path));
  }
  const vdsolab_kt_api* api = entry();
  if (api == nullptr || api->abi_version != VDSOLAB_KT_ABI_VERSION) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: ktime ABI version %d, want %d", so_path,
        api == nullptr ? -1 : api->abi_version, VDSOLAB_KT_ABI_VERSION));
  }
  return KernelTime(api);
}

}  // namespace vdsolab::ktime
