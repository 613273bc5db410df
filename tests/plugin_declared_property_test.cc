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

// A version-4 record's own clocks: accepted exactly when every field is
// what the header allows (ids 32 and up, unique; names of letters, digits
// and . _ + @ -, 1..64 bytes, unique, no kernel clock's; kind SAME_AS with
// an hres clock or RAW and no flags, or MEASURED with at most
// VDSOLAB_OWN_NOT_MONOTONIC), and then defined as the header says.
RC_GTEST_PROP(PluginDeclared, OwnClocksAcceptedExactlyAsTheHeaderSays, ()) {
  const auto gen_clock = rc::gen::build<plugin_internal::OwnClockDecl>(
      rc::gen::set(&plugin_internal::OwnClockDecl::id,
                   rc::gen::weightedOneOf<int32_t>(
                       {{6, rc::gen::inRange<int32_t>(32, 100000)},
                        {1, rc::gen::element<int32_t>(-1, 0, 1, 16, 23, 31,
                                                      INT32_MIN, INT32_MAX)}})),
      rc::gen::set(&plugin_internal::OwnClockDecl::name,
                   rc::gen::weightedOneOf<std::string>(
                       {{6, rc::gen::map(rc::gen::inRange(0, 100000),
                                         [](int n) {
                                           return "my.clock-" +
                                                  std::to_string(n) + "@x+y";
                                         })},
                        {1, rc::gen::element<std::string>(
                                "", "CLOCK_MONOTONIC", "MONOTONIC_RAW",
                                "CLOCK_TAI", "a b", "x\x01",
                                std::string(65, 'a'))}})),
      rc::gen::set(
          &plugin_internal::OwnClockDecl::kind,
          rc::gen::weightedOneOf<uint32_t>(
              {{6, GenField({VDSOLAB_OWN_SAME_AS, VDSOLAB_OWN_MEASURED})},
               // A record left zeroed.
               {1, rc::gen::just<uint32_t>(0)}})),
      rc::gen::set(
          &plugin_internal::OwnClockDecl::same_as,
          rc::gen::weightedOneOf<int32_t>(
              {{4, rc::gen::element<int32_t>(0, 1, 4, 7, 11)},
               {1, rc::gen::element<int32_t>(-1, 2, 3, 5, 6, 8, 16, 32)}})),
      rc::gen::set(&plugin_internal::OwnClockDecl::flags,
                   GenField({0, VDSOLAB_OWN_NOT_MONOTONIC})));
  // Mostly a few clocks; sometimes more than the 16 allowed.
  const size_t n =
      *rc::gen::weightedOneOf<size_t>({{8, rc::gen::inRange<size_t>(0, 5)},
                                       {1, rc::gen::inRange<size_t>(15, 19)}});
  std::vector<plugin_internal::OwnClockDecl> clocks =
      *rc::gen::container<std::vector<plugin_internal::OwnClockDecl>>(
          n, gen_clock);
  // Sometimes a second clock repeats the first's id or name.
  if (n >= 2) {
    const int repeat = *rc::gen::inRange(0, 8);
    if (repeat == 0) clocks[1].id = clocks[0].id;
    if (repeat == 1) clocks[1].name = clocks[0].name;
    RC_CLASSIFY(repeat < 2, "a repeated id or name");
  }
  bool ok = clocks.size() <= 16;
  for (size_t i = 0; i < clocks.size(); ++i) {
    const plugin_internal::OwnClockDecl& c = clocks[i];
    // The header's rule for names, written out.
    bool name_ok = !c.name.empty() && c.name.size() <= 64;
    for (char ch : c.name) {
      name_ok &= (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                 (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
                 ch == '+' || ch == '@' || ch == '-';
    }
    for (ClockId k = 0; k <= kClockAuxLast; ++k) {
      name_ok &= c.name != ClockName(k) && "CLOCK_" + c.name != ClockName(k);
    }
    bool unique = true;
    for (size_t j = 0; j < i; ++j) {
      unique &= clocks[j].id != c.id && clocks[j].name != c.name;
    }
    const bool same_as_ok = c.same_as == 0 || c.same_as == 1 ||
                            c.same_as == 4 || c.same_as == 7 || c.same_as == 11;
    const bool kind_ok =
        (c.kind == VDSOLAB_OWN_SAME_AS && same_as_ok && c.flags == 0) ||
        (c.kind == VDSOLAB_OWN_MEASURED && c.same_as == 0 &&
         (c.flags & ~VDSOLAB_OWN_NOT_MONOTONIC) == 0);
    ok &= c.id >= 32 && name_ok && unique && kind_ok;
  }
  RC_CLASSIFY(ok, "accepted");
  for (const plugin_internal::OwnClockDecl& c : clocks) {
    RC_CLASSIFY(c.kind == 0, "kind 0 (a zeroed record)");
  }
  RC_CLASSIFY(clocks.size() >= 2, "two or more clocks");
  const absl::Status s = plugin_internal::CheckOwnClocks(clocks, "p.so");
  RC_ASSERT(s.ok() == ok);
  if (!s.ok()) {
    RC_ASSERT(std::string(s.message()).find("--variant-so=p.so: ") == 0);
    return;
  }
  const std::vector<ClockDef> defs = plugin_internal::OwnClockDefs(clocks);
  RC_ASSERT(defs.size() == clocks.size());
  for (size_t i = 0; i < clocks.size(); ++i) {
    RC_ASSERT(defs[i].id == clocks[i].id);
    RC_ASSERT(defs[i].name == clocks[i].name);
    RC_ASSERT(defs[i].encoding == ClockEncoding::kTimespec);
    if (clocks[i].kind == VDSOLAB_OWN_SAME_AS) {
      RC_TAG("alias");
      RC_ASSERT(defs[i].kind == ClockKind::kVariantSyscall);
      RC_ASSERT(defs[i].same_as == clocks[i].same_as);
    } else {
      RC_TAG(clocks[i].flags != 0 ? "measured, not monotonic" : "measured");
      RC_ASSERT(defs[i].kind == ClockKind::kUserspace);
      RC_ASSERT(defs[i].same_as == -1);
      RC_ASSERT(defs[i].monotonic ==
                ((clocks[i].flags & VDSOLAB_OWN_NOT_MONOTONIC) == 0));
    }
  }
}

}  // namespace
}  // namespace vdsolab::variants
