#include "ktime/kernel_time.h"

#include <dlfcn.h>
#include <signal.h>

#include <cstdint>
#include <cstring>
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
  // Already relative (the build maps the tree's path away: ktime.cc's
  // -fmacro-prefix-map).
  for (const char* top : {"kernel/", "lib/", "arch/", "include/"}) {
    if (f.rfind(top, 0) == 0) return f;
  }
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
  // kernel; its BUG()s stay crashes, named by their source place.
  using Sites = unsigned (*)(unsigned long*, const char**, unsigned*, unsigned);
  auto places = [](Sites sites, uintptr_t base) {
    const unsigned n = sites(nullptr, nullptr, nullptr, 0);
    std::vector<unsigned long> addr(n);
    std::vector<const char*> file(n);
    std::vector<unsigned> line(n);
    sites(addr.data(), file.data(), line.data(), n);
    auto out = std::make_shared<Places>();
    for (unsigned i = 0; i < n; ++i) {
      (*out)[addr[i] - base] =
          absl::StrFormat("%s:%d", RelativeSource(file[i]), line[i]);
    }
    return out;
  };
  std::shared_ptr<const Places> warns = places(api->warn_sites, 0);
  std::vector<uintptr_t> warn_addrs;
  for (const auto& [addr, place] : *warns) warn_addrs.push_back(addr);
  variants::RegisterWarnSites(warn_addrs);
  // A fault names its place as an offset into the object (CallFault).
  Dl_info in{};
  uintptr_t base = 0;
  std::string object;
  if (dladdr(reinterpret_cast<const void*>(api), &in) != 0 &&
      in.dli_fname != nullptr) {
    base = reinterpret_cast<uintptr_t>(in.dli_fbase);
    const char* slash = strrchr(in.dli_fname, '/');
    object = slash != nullptr ? slash + 1 : in.dli_fname;
  }
  return KernelTime(api, std::move(warns), places(api->bug_sites, base),
                    std::move(object));
}

std::string KernelTime::WarnPlace(uintptr_t addr) const {
  auto it = warns_->find(addr);
  return it == warns_->end() ? "" : it->second;
}

std::string KernelTime::DescribeFault(const char* what,
                                      const vdso::CallFault& f) const {
  if (f.kind == vdso::CallFault::Kind::kCrash && f.signal == SIGILL &&
      f.has_address && f.object != nullptr && object_ == f.object) {
    if (auto it = bugs_->find(f.address); it != bugs_->end()) {
      return absl::StrFormat("the tree's %s() hit BUG() at %s (SIGILL)", what,
                             it->second);
    }
  }
  return absl::StrFormat("the tree's %s() %s", what, vdso::DescribeFault(f));
}

}  // namespace vdsolab::ktime
