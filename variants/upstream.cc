#include "variants/upstream.h"

#include "absl/strings/str_format.h"
#include "timekeeper/vsyscall.h"
#include "vdso/datapage.h"
#include "vdso/upstream_reader.h"

namespace vdsolab::variants {
namespace {

// Fields of one struct vdso_clock at `base`, named "prefix.field".
void AddVdsoClock(FieldList& f, const std::string& prefix, uint32_t base) {
  f.Add(prefix + ".seq", base + vdso::kVcSeq, 4, FieldKind::kSeq)
      .Add(prefix + ".clock_mode", base + vdso::kVcClockMode, 4)
      .Add(prefix + ".cycle_last", base + vdso::kVcCycleLast, 8,
           FieldKind::kCycleLast)
      .Add(prefix + ".max_cycles", base + vdso::kVcMaxCycles, 8)
      .Add(prefix + ".mask", base + vdso::kVcMask, 8)
      .Add(prefix + ".mult", base + vdso::kVcMult, 4)
      .Add(prefix + ".shift", base + vdso::kVcShift, 4);
  for (int i = 0; i < kVdsoBases; ++i) {
    const std::string b =
        absl::StrFormat("%s.basetime[%s]", prefix, ClockName(i));
    f.Add(b + ".sec", base + vdso::VcBasetimeSec(i), 8)
        .Add(b + ".nsec", base + vdso::VcBasetimeNsec(i), 8);
  }
}

Layout MakeUpstreamLayout() {
  FieldList f;
  for (int cs = 0; cs < vdso::kCsBases; ++cs) {
    AddVdsoClock(f, absl::StrFormat("clock_data[%d]", cs),
                 vdso::ClockDataOffset(cs));
  }
  for (int i = 0; i < kMaxAuxClocks; ++i) {
    AddVdsoClock(f, absl::StrFormat("aux_clock_data[%d]", i),
                 vdso::AuxClockDataOffset(i));
  }
  f.Add("tz_minuteswest", vdso::kTzMinuteswest, 4)
      .Add("tz_dsttime", vdso::kTzDsttime, 4)
      .Add("hrtimer_res", vdso::kHrtimerRes, 4);
  f.AddPvclockPage();
  return Layout("6.17+ vdso_time_data",
                "struct vdso_time_data with struct vdso_clock records "
                "(max_cycles) and aux clock records, at the start of the "
                "time page",
                f.Take());
}

vdso::VvarUpdate BuildUpstream(const timekeeper::Timekeeper& tk, uint32_t seq,
                               const PublishContext& ctx) {
  return timekeeper::BuildUpdateVsyscall(tk, seq, seq, ctx.hrtimer_res,
                                         ctx.boottime_shift_overflow);
}

template <vdso::VdsoAccess A>
std::optional<ClockResult> Read(A& access, const uint8_t* page, ClockId clock) {
  return vdso::upstream::ClockGettime(access, page, clock);
}

}  // namespace

const Layout& UpstreamLayout() {
  static const Layout* layout = new Layout(MakeUpstreamLayout());
  return *layout;
}

const Variant& UpstreamVariant() {
  static const Variant* variant = [] {
    auto* v = new Variant;
    v->name = "upstream";
    v->provenance =
        "Linux 6.17/6.18 (lib/vdso/gettimeofday.c, "
        "arch/x86/include/asm/vdso/gettimeofday.h); checked against the "
        "host's vDSO by vdsolab conform";
    v->summary =
        "the current x86-64 vDSO: seq loop, rdtsc_ordered & S64_MAX, "
        "max_cycles overflow path, bit-62 negative-motion clamp";
    v->layout = &UpstreamLayout();
    v->build_update = BuildUpstream;
    v->build_aux_update = timekeeper::BuildUpdateAux;
    v->make_sim_reader =
        MakeStateless<Read<vdso::HookedAccess>, Read<vdso::QuietAccess>>;
    v->native_loop = NativeLoop<Read<vdso::NativeAccess>>;
    v->timens = true;
    v->build_timens_page = [](const timekeeper::TimensOffsets& offsets) {
      return timekeeper::BuildTimensPage(offsets, /*aux_clocks=*/true);
    };
    v->vdso_clocks.assign(std::begin(kVdsoServedClocks),
                          std::end(kVdsoServedClocks));
    return v;
  }();
  return *variant;
}

}  // namespace vdsolab::variants
