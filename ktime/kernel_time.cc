#include "ktime/kernel_time.h"

#include <dlfcn.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "variants/plugin/call_guard.h"

namespace vdsolab::ktime {
namespace {

// A WARN()'s file as the tree names it: __FILE__ is the path the build
// compiled, under a scratch directory; from its kernel/, lib/, arch/ or
// include/ on.
std::string RelativeSource(const char* file) {
  if (file == nullptr) return "?";
  const std::string f = file;
  for (const char* top : {"/kernel/", "/lib/", "/arch/", "/include/"}) {
    const size_t at = f.rfind(top);
    if (at != std::string::npos) return f.substr(at + 1);
  }
  return f;
}

}  // namespace

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
  // Its WARN()s go on after their traps inside guarded calls, as in the
  // kernel.
  const unsigned n = api->warn_sites(nullptr, nullptr, nullptr, 0);
  std::vector<unsigned long> addr(n);
  std::vector<const char*> file(n);
  std::vector<unsigned> line(n);
  api->warn_sites(addr.data(), file.data(), line.data(), n);
  auto warns = std::make_shared<std::map<uintptr_t, std::string>>();
  for (unsigned i = 0; i < n; ++i) {
    (*warns)[addr[i]] =
        absl::StrFormat("%s:%d", RelativeSource(file[i]), line[i]);
  }
  variants::RegisterWarnSites(std::vector<uintptr_t>(addr.begin(), addr.end()));
  return KernelTime(api, std::move(warns));
}

std::string KernelTime::WarnPlace(uintptr_t addr) const {
  auto it = warns_->find(addr);
  return it == warns_->end() ? "" : it->second;
}

}  // namespace vdsolab::ktime
