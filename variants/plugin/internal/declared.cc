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

namespace {

// Why `name` cannot name an own clock; "" if it can.
std::string BadClockName(const std::string& name) {
  constexpr size_t kMaxName = 64;
  if (name.empty()) return "empty";
  if (name.size() > kMaxName) {
    return absl::StrFormat("longer than %d bytes", kMaxName);
  }
  for (char c : name) {
    if (!IsNameChar(c)) {
      return absl::StrFormat(
          "has the character 0x%02x (a clock's name is letters, digits and "
          ". _ + @ -)",
          static_cast<unsigned char>(c));
    }
  }
  // Reports name clocks: an own clock called CLOCK_MONOTONIC would read as
  // the kernel's.
  for (ClockId k = 0; k <= kClockAuxLast; ++k) {
    const std::string kernel = ClockName(k);
    if (name == kernel || "CLOCK_" + name == kernel) {
      return absl::StrFormat("is kernel clock %d's name", k);
    }
  }
  return "";
}

}  // namespace

absl::Status CheckOwnClocks(const std::vector<OwnClockDecl>& clocks,
                            const std::string& path) {
  if (clocks.size() > kMaxOwnClocks) {
    return Bad(path, absl::StrFormat("n_own_clocks %d: more than %d clocks",
                                     clocks.size(), kMaxOwnClocks));
  }
  for (size_t i = 0; i < clocks.size(); ++i) {
    const OwnClockDecl& c = clocks[i];
    const std::string at = absl::StrFormat("own_clocks[%d]", i);
    if (c.id < 32) {
      return Bad(path, absl::StrFormat(
                           "%s.id %d: ids 0 .. 31 are the kernel's clocks "
                           "(and negative ids its CPU-time clocks); an own "
                           "clock's id is 32 or more",
                           at, c.id));
    }
    if (const std::string why = BadClockName(c.name); !why.empty()) {
      return Bad(path, absl::StrFormat("%s.name \"%s\": %s", at, c.name, why));
    }
    for (size_t j = 0; j < i; ++j) {
      if (clocks[j].id == c.id) {
        return Bad(path, absl::StrFormat("%s.id %d: own_clocks[%d]'s too", at,
                                         c.id, j));
      }
      if (clocks[j].name == c.name) {
        return Bad(path, absl::StrFormat("%s.name \"%s\": own_clocks[%d]'s too",
                                         at, c.name, j));
      }
    }
    if (c.kind == VDSOLAB_OWN_SAME_AS) {
      const bool stands_for =
          c.same_as == kClockRealtime || c.same_as == kClockMonotonic ||
          c.same_as == kClockMonotonicRaw || c.same_as == kClockBoottime ||
          c.same_as == kClockTai;
      if (!stands_for) {
        return Bad(path,
                   absl::StrFormat("%s.same_as %d: want a kernel hres clock "
                                   "(REALTIME 0, MONOTONIC 1, MONOTONIC_RAW "
                                   "4, BOOTTIME 7, TAI 11)",
                                   at, c.same_as));
      }
      if (c.flags != 0) {
        return Bad(path, absl::StrFormat(
                             "%s.flags %#x: a VDSOLAB_OWN_SAME_AS clock is "
                             "judged as its kernel clock; want 0",
                             at, c.flags));
      }
    } else if (c.kind == VDSOLAB_OWN_MEASURED) {
      if (c.same_as != 0) {
        return Bad(
            path, absl::StrFormat("%s.same_as %d: a VDSOLAB_OWN_MEASURED clock "
                                  "stands for no kernel clock; want 0 (or kind "
                                  "VDSOLAB_OWN_SAME_AS)",
                                  at, c.same_as));
      }
      if ((c.flags & ~VDSOLAB_OWN_NOT_MONOTONIC) != 0) {
        return Bad(path, absl::StrFormat("%s.flags %#x has bits no "
                                         "VDSOLAB_OWN_* flag defines (%#x)",
                                         at, c.flags,
                                         c.flags & ~VDSOLAB_OWN_NOT_MONOTONIC));
      }
    } else {
      return Bad(path,
                 absl::StrFormat("%s.kind %d: want VDSOLAB_OWN_SAME_AS (1) or "
                                 "VDSOLAB_OWN_MEASURED (2)",
                                 at, c.kind));
    }
  }
  return absl::OkStatus();
}

std::vector<ClockDef> OwnClockDefs(const std::vector<OwnClockDecl>& clocks) {
  std::vector<ClockDef> defs;
  for (const OwnClockDecl& c : clocks) {
    ClockDef d;
    d.id = c.id;
    d.name = c.name;
    if (c.kind == VDSOLAB_OWN_SAME_AS) {
      d.kind = ClockKind::kVariantSyscall;
      d.same_as = c.same_as;
    } else {
      d.kind = ClockKind::kUserspace;
      d.monotonic = (c.flags & VDSOLAB_OWN_NOT_MONOTONIC) == 0;
      d.stateless = true;  // docs/plugins.md: a plugin keeps no state.
    }
    defs.push_back(d);
  }
  return defs;
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
