#include "variants/gtod/gtod.h"

#include <memory>
#include <optional>

#include "absl/strings/str_format.h"
#include "common/clockid.h"
#include "variants/gtod/layouts.h"
#include "variants/gtod/specs.h"
#include "variants/gtod/trace_clock.h"
#include "variants/gtod/tsc_calibration.h"
#include "variants/gtod/update_vsyscall.h"
#include "variants/gtod/vclock_gettime_416.h"
#include "variants/gtod/vclock_gettime_420.h"
#include "vdso/access.h"

namespace vdsolab::variants {
namespace {

using gtod::ClockGettime416;
using gtod::ClockGettime420;

// Before 6.5 the x86 vDSO clamped a counter behind cycle_last; before 6.10
// delta * mult could wrap; before 6.15 the coarse clocks came from
// xtime_nsec >> shift.
Semantics Pre65() {
  Semantics s;
  s.counter = CounterSemantics::kClampToLast;
  s.overflow_protected = false;
  s.coarse_from_coarse_nsec = false;
  return s;
}

// REALTIME, MONOTONIC and the COARSE clocks: what 4.16 serves.
std::vector<ClockId> Clocks416() {
  return {kClockRealtime, kClockMonotonic, kClockRealtimeCoarse,
          kClockMonotonicCoarse};
}

std::vector<ClockId> Clocks416Raw() {
  return {kClockRealtime, kClockMonotonic, kClockMonotonicRaw,
          kClockRealtimeCoarse, kClockMonotonicCoarse};
}

// What the raw clock patches are for (seeds 000, 001, 003).
constexpr Claim kRawThroughSyscall{
    "seeds 000/001: on 4.16 CLOCK_MONOTONIC_RAW needs a syscall "
    "(\"200-1000ns\" "
    "there vs ~20-30 ns in the vDSO; the time per call is the benchmarks' "
    "job, the share of calls is measured here)",
    RawSyscallShare};
constexpr Claim kRawFromPage{
    "the patch answers CLOCK_MONOTONIC_RAW from the page, without the "
    "syscall",
    RawSyscallShare};

// Seed 000's uapi header: the direct and floating conversions "differ by
// about 0.02%".
std::string DirectVsFloat(const Measured& m) {
  auto direct = m.clocks.find(gtod::kTscCalDirect);
  auto floating = m.clocks.find(gtod::kTscCalFloat);
  if (direct == m.clocks.end() || floating == m.clocks.end() ||
      !direct->second.ppb_vs_raw || !floating->second.ppb_vs_raw) {
    return "not measured";
  }
  const double d = *direct->second.ppb_vs_raw;
  const double f = *floating->second.ppb_vs_raw;
  return absl::StrFormat(
      "in scenario %s the direct clock runs %.6f%% off MONOTONIC_RAW and the "
      "floating one %.6f%%, so their rates differ by %.6f%% of RAW time",
      m.divergence_scenario, d / 1e7, f / 1e7, (d - f) / 1e7);
}

// A 4.16-family variant with a stateless reader.
template <const gtod::Vdso416Spec& S, const gtod::GtodFields& F>
Variant* Make416(std::string_view name, std::string_view provenance,
                 std::string_view summary, const Layout& layout) {
  auto* v = new Variant;
  v->name = name;
  v->provenance = provenance;
  v->summary = summary;
  v->layout = &layout;
  v->build_update = gtod::UpdateVsyscall416<F>;
  v->make_sim_reader = MakeStateless<ClockGettime416<S, vdso::HookedAccess>,
                                     ClockGettime416<S, vdso::QuietAccess>>;
  v->native_loop = NativeLoop<ClockGettime416<S, vdso::NativeAccess>>;
  v->semantics = Pre65();
  v->sign_tested_counter = false;  // vread_tsc(): no sign test.
  return v;
}

const Variant* X86416() {
  Variant* v = Make416<gtod::kSpec416, gtod::kFields416>(
      "x86-4.16",
      "Linux 4.16 (4.15-4.19 series): arch/x86/entry/vdso/vclock_gettime.c, "
      "arch/x86/include/asm/vgtod.h, arch/x86/entry/vsyscall/"
      "vsyscall_gtod.c",
      "the pre-generic x86 vDSO: vread_tsc() clamped to cycle_last, "
      "REALTIME/MONOTONIC/COARSE only, MONOTONIC_RAW through the syscall",
      gtod::Layout416());
  v->vdso_clocks = Clocks416();
  v->claims = {kRawThroughSyscall};
  return v;
}

const Variant* VasDiasV1() {
  Variant* v = Make416<gtod::kSpecVasDiasV1, gtod::kFieldsVasDiasV1>(
      "vasdias-v1",
      "seed 000 (000_5692cb57e0a08a89.txt): Jason Vas Dias, attachment "
      "vdso_clock_monotonic_raw_1.patch, reply to Peter Zijlstra, LKML "
      "March 2018, against 4.16-rc",
      "4.16 plus do_monotonic_raw(): vread_tsc_raw() clamped to "
      "raw_cycle_last, raw_mask/raw_mult/raw_shift on the page",
      gtod::LayoutVasDiasV1());
  v->vdso_clocks = Clocks416Raw();
  v->claims = {kRawFromPage};
  v->patches = "x86-4.16";
  return v;
}

const Variant* VasDiasRdtscp() {
  Variant* v = Make416<gtod::kSpecVasDiasRdtscp, gtod::kFieldsVasDiasRdtscp>(
      "vasdias-rdtscp",
      "seed 000 (000_5692cb57e0a08a89.txt): Jason Vas Dias, \"[PATCH "
      "v4.16-rc4 2/2] x86/vdso: on Intel, VDSO should handle "
      "CLOCK_MONOTONIC_RAW\" (has_rdtscp), March 2018",
      "vasdias-v1 with gtod->has_rdtscp: vread_tsc_raw() reads with rdtscp "
      "where the CPU has it",
      gtod::LayoutVasDiasRdtscp());
  v->vdso_clocks = Clocks416Raw();
  v->counter_read = vdso::CounterRead::kRdtscp;
  v->claims = {kRawFromPage};
  v->patches = "x86-4.16";
  return v;
}

const Variant* VasDiasRc5() {
  Variant* v = Make416<gtod::kSpecRc5, gtod::kFieldsRc5>(
      "vasdias-rc5-2",
      "seed 001 (001_c3bb42d6f908f3ae.txt): Jason Vas Dias, \"[PATCH "
      "v4.16-rc5 (2)] x86/vdso: VDSO should handle "
      "clock_gettime(CLOCK_MONOTONIC_RAW) without syscall\", LKML 17 March "
      "2018; code reconstructed from its description",
      "stripped-down RAW: raw_mult/raw_shift and the raw base on the page; "
      "vread_tsc() and the mono cycle_last/mask (reconstructed)",
      gtod::LayoutRc5());
  v->vdso_clocks = Clocks416Raw();
  v->claims = {kRawFromPage};
  v->patches = "x86-4.16";
  return v;
}

const Variant* Sverdlin() {
  auto* v = new Variant;
  v->name = "sverdlin-v2";
  v->provenance =
      "seed 003 (003_02dcb9432b56a4d6.txt): Alexander Sverdlin, \"[PATCH "
      "v2] x86/vdso: implement clock_gettime(CLOCK_MONOTONIC_RAW, ...)\", "
      "LKML 4 June 2019, on the 4.20-5.2 x86 vDSO (basetime[], do_hres())";
  v->summary =
      "4.20-5.2 vDSO plus do_monotonic_raw(), a copy of do_hres() with "
      "raw_mult/raw_shift: (s64)cycles < 0 falls back, cycles > last guard";
  v->layout = &gtod::LayoutSverdlin();
  v->build_update = gtod::UpdateVsyscall420<gtod::kFieldsSverdlin>;
  v->make_sim_reader =
      MakeStateless<ClockGettime420<gtod::kFieldsSverdlin, vdso::HookedAccess>,
                    ClockGettime420<gtod::kFieldsSverdlin, vdso::QuietAccess>>;
  v->native_loop =
      NativeLoop<ClockGettime420<gtod::kFieldsSverdlin, vdso::NativeAccess>>;
  v->vdso_clocks = {kClockRealtime,        kClockMonotonic,
                    kClockMonotonicRaw,    kClockRealtimeCoarse,
                    kClockMonotonicCoarse, kClockTai};
  v->semantics = Pre65();
  v->claims = {kRawFromPage};
  // Stand-in for the 4.20-5.2 vDSO it patches: RAW through the syscall.
  v->patches = "x86-4.16";
  return v;
}

// The delta clock keeps process-wide state: one per reader instance.
class TscCalibrationSimReader final : public SimReader {
 public:
  std::optional<ClockResult> Call(vdso::HookedAccess& access,
                                  const uint8_t* page, ClockId clock) override {
    return gtod::TscCalibrationClockGettime(access, page, clock, &state_);
  }

 private:
  gtod::TscCalDeltaState state_;
};

std::unique_ptr<SimReader> MakeTscCalibrationSimReader() {
  return std::make_unique<TscCalibrationSimReader>();
}

uint64_t TscCalibrationNativeLoop(const uint8_t* page, ClockId clock,
                                  uint64_t iterations) {
  gtod::TscCalDeltaState state;  // The statics, for this loop's process.
  return RunNativeLoop(iterations, [&](vdso::NativeAccess& access) {
    return gtod::TscCalibrationClockGettime(access, page, clock, &state);
  });
}

const Variant* TscCalibration() {
  auto* v = new Variant;
  v->name = "tsc-calibration";
  v->provenance =
      "seed 000 (000_5692cb57e0a08a89.txt): Jason Vas Dias, the \"[PATCH "
      "v4.16-rc4 2/2]\" revisions adding __vdso_linux_tsc_calibration and "
      "uapi asm/vdso_tsc_calibration.h (its comment's three conversions), "
      "March 2018";
  v->summary =
      "user-space TSC clocks from the exported raw mult/shift/tsc_khz: "
      "direct (mult * tsc) >> shift, delta-accumulating, floating point";
  v->layout = &gtod::LayoutTscCalibration();
  v->build_update = gtod::UpdateVsyscall416<gtod::kFieldsTscCalibration>;
  v->sign_tested_counter = false;  // The 4.16 vDSO's vread_tsc().
  v->make_sim_reader = MakeTscCalibrationSimReader;
  v->native_loop = TscCalibrationNativeLoop;
  v->vdso_clocks = Clocks416Raw();
  v->vdso_clocks.insert(
      v->vdso_clocks.end(),
      {gtod::kTscCalDirect, gtod::kTscCalDelta, gtod::kTscCalFloat});
  constexpr std::string_view kCalibrationCost =
      "each call fetches the calibration (four page loads, as "
      "__vdso_linux_tsc_calibration() does), converts, and divides by 10^9 "
      "for the timespec";
  v->own_clocks = {
      ClockDef{gtod::kTscCalDirect, "tsc_cal_direct", ClockKind::kUserspace,
               true, ClockEncoding::kTimespec, kCalibrationCost, -1},
      ClockDef{gtod::kTscCalDelta, "tsc_cal_delta", ClockKind::kUserspace, true,
               ClockEncoding::kTimespec,
               "each call fetches the calibration (four page loads), "
               "converts, divides by 10^9 for the timespec and carries the "
               "previous reading across calls",
               -1},
      ClockDef{gtod::kTscCalFloat, "tsc_cal_float", ClockKind::kUserspace, true,
               ClockEncoding::kTimespec,
               "it converts in double precision (two divisions) and rounds "
               "with lround()",
               -1},
  };
  v->claims = {
      {"seed 000, vdso_tsc_calibration.h: the direct and floating "
       "conversions \"differ by about 0.02%\"",
       DirectVsFloat}};
  v->semantics = Pre65();
  v->own_clocks_only = true;
  v->counter_read = vdso::CounterRead::kRdtscp;
  return v;
}

template <const gtod::Vdso416Spec& S>
const Variant* TraceClockVariant(std::string_view name,
                                 std::string_view provenance,
                                 std::string_view summary,
                                 ClockResult (*syscall)(ClockId, uint64_t,
                                                        const PublishContext&),
                                 ClockEncoding encoding) {
  Variant* v = Make416<S, gtod::kFieldsTraceClock>(name, provenance, summary,
                                                   gtod::LayoutTraceClock());
  v->vdso_clocks = Clocks416();
  v->vdso_clocks.push_back(gtod::kClockTrace);
  v->own_clocks = {ClockDef{gtod::kClockTrace, "CLOCK_TRACE",
                            ClockKind::kVariantSyscall, true, encoding, "",
                            -1}};
  v->syscall = syscall;
  return v;
}

const Variant* TraceClockRfc() {
  return TraceClockVariant<gtod::kSpecTraceClock>(
      "trace-clock",
      "seed 002 (002_1d5ca9ae9ec6293c.txt): Julien Desfossez, \"[RFC PATCH] "
      "TRACE_CLOCK in clock_gettime vDSO and syscall\", ltt-dev 2010 "
      "(against 2.6.3x; grafted onto the 4.16 vDSO)",
      "CLOCK_TRACE (32): cycles * (USEC_PER_SEC / cpu_khz) >> 10 in tv_nsec, "
      "-EPERM unless TSCs are synced; unhandled ids return -EINVAL",
      gtod::TraceClockSyscallRfc, ClockEncoding::kCountInTvNsec);
}

const Variant* TraceClockReviewed() {
  return TraceClockVariant<gtod::kSpecTraceClockReviewed>(
      "trace-clock-reviewed",
      "seed 002 (002_1d5ca9ae9ec6293c.txt): the TRACE_CLOCK RFC with Mathieu "
      "Desnoyers' review applied (aliased timespec union, no 32-bit "
      "division, per-arch clockid check), ltt-dev 2010; grafted onto 4.16",
      "CLOCK_TRACE with the u64 count stored over the timespec (tv_sec on "
      "x86-64); otherwise as trace-clock",
      gtod::TraceClockSyscallReviewed, ClockEncoding::kCountInTvSec);
}

}  // namespace

std::vector<const Variant*> GtodVariants() {
  static const std::vector<const Variant*>* variants =
      new std::vector<const Variant*>{
          X86416(),   VasDiasV1(),      VasDiasRdtscp(), VasDiasRc5(),
          Sverdlin(), TscCalibration(), TraceClockRfc(), TraceClockReviewed(),
      };
  return *variants;
}

}  // namespace vdsolab::variants
