#include "variants/eras/eras.h"

#include <iterator>

#include "common/clockid.h"
#include "variants/eras/era_layouts.h"
#include "variants/eras/era_reader.h"
#include "variants/eras/era_writers.h"
#include "vdso/access.h"

namespace vdsolab::variants {
namespace {

template <class Era, vdso::VdsoAccess A>
std::optional<ClockResult> ReadEra(A& access, const uint8_t* page,
                                   ClockId clock) {
  return eras::ClockGettime<Era>(access, page, clock);
}

template <vdso::VdsoAccess A>
std::optional<ClockResult> Read615(A& access, const uint8_t* page,
                                   ClockId clock) {
  return eras::ClockGettime615(access, page, clock);
}

// The fields every era shares.
Variant* NewEra(std::string_view name, std::string_view provenance,
                std::string_view summary, const Layout& layout,
                BuildUpdateFn build_update, Semantics semantics) {
  auto* v = new Variant;
  v->name = name;
  v->provenance = provenance;
  v->summary = summary;
  v->layout = &layout;
  v->build_update = build_update;
  v->vdso_clocks.assign(std::begin(kVdsoServedClocks),
                        std::end(kVdsoServedClocks));
  v->semantics = semantics;
  v->counter_read = vdso::CounterRead::kOrdered;  // rdtsc_ordered(), all eras.
  return v;
}

Semantics MakeSemantics(CounterSemantics counter, bool overflow_protected,
                        bool coarse_from_coarse_nsec) {
  Semantics s;
  s.counter = counter;
  s.overflow_protected = overflow_protected;
  s.coarse_from_coarse_nsec = coarse_from_coarse_nsec;
  return s;
}

template <class Era>
void SetReader(Variant* v) {
  v->make_sim_reader = MakeStateless<ReadEra<Era, vdso::HookedAccess>,
                                     ReadEra<Era, vdso::QuietAccess>>;
  v->native_loop = NativeLoop<ReadEra<Era, vdso::NativeAccess>>;
}

const Variant* Era53() {
  static const Variant* variant = [] {
    Variant* v = NewEra(
        "5.3",
        "Linux 5.3: lib/vdso/gettimeofday.c as released (after \"lib/vdso: "
        "Make delta calculation work correctly\", Thomas Gleixner, June "
        "2019), arch/x86/include/asm/vdso/gettimeofday.h and "
        "kernel/time/vsyscall.c of 5.3; x86 DECLARE_VVAR(128, struct "
        "vdso_data, _vdso_data)",
        "first generic x86 vDSO: raw rdtsc_ordered(), (s64)cycles < 0 -> "
        "syscall, cycles > last ? delta * mult : 0 (wraps past max_cycles)",
        eras::VdsoDataLayout53(), eras::BuildUpdateVsyscall53,
        MakeSemantics(CounterSemantics::kClampToLast, false, false));
    SetReader<eras::Era53>(v);
    v->build_timens_page = eras::BuildTimensPage53;
    return v;
  }();
  return variant;
}

const Variant* Era61() {
  static const Variant* variant = [] {
    Variant* v =
        NewEra("6.1",
               "Linux 6.1 (Debian linux-source-6.1): lib/vdso/gettimeofday.c, "
               "include/vdso/datapage.h, include/vdso/helpers.h, "
               "arch/x86/include/asm/vdso/gettimeofday.h, "
               "arch/x86/include/asm/vvar.h, kernel/time/vsyscall.c",
               "6.1 x86 vDSO: open-coded timens check, vdso_cycles_ok() first, "
               "cycles > last clamp (wraps past max_cycles)",
               eras::VdsoDataLayout53(), eras::BuildUpdateVsyscall61,
               MakeSemantics(CounterSemantics::kClampToLast, false, false));
    SetReader<eras::Era61>(v);
    v->build_timens_page = eras::BuildTimensPage53;
    return v;
  }();
  return variant;
}

const Variant* Era65() {
  static const Variant* variant = [] {
    Variant* v = NewEra(
        "6.5",
        "Linux 6.5: the 6.1 generic code and writer with \"x86/vdso: Fix "
        "gettimeofday masking\" (Peter Zijlstra, 2023, 77750f78b0b3; "
        "posted as [PATCH v2 08/13], May 2023)",
        "6.5-6.9 x86 vDSO: rdtsc_ordered() & S64_MAX, delta & S64_MAX, "
        "bit 62 = negative motion (base time); wraps past max_cycles",
        eras::VdsoDataLayout53(), eras::BuildUpdateVsyscall61,
        MakeSemantics(CounterSemantics::kMasked63, false, false));
    SetReader<eras::Era65>(v);
    v->build_timens_page = eras::BuildTimensPage53;
    return v;
  }();
  return variant;
}

const Variant* Era610() {
  static const Variant* variant = [] {
    Variant* v = NewEra(
        "6.10",
        "Linux 6.10: \"vdso: Add CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT\" and "
        "\"x86/vdso: Make delta calculation overflow safe\" (Adrian Hunter, "
        "2024): max_cycles in struct vdso_data, x86 vdso_calc_ns()",
        "6.10-6.12 x86 vDSO: max_cycles slow path (128-bit multiply), "
        "bit-62 negative-motion clamp, 248-byte vdso_data at vvar+128",
        eras::VdsoDataLayout610(), eras::BuildUpdateVsyscall610,
        MakeSemantics(CounterSemantics::kMasked63, true, false));
    SetReader<eras::Era610>(v);
    v->build_timens_page = eras::BuildTimensPage610;
    return v;
  }();
  return variant;
}

const Variant* Era615() {
  static const Variant* variant = [] {
    Variant* v = NewEra(
        "6.15",
        "Linux 6.15: \"vdso: Rework struct vdso_time_data and introduce "
        "struct vdso_clock\" (Anna-Maria Behnsen, 2025) and coarse_nsec "
        "(\"timekeeping: Prevent coarse clocks going backwards\"), before "
        "the 6.17 POSIX aux clocks",
        "6.15/6.16 x86 vDSO: the 6.17 reader without aux clocks; "
        "struct vdso_clock records, hrtimer_res at 472",
        eras::VdsoTimeDataLayout615(), eras::BuildUpdateVsyscall615,
        MakeSemantics(CounterSemantics::kMasked63, true, true));
    v->make_sim_reader =
        MakeStateless<Read615<vdso::HookedAccess>, Read615<vdso::QuietAccess>>;
    v->native_loop = NativeLoop<Read615<vdso::NativeAccess>>;
    v->build_timens_page = eras::BuildTimensPage615;
    return v;
  }();
  return variant;
}

}  // namespace

std::vector<const Variant*> EraVariants() {
  return {Era53(), Era61(), Era65(), Era610(), Era615()};
}

}  // namespace vdsolab::variants
