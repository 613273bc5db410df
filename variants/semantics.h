// File: variants/semantics.h
//
// The era facts a variant declares about itself: how its reader treats the
// counter and what its arithmetic can and cannot do. The era oracle
// (variants/era_oracle.h) turns them into the answer a correct reader of
// that era gives, and into the explanations of era behaviour that differs
// from the modern kernel. Built-in variants set them in their records;
// plugins of ABI version 2 declare them (variants/plugin/vdsolab_plugin.h).

#ifndef VDSOLAB_VARIANTS_SEMANTICS_H_
#define VDSOLAB_VARIANTS_SEMANTICS_H_

namespace vdsolab::variants {

// How the reader treats the counter, for the oracle's expected answer.
enum class CounterSemantics {
  // 6.5+: rdtsc & S64_MAX; a delta with bit 62 set is negative motion
  // (clamped to the base); the syscall's answer at that counter otherwise.
  kMasked63,
  // 4.x-6.4: a counter behind cycle_last is clamped to it; the raw delta
  // otherwise (no masking of the counter).
  kClampToLast,
};

struct Semantics {
  CounterSemantics counter = CounterSemantics::kMasked63;
  // 6.10+: delta * mult cannot overflow (max_cycles slow path). Without it
  // a delta past max_cycles wraps in 64 bits (so did the era's syscall).
  bool overflow_protected = true;
  // 6.15+: the coarse clocks come from coarse_nsec. Before, from
  // tkr_mono.xtime_nsec >> shift at the last update.
  bool coarse_from_coarse_nsec = true;

  friend bool operator==(const Semantics&, const Semantics&) = default;
};

// The semantics of the upstream x86 vDSO of a kernel version (major,
// minor): what the built-in eras declare, and what a kernel tree of that
// version is judged by.
constexpr Semantics SemanticsOfKernel(int major, int minor) {
  const int v = major * 100 + minor;
  Semantics s;
  s.counter =
      v >= 605 ? CounterSemantics::kMasked63 : CounterSemantics::kClampToLast;
  s.overflow_protected = v >= 610;
  s.coarse_from_coarse_nsec = v >= 615;
  return s;
}

}  // namespace vdsolab::variants

#endif  // VDSOLAB_VARIANTS_SEMANTICS_H_
