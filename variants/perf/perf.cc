#include "variants/perf/perf.h"

#include "variants/perf/perf_mmap_page.h"
#include "variants/perf/perf_mmap_reader.h"
#include "variants/perf/perf_mmap_writer.h"
#include "vdso/access.h"

namespace vdsolab::variants {
namespace {

using perf::kClockPerfTime;

Layout MakePerfMmapLayout() {
  FieldList f;
  f.Add("version", perf::kPcVersion, 4)
      .Add("compat_version", perf::kPcCompatVersion, 4)
      .Add("lock", perf::kPcLock, 4, FieldKind::kSeq)
      .Add("index", perf::kPcIndex, 4)
      .Add("offset", perf::kPcOffset, 8)
      .Add("time_enabled", perf::kPcTimeEnabled, 8)
      .Add("time_running", perf::kPcTimeRunning, 8)
      .Add("capabilities", perf::kPcCapabilities, 8)
      .Add("pmc_width", perf::kPcPmcWidth, 2)
      .Add("time_shift", perf::kPcTimeShift, 2)
      .Add("time_mult", perf::kPcTimeMult, 4)
      .Add("time_offset", perf::kPcTimeOffset, 8)
      .Add("time_zero", perf::kPcTimeZero, 8)
      .Add("size", perf::kPcSize, 4)
      // Short-counter fields (5.12+); x86 never sets cap_user_time_short,
      // so they stay 0 and no field is cycle_last-like on this page.
      .Add("time_cycles", perf::kPcTimeCycles, 8)
      .Add("time_mask", perf::kPcTimeMask, 8);
  return Layout("perf_event_mmap_page",
                "the self-monitoring header of a perf event's mmap() page "
                "(seqcount lock, time_mult/time_shift/time_offset/time_zero), "
                "placed at offset 0 of the simulated page",
                f.Take());
}

template <vdso::VdsoAccess A>
std::optional<ClockResult> Read(A& access, const uint8_t* page, ClockId clock) {
  return perf::PerfClockGettime(access, page, clock);
}

}  // namespace

const Layout& PerfMmapLayout() {
  static const Layout* layout = new Layout(MakePerfMmapLayout());
  return *layout;
}

const Variant& PerfMmapVariant() {
  static const Variant* variant = [] {
    auto* v = new Variant;
    v->name = "perf-mmap";
    v->provenance =
        "seed 000 (000_5692cb57e0a08a89.txt): Peter Zijlstra, replies to "
        "Jason Vas Dias on [PATCH v4.16-rc4 2/2] x86/vdso: on Intel, VDSO "
        "should handle CLOCK_MONOTONIC_RAW, March 2018 (\"You could read the "
        "time using the group_fd's mmap() page\", \"Do not mix clocks\"); "
        "page and read loop: include/uapi/linux/perf_event.h (5.12-6.18); "
        "writer: perf_event_update_userpage(), x86 "
        "arch_perf_update_userpage() and __set_cyc2ns_scale() (2019+ "
        "shift-32 clamp, through 6.18)";
    v->summary =
        "user-space perf time: bare rdtsc converted with the perf mmap "
        "page's time_zero/time_mult/time_shift under its lock seqcount; "
        "measured against CLOCK_MONOTONIC_RAW";
    v->layout = &PerfMmapLayout();
    v->build_update = perf::BuildPerfUpdate;
    v->make_sim_reader =
        MakeStateless<Read<vdso::HookedAccess>, Read<vdso::QuietAccess>>;
    v->native_loop = NativeLoop<Read<vdso::NativeAccess>>;
    ClockDef perf_time;
    perf_time.id = kClockPerfTime;
    perf_time.name = "perf_time";
    perf_time.kind = ClockKind::kUserspace;
    perf_time.monotonic = true;
    perf_time.cost_note =
        "it reads time_mult, time_shift and time_zero under the perf page's "
        "seqlock";
    v->own_clocks.push_back(perf_time);
    v->own_clocks_only = true;
    v->counter_read = vdso::CounterRead::kPlain;  // The documented rdtsc().
    return v;
  }();
  return *variant;
}

std::vector<const Variant*> PerfVariants() { return {&PerfMmapVariant()}; }

}  // namespace vdsolab::variants
