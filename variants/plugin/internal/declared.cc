#include "variants/plugin/internal/declared.h"

#include "absl/strings/str_format.h"
#include "common/clockid.h"
#include "variants/plugin/vdsolab_plugin.h"

namespace vdsolab::variants::plugin_internal {
namespace {

absl::Status Bad(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrFormat("--variant-so=%s: %s", path, what));
}

}  // namespace

// The v2 fields in range: every enum and flag the ABI defines, and clock
// ids the kernel has.
absl::Status CheckDeclared(const DeclaredEra& r, const std::string& path) {
  if (r.counter_semantics != VDSOLAB_COUNTER_MASKED63 &&
      r.counter_semantics != VDSOLAB_COUNTER_CLAMP_TO_LAST) {
    return Bad(path, absl::StrFormat("counter_semantics %d is not a "
                                     "vdsolab_counter_semantics value",
                                     r.counter_semantics));
  }
  constexpr uint32_t kKnownFlags =
      VDSOLAB_SEM_OVERFLOW_PROTECTED | VDSOLAB_SEM_COARSE_FROM_COARSE_NSEC |
      VDSOLAB_SEM_TIME_NAMESPACE | VDSOLAB_SEM_PVCLOCK;
  if ((r.semantics_flags & ~kKnownFlags) != 0) {
    return Bad(path, absl::StrFormat("semantics_flags %#x has bits no "
                                     "VDSOLAB_SEM_* flag defines (%#x)",
                                     r.semantics_flags,
                                     r.semantics_flags & ~kKnownFlags));
  }
  if (r.counter_read != VDSOLAB_RDTSC_ORDERED &&
      r.counter_read != VDSOLAB_RDTSCP && r.counter_read != VDSOLAB_RDTSC) {
    return Bad(path, absl::StrFormat("counter_read %d is not a "
                                     "vdsolab_counter_read value",
                                     r.counter_read));
  }
  for (uint32_t i = 0; i < r.n_clocks; ++i) {
    if (r.clocks[i] < 0 || r.clocks[i] >= kMaxClocks) {
      return Bad(path, absl::StrFormat("vdso_clocks[%d] = %d is not a kernel "
                                       "clock id (0..%d)",
                                       i, r.clocks[i], kMaxClocks - 1));
    }
  }
  return absl::OkStatus();
}

Semantics DeclaredSemantics(const DeclaredEra& r) {
  Semantics s;
  s.counter = r.counter_semantics == VDSOLAB_COUNTER_CLAMP_TO_LAST
                  ? CounterSemantics::kClampToLast
                  : CounterSemantics::kMasked63;
  s.overflow_protected =
      (r.semantics_flags & VDSOLAB_SEM_OVERFLOW_PROTECTED) != 0;
  s.coarse_from_coarse_nsec =
      (r.semantics_flags & VDSOLAB_SEM_COARSE_FROM_COARSE_NSEC) != 0;
  return s;
}

vdso::CounterRead DeclaredCounterRead(const DeclaredEra& r) {
  switch (r.counter_read) {
    case VDSOLAB_RDTSCP:
      return vdso::CounterRead::kRdtscp;
    case VDSOLAB_RDTSC:
      return vdso::CounterRead::kPlain;
    default:
      return vdso::CounterRead::kOrdered;
  }
}

Variant PluginVariantFrom(const Variant& base, const DeclaredRecord& r) {
  Variant v(base);
  v.name = r.name;
  v.provenance = r.provenance != nullptr ? r.provenance : "(plugin)";
  v.summary = r.summary != nullptr ? r.summary : "";
  v.vdso_clocks.assign(r.era.clocks, r.era.clocks + r.era.n_clocks);
  v.own_clocks.clear();
  v.syscall = nullptr;
  // Only a declared pvclock path is held to the stable bit's fast path; a
  // version-1 plugin may serve the TSC alone.
  v.pvclock = r.declares_semantics &&
              (r.era.semantics_flags & VDSOLAB_SEM_PVCLOCK) != 0;
  // Version 2 declares what version 1 borrowed from the layout's variant.
  if (r.declares_semantics) {
    v.semantics = DeclaredSemantics(r.era);
    v.counter_read = DeclaredCounterRead(r.era);
    // A reader that follows TIMENS runs in a namespace where the layout
    // has a namespace page to give it.
    if ((r.era.semantics_flags & VDSOLAB_SEM_TIME_NAMESPACE) != 0 &&
        base.build_timens_page != nullptr) {
      v.timens = true;
    }
  }
  return v;
}

}  // namespace vdsolab::variants::plugin_internal
