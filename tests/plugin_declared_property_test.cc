// A version-2 plugin record's era fields (variants/plugin/vdsolab_plugin.h)
// over every value each can hold: the loader accepts exactly the values
// the ABI defines (enum vdsolab_counter_semantics, the VDSOLAB_SEM_* flags,
// enum vdsolab_counter_read, kernel clock ids 0..15), refuses the rest
// naming the field, and maps each accepted value to the semantics the
// header documents. The expectations are the header's lists, written out
// here, not the loader's code.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "common/clockid.h"
#include "variants/plugin/internal/declared.h"
#include "variants/plugin/vdsolab_plugin.h"
#include "variants/registry.h"
#include "variants/variant.h"

namespace vdsolab::variants {
namespace {

using plugin_internal::DeclaredEra;

// A u32 field: one of `defined` most of the time, else an edge or any.
rc::Gen<uint32_t> GenField(std::vector<uint32_t> defined) {
  return rc::gen::weightedOneOf<uint32_t>(
      {{4, rc::gen::elementOf(defined)},
       {2,
        rc::gen::element<uint32_t>(2, 3, 4, 7, 8, 15, 0x80000000u, UINT32_MAX)},
       {1, rc::gen::arbitrary<uint32_t>()}});
}

RC_GTEST_PROP(PluginDeclared, AcceptsExactlyWhatTheAbiDefines, ()) {
  DeclaredEra d;
  d.counter_semantics = *GenField({0, 1});
  d.semantics_flags =
      *GenField({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  d.counter_read = *GenField({0, 1, 2});
  const std::vector<int32_t> clocks =
      *rc::gen::container<std::vector<int32_t>>(rc::gen::weightedOneOf<int32_t>(
          {{6, rc::gen::inRange<int32_t>(0, kMaxClocks)},
           {1, rc::gen::element<int32_t>(-1, kMaxClocks, kMaxClocks + 1,
                                         INT32_MIN, INT32_MAX)}}));
  d.clocks = clocks.data();
  d.n_clocks = static_cast<uint32_t>(clocks.size());

  const bool semantics_ok =
      d.counter_semantics == VDSOLAB_COUNTER_MASKED63 ||
      d.counter_semantics == VDSOLAB_COUNTER_CLAMP_TO_LAST;
  const bool flags_ok = (d.semantics_flags & ~0xfu) == 0;
  const bool read_ok = d.counter_read == VDSOLAB_RDTSC_ORDERED ||
                       d.counter_read == VDSOLAB_RDTSCP ||
                       d.counter_read == VDSOLAB_RDTSC;
  bool clocks_ok = true;
  for (int32_t c : clocks) clocks_ok &= c >= 0 && c < kMaxClocks;
  RC_CLASSIFY(semantics_ok && flags_ok && read_ok && clocks_ok, "accepted");
  RC_CLASSIFY(d.counter_semantics == VDSOLAB_COUNTER_CLAMP_TO_LAST,
              "clamp to last");

  const absl::Status s = plugin_internal::CheckDeclared(d, "p.so");
  RC_ASSERT(s.ok() == (semantics_ok && flags_ok && read_ok && clocks_ok));
  if (!s.ok()) {
    // The first bad field, in the record's order, is the one named.
    const std::string msg(s.message());
    RC_ASSERT(msg.find("--variant-so=p.so: ") == 0);
    const char* field = !semantics_ok ? "counter_semantics"
                        : !flags_ok   ? "semantics_flags"
                        : !read_ok    ? "counter_read"
                                      : "vdso_clocks[";
    RC_ASSERT(msg.find(field) != std::string::npos);
    return;
  }
  const Semantics sem = plugin_internal::DeclaredSemantics(d);
  RC_ASSERT(sem.counter == (d.counter_semantics == 1
                                ? CounterSemantics::kClampToLast
                                : CounterSemantics::kMasked63));
  RC_ASSERT(sem.overflow_protected == ((d.semantics_flags & 1) != 0));
  RC_ASSERT(sem.coarse_from_coarse_nsec == ((d.semantics_flags & 2) != 0));
  const vdso::CounterRead read = plugin_internal::DeclaredCounterRead(d);
  RC_ASSERT(read == (d.counter_read == 1   ? vdso::CounterRead::kRdtscp
                     : d.counter_read == 2 ? vdso::CounterRead::kPlain
                                           : vdso::CounterRead::kOrdered));
}

// The variant a plugin becomes, on every built-in layout a plugin may read:
// the base's layout and writers (the namespace page's too), its
// time-namespace support or, declared in version 2, the reader's own where
// the layout has a namespace page, the record's name,
// text and clocks, the era the record declares (version 2) or the base's
// (version 1), and never the base's own clocks or their syscall (a
// plugin on trace-clock's layout answers CLOCK_TRACE with its own code,
// judged as a kernel clock, not by trace-clock's definition of it).
RC_GTEST_PROP(PluginDeclared, PluginVariantsTakeOnlyTheLayoutFromTheirBase,
              ()) {
  std::vector<const Variant*> bases;
  for (const Variant* v : AllVariants()) {
    if (!v->own_clocks_only) bases.push_back(v);
  }
  const Variant& base = **rc::gen::elementOf(bases);
  const std::vector<int32_t> clocks = *rc::gen::container<std::vector<int32_t>>(
      rc::gen::inRange<int32_t>(0, kMaxClocks));
  plugin_internal::DeclaredRecord r;
  r.name = "p";
  r.provenance = *rc::gen::arbitrary<bool>() ? "the thread" : nullptr;
  r.summary = *rc::gen::arbitrary<bool>() ? "what it is" : nullptr;
  r.declares_semantics = *rc::gen::arbitrary<bool>();
  r.era.counter_semantics = *rc::gen::inRange<uint32_t>(0, 2);
  r.era.semantics_flags = *rc::gen::inRange<uint32_t>(0, 16);
  r.era.counter_read = *rc::gen::inRange<uint32_t>(0, 3);
  r.era.clocks = clocks.data();
  r.era.n_clocks = static_cast<uint32_t>(clocks.size());
  RC_TAG(std::string(base.name));
  RC_CLASSIFY(!base.own_clocks.empty(), "base has own clocks");
  const Variant v = plugin_internal::PluginVariantFrom(base, r);
  RC_ASSERT(v.name == "p");
  RC_ASSERT(v.provenance ==
            (r.provenance != nullptr ? r.provenance : "(plugin)"));
  RC_ASSERT(v.summary == (r.summary != nullptr ? r.summary : ""));
  RC_ASSERT(v.layout == base.layout);
  RC_ASSERT(v.build_update == base.build_update);
  RC_ASSERT(v.build_aux_update == base.build_aux_update);
  RC_ASSERT(v.build_timens_page == base.build_timens_page);
  const bool declares_timens =
      r.declares_semantics &&
      (r.era.semantics_flags & VDSOLAB_SEM_TIME_NAMESPACE) != 0;
  RC_CLASSIFY(
      declares_timens && base.build_timens_page != nullptr && !base.timens,
      "namespace path declared on a layout whose reader lacks it");
  RC_ASSERT(v.timens == (base.timens || (declares_timens &&
                                         base.build_timens_page != nullptr)));
  // Held to kvm-clock's fast path only where declared (never in v1).
  RC_ASSERT(v.pvclock == (r.declares_semantics &&
                          (r.era.semantics_flags & VDSOLAB_SEM_PVCLOCK) != 0));
  RC_ASSERT(v.vdso_clocks ==
            std::vector<ClockId>(clocks.begin(), clocks.end()));
  RC_ASSERT(v.own_clocks.empty());
  RC_ASSERT(v.syscall == nullptr);
  const Semantics want_sem = r.declares_semantics
                                 ? plugin_internal::DeclaredSemantics(r.era)
                                 : base.semantics;
  RC_ASSERT(v.semantics.counter == want_sem.counter);
  RC_ASSERT(v.semantics.overflow_protected == want_sem.overflow_protected);
  RC_ASSERT(v.semantics.coarse_from_coarse_nsec ==
            want_sem.coarse_from_coarse_nsec);
  RC_ASSERT(v.counter_read == (r.declares_semantics
                                   ? plugin_internal::DeclaredCounterRead(r.era)
                                   : base.counter_read));
}

}  // namespace
}  // namespace vdsolab::variants
