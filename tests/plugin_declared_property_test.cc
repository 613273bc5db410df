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

namespace vdsolab::variants {
namespace {

using plugin_internal::DeclaredEra;

// A u32 field: one of `defined` most of the time, else an edge or any.
rc::Gen<uint32_t> GenField(std::vector<uint32_t> defined) {
  return rc::gen::weightedOneOf<uint32_t>(
      {{4, rc::gen::elementOf(defined)},
       {2, rc::gen::element<uint32_t>(2, 3, 4, 7, 8, 0x80000000u, UINT32_MAX)},
       {1, rc::gen::arbitrary<uint32_t>()}});
}

RC_GTEST_PROP(PluginDeclared, AcceptsExactlyWhatTheAbiDefines, ()) {
  DeclaredEra d;
  d.counter_semantics = *GenField({0, 1});
  d.semantics_flags = *GenField({0, 1, 2, 3});
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
  const bool flags_ok = (d.semantics_flags & ~0x3u) == 0;
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

}  // namespace
}  // namespace vdsolab::variants
