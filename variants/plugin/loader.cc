#include "variants/plugin/loader.h"

#include <dlfcn.h>

#include <memory>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "variants/plugin/call_guard.h"
#include "variants/plugin/vdsolab_plugin.h"
#include "variants/registry.h"

namespace vdsolab::variants {
namespace {

// The C callbacks, bound to an access policy. Each forwards to the policy
// so the simulation's hooks see every load, counter read and retry.
// What the callbacks see: the access policy, and the page bounds (a load
// outside the vvar area is the plugin's bug; it reads 0 and the call
// answers -EFAULT rather than the host reading out of bounds).
template <vdso::VdsoAccess A>
struct Ctx {
  A* access;
  const uint8_t* page;
  bool out_of_bounds = false;
};

// In the simulation, the callbacks are vdsolab's code running for foreign
// code: a fault in them is vdsolab's, and the watchdog waits for them.
template <vdso::VdsoAccess A>
struct HostScopeFor {
  HostCallScope scope;
};
template <>
struct HostScopeFor<vdso::NativeAccess> {};

template <vdso::VdsoAccess A>
struct OpsFor {
  static Ctx<A>& C(void* ctx) { return *static_cast<Ctx<A>*>(ctx); }
  static A& Of(void* ctx) { return *C(ctx).access; }
  static bool InPage(void* ctx, const uint8_t* p, size_t n) {
    const uint8_t* page = C(ctx).page;
    if (p >= page && p + n <= page + vdso::VvarPage::kPages * 4096) {
      return true;
    }
    C(ctx).out_of_bounds = true;
    return false;
  }
  static uint32_t Load32(void* ctx, const uint8_t* p) {
    [[maybe_unused]] HostScopeFor<A> host;
    return InPage(ctx, p, 4) ? Of(ctx).template Load<uint32_t>(p) : 0;
  }
  static uint64_t Load64(void* ctx, const uint8_t* p) {
    [[maybe_unused]] HostScopeFor<A> host;
    return InPage(ctx, p, 8) ? Of(ctx).template Load<uint64_t>(p) : 0;
  }
  static uint64_t ReadCounter(void* ctx, int kind) {
    [[maybe_unused]] HostScopeFor<A> host;
    switch (kind) {
      case VDSOLAB_RDTSCP:
        return Of(ctx).ReadTscp();
      case VDSOLAB_RDTSC:
        return Of(ctx).ReadTscPlain();
      default:
        return Of(ctx).ReadTsc();
    }
  }
  static void Rmb(void* ctx) { Of(ctx).Rmb(); }
  static void CpuRelax(void* ctx) { Of(ctx).CpuRelax(); }
  static int MayRetry(void* ctx) {
    [[maybe_unused]] HostScopeFor<A> host;
    return Of(ctx).MayRetry() ? 1 : 0;
  }
  static int32_t Fallback(void* ctx, int32_t clock, vdsolab_timespec* ts) {
    [[maybe_unused]] HostScopeFor<A> host;
    const ClockResult r = Of(ctx).Fallback(clock);
    if (r.ret == 0) *ts = vdsolab_timespec{r.ts.tv_sec, r.ts.tv_nsec};
    return r.ret;
  }
  static vdsolab_ops Make(Ctx<A>* ctx) {
    return vdsolab_ops{ctx,      Load32,   Load64,  ReadCounter, Rmb, CpuRelax,
                       MayRetry, Fallback, nullptr, 0,           0};
  }
};

constexpr int32_t kEfault = 14;

template <vdso::VdsoAccess A>
std::optional<ClockResult> CallPlugin(const vdsolab_plugin* plugin, A& access,
                                      const uint8_t* page, ClockId clock) {
  Ctx<A> ctx{&access, page};
  const vdsolab_ops ops = OpsFor<A>::Make(&ctx);
  vdsolab_timespec ts{0, 0};
  int32_t ret = 0;
  if constexpr (std::is_same_v<A, vdso::NativeAccess>) {
    ret = plugin->clock_gettime(&ops, page, clock, &ts);
  } else {
    // In the simulation a crash or a spin is a finding, not vdsolab's end.
    if (std::optional<vdso::CallFault> fault = RunContained(
            [&] { ret = plugin->clock_gettime(&ops, page, clock, &ts); })) {
      access.Fault(*fault);
      return std::nullopt;
    }
  }
  if (ctx.out_of_bounds) return ClockResult::Error(-kEfault);
  if (ret == VDSOLAB_ABANDONED) return std::nullopt;
  if (ret != 0) return ClockResult::Error(ret);
  return ClockResult::Ok(Timespec64{ts.tv_sec, ts.tv_nsec});
}

class PluginSimReader final : public SimReader {
 public:
  explicit PluginSimReader(const vdsolab_plugin* plugin) : plugin_(plugin) {}
  std::optional<ClockResult> Call(vdso::HookedAccess& access,
                                  const uint8_t* page, ClockId clock) override {
    return CallPlugin(plugin_, access, page, clock);
  }

 private:
  const vdsolab_plugin* plugin_;
};

// Variant records hold plain function pointers; plugins are few and live
// for the process, so each gets a slot.
constexpr int kMaxPlugins = 16;
const vdsolab_plugin* g_plugins[kMaxPlugins];
int g_loaded = 0;

template <int I>
std::unique_ptr<SimReader> MakeReader() {
  return std::make_unique<PluginSimReader>(g_plugins[I]);
}
template <int I>
uint64_t Native(const uint8_t* page, ClockId clock, uint64_t iterations) {
  return RunNativeLoop(iterations, [page, clock](vdso::NativeAccess& access) {
    return CallPlugin(g_plugins[I], access, page, clock);
  });
}

template <int... I>
constexpr auto MakeTable(std::integer_sequence<int, I...>) {
  struct Slot {
    std::unique_ptr<SimReader> (*make)();
    NativeLoopFn native;
  };
  return std::array<Slot, sizeof...(I)>{Slot{MakeReader<I>, Native<I>}...};
}
const auto kSlots = MakeTable(std::make_integer_sequence<int, kMaxPlugins>{});

// A refused plugin is unloaded again.
absl::Status Refuse(void* handle, absl::Status why) {
  dlclose(handle);
  return why;
}

absl::Status Bad(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrFormat("--variant-so=%s: %s", path, what));
}

}  // namespace

absl::StatusOr<const Variant*> LoadPluginVariant(const std::string& path) {
  if (g_loaded == kMaxPlugins) {
    return Bad(path, absl::StrFormat("at most %d plugins", kMaxPlugins));
  }
  // A name without a slash would make dlopen() search the library path: the
  // user means the file here.
  const std::string file =
      path.find('/') == std::string::npos ? "./" + path : path;
  // RTLD_NOW: an unresolved symbol fails here, not mid-run.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Bad(path, why != nullptr ? why : "dlopen failed");
  }
  using Entry = const vdsolab_plugin* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "vdsolab_plugin_v1"));
  if (entry == nullptr) {
    return Refuse(handle,
                  Bad(path,
                      "no vdsolab_plugin_v1 symbol: not a vdsolab plugin (see "
                      "docs/plugins.md)"));
  }
  const vdsolab_plugin* p = entry();
  if (p == nullptr)
    return Refuse(handle, Bad(path, "vdsolab_plugin_v1() returned NULL"));
  if (p->abi_version != VDSOLAB_PLUGIN_ABI_VERSION) {
    return Refuse(
        handle,
        Bad(path, absl::StrFormat("plugin ABI version %d; vdsolab speaks %d",
                                  p->abi_version, VDSOLAB_PLUGIN_ABI_VERSION)));
  }
  if (p->name == nullptr || p->name[0] == '\0')
    return Refuse(handle, Bad(path, "no name"));
  if (p->clock_gettime == nullptr)
    return Refuse(handle, Bad(path, "no clock_gettime"));
  if (p->layout == nullptr) return Refuse(handle, Bad(path, "no layout"));
  if (p->n_vdso_clocks != 0 && p->vdso_clocks == nullptr) {
    return Refuse(handle, Bad(path, "n_vdso_clocks without vdso_clocks"));
  }
  absl::StatusOr<const Variant*> base = FindVariant(p->layout);
  if (!base.ok()) {
    return Refuse(handle, Bad(path, absl::StrFormat("layout: %s",
                                                    base.status().message())));
  }
  if ((*base)->own_clocks_only) {
    return Refuse(
        handle,
        Bad(path, absl::StrFormat("layout \"%s\" is a user-space clock's, "
                                  "not a vDSO page",
                                  p->layout)));
  }
  auto* v = new Variant(**base);  // Lives as long as the process.
  v->name = p->name;
  v->provenance = p->provenance != nullptr ? p->provenance : "(plugin)";
  v->summary = p->summary != nullptr ? p->summary : "";
  v->vdso_clocks.assign(p->vdso_clocks, p->vdso_clocks + p->n_vdso_clocks);
  v->own_clocks.clear();
  v->syscall = nullptr;
  g_plugins[g_loaded] = p;
  v->make_sim_reader = kSlots[static_cast<size_t>(g_loaded)].make;
  v->native_loop = kSlots[static_cast<size_t>(g_loaded)].native;
  if (absl::Status s = RegisterVariant(v); !s.ok()) {
    delete v;
    return Refuse(handle, Bad(path, std::string(s.message())));
  }
  ++g_loaded;
  return v;
}

}  // namespace vdsolab::variants
