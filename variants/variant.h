// File: variants/variant.h
//
// A variant is a vDSO clock_gettime() (an upstream era, a patch from the
// seeds, a user-space TSC clock or a plugin) together with the page layout
// it reads and the writer that publishes the timekeeper into that layout.
// The simulation runs any variant the same way: the timekeeper model
// publishes through the variant's writer, readers call the variant's reader
// through the hooked access policy, and the checker judges the answers with
// the variant's semantics.
//
// Every variant names its provenance: the seed file and message, or the
// kernel era, it models (`vdsolab variants` lists them).

#ifndef VDSOLAB_VARIANTS_VARIANT_H_
#define VDSOLAB_VARIANTS_VARIANT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeper.h"
#include "timekeeper/timens.h"
#include "variants/foreign_timekeeping.h"
#include "variants/layout.h"
#include "variants/semantics.h"
#include "vdso/access.h"
#include "vdso/vvar_page.h"

namespace vdsolab::variants {

// What the writer knows besides the timekeeper: machine facts some layouts
// publish (tsc_khz, has_rdtscp, trace_clock_is_sync, ...).
struct PublishContext {
  uint32_t hrtimer_res = 1;     // ns; 1 with high-resolution timers.
  uint32_t tsc_khz = 0;         // The calibrated TSC frequency in kHz.
  bool has_rdtscp = true;       // static_cpu_has(X86_FEATURE_RDTSCP).
  bool counters_synced = true;  // All CPUs' counters agree (TSC sync).
  // The machine's counter (the TSC) at timekeeping_init(): what
  // user-space clocks calibrate from (on kvm-clock, not the clocksource's).
  uint64_t boot_counter = 0;
  // The history tests' 5.3 BOOTTIME arithmetic in the upstream writer
  // (timekeeper::TimekeepingDefects::vsyscall_boottime_shift_overflow).
  bool boottime_shift_overflow = false;
};

// Builds the stores of one update in program order, seq protocol included.
// `seq` is every seq word's value before the update (even); the update
// leaves it at seq + 2, so that seq / 2 + 1 identifies the update.
using BuildUpdateFn = vdso::VvarUpdate (*)(const timekeeper::Timekeeper& tk,
                                           uint32_t seq,
                                           const PublishContext& ctx);
// Builds an aux clock's update (6.17+ vdso_time_update_aux()) on the
// record's own seq `seq` (even; the update leaves it at seq + 2).
using BuildAuxUpdateFn = vdso::VvarUpdate (*)(const timekeeper::Timekeeper& tk,
                                              uint32_t seq);
// Builds a time namespace's page in the layout (timens_set_vvar_page():
// every record seq 1, clock_mode TIMENS, the offsets where the time page
// keeps basetime[]), written once before the namespace's first task.
using BuildTimensPageFn =
    vdso::VvarUpdate (*)(const timekeeper::TimensOffsets& offsets);

// The vDSO's entry points besides clock_gettime() (SimReader).
enum class EntryPoint { kGettimeofday, kTime, kClockGetres };

// gettimeofday()'s pointers: both, tz NULL (gettimeofday(&tv, NULL), the
// common call) or tv NULL (gettimeofday(NULL, &tz), for the timezone).
enum class GtodArgs { kBoth, kTvOnly, kTzOnly };

// A reader instance in the simulation. One instance serves every simulated
// thread of a run (state a variant keeps, like the seed's static
// previous_tsc, is process-wide).
class SimReader {
 public:
  virtual ~SimReader() = default;
  // nullopt: the access policy abandoned the call (livelock budget).
  virtual std::optional<ClockResult> Call(vdso::HookedAccess& access,
                                          const uint8_t* page,
                                          ClockId clock) = 0;
  // True when a call's answer depends only on what it loads and reads,
  // never on earlier calls: the exhaustive strategy's reduction may then
  // treat a second call as starting afresh (sim/exhaustive.h). Unknown
  // code (plugins, compiled images) keeps the default.
  virtual bool stateless() const { return false; }
  // The same call through vdso::QuietAccess (MakeStateless's second
  // function; a rerunnable plugin): the simulation's calls in which
  // nothing but time can happen. A reader with a quiet build keeps no
  // state between calls, so an attempt it steps out of can be run again
  // through Call(). Without one the attempt is aborted at once.
  virtual bool has_quiet_build() const { return false; }
  // Whether the reader tells its access policy of every barrier it
  // executes (Rmb(), CpuRelax()): built-in readers do, plugins through the
  // ABI's rmb and cpu_relax, kernel-tree code through its instrumented
  // smp_rmb(). Under relaxed ordering (sim/scenario.h, reorder_ppm) the
  // loads of a reader that does not (a compiled image's, whose smp_rmb()
  // is no instruction on x86) stay in program order.
  virtual bool reports_barriers() const { return true; }
  virtual std::optional<ClockResult> QuietCall(vdso::QuietAccess& access,
                                               const uint8_t* /*page*/,
                                               ClockId /*clock*/) {
    access.MayRetry();  // Aborts the attempt.
    return std::nullopt;
  }

  // The vDSO's other entry points (x86 vclock_gettime.c's gettimeofday(),
  // time() and clock_getres()), where the reader has them: a kernel tree's
  // (plugin ABI v3). The simulation checks them on settled pages
  // (sim/entry_points.h). Each is nullopt when the reader lacks it or the
  // call was abandoned (it asked to retry) or faulted (access.Fault()).
  // With `null_arg`, the pointer a caller may leave NULL is NULL, as in
  // time(NULL) and clock_getres(id, NULL); gettimeofday() leaves out the
  // pointers `args` says. What a NULL pointer would have received is zero
  // in the answer; what a call should have stored and did not is the
  // caller's poison (0xa5 bytes), never a plausible zero.
  bool has_other_entry_points() const {
    return has_entry_point(EntryPoint::kGettimeofday) ||
           has_entry_point(EntryPoint::kTime) ||
           has_entry_point(EntryPoint::kClockGetres);
  }
  virtual bool has_entry_point(EntryPoint /*e*/) const { return false; }
  // The CONFIG_HZ the reader's code compiles in (the coarse clocks'
  // clock_getres(), LOW_RES_NSEC); 0: the simulated kernel's.
  virtual int config_hz() const { return 0; }
  virtual std::optional<GtodResult> Gettimeofday(vdso::HookedAccess& /*access*/,
                                                 const uint8_t* /*page*/,
                                                 GtodArgs /*args*/) {
    return std::nullopt;
  }
  // time(): its return value and what it stored through its argument.
  struct TimeResult {
    int64_t ret = 0;
    int64_t stored = 0;
  };
  virtual std::optional<TimeResult> Time(vdso::HookedAccess& /*access*/,
                                         const uint8_t* /*page*/,
                                         bool /*null_arg*/) {
    return std::nullopt;
  }
  virtual std::optional<ClockResult> ClockGetres(vdso::HookedAccess& /*access*/,
                                                 const uint8_t* /*page*/,
                                                 ClockId /*clock*/,
                                                 bool /*null_arg*/) {
    return std::nullopt;
  }
};

// Calls the reader `iterations` times natively (NativeAccess: plain loads,
// the real counter) on `page` and returns the last call's time in ns (0 on
// an error). For benchmarks and the seeds' measures.
using NativeLoopFn = uint64_t (*)(const uint8_t* page, ClockId clock,
                                  uint64_t iterations);

// How a clock's answers are judged.
enum class ClockKind {
  // A kernel clock: the answer must equal the timekeeper's syscall path (the
  // oracle) at the counter the reader used, for the page state it validated.
  kKernel,
  // A clock the variant adds to the kernel (e.g. CLOCK_TRACE): judged
  // against the variant's own syscall (Variant::syscall), or, for a clock
  // with `same_as` (a plugin's, ABI version 4), against that kernel
  // clock's.
  kVariantSyscall,
  // A user-space clock with no kernel counterpart: not judged for
  // exactness; its divergence from CLOCK_MONOTONIC_RAW is measured.
  kUserspace,
};

// How a clock's answer encodes its time.
enum class ClockEncoding {
  kTimespec,       // A normalised timespec.
  kCountInTvNsec,  // A 64-bit nanosecond count in tv_nsec, tv_sec 0.
  kCountInTvSec,   // A u64 nanosecond count stored over tv_sec (an aliased
                   // timespec union), tv_nsec unused.
};

struct ClockDef {
  ClockId id = 0;
  std::string_view name;  // "CLOCK_TRACE", "tsc_cal_direct", ...
  ClockKind kind = ClockKind::kKernel;
  bool monotonic = true;  // Checked for monotonicity and causality.
  ClockEncoding encoding = ClockEncoding::kTimespec;
  // For a user-space clock: what it does besides reading the counter (the
  // benchmark report says why it costs more than the instruction).
  std::string_view cost_note;
  // kVariantSyscall only: the kernel clock whose system call this clock
  // must equal bit for bit (a tracer's clock that is MONOTONIC_RAW under
  // an id of its own); it is judged as that clock is, era rules included.
  // -1: the variant's own syscall answers.
  ClockId same_as = -1;
  // kUserspace only: the answer is a function of the page and the counter
  // alone (a plugin's: plugins keep no state between calls), so a call that
  // raced an update is torn unless rerun on some state current during it,
  // whole, at its counter, it answers the same (sim/settled_answers.h).
  bool stateless = false;
};

// What `vdsolab compare` measured of one clock of a variant, summed over
// every scenario, for the variant's claims.
struct ClockMeasure {
  uint64_t page = 0;         // Calls answered from the page...
  uint64_t syscall = 0;      // ...by the syscall fallback...
  uint64_t page_errors = 0;  // ...and errors the page path returned itself.
  // A clock without a kernel oracle: its rate against MONOTONIC_RAW in
  // parts per billion, in the scenario `Measured::divergence_scenario`.
  std::optional<double> ppb_vs_raw;
};
struct Measured {
  std::map<ClockId, ClockMeasure> clocks;
  std::string divergence_scenario;
};

// Something the variant's source (its seed thread, its author) claims
// about it, checked against the runs by `vdsolab compare`.
struct Claim {
  std::string_view text;  // The claim, citing where it is made.
  // What the runs measured, as a sentence fragment ("100.0% by the syscall
  // (125680 of 125680 calls)").
  std::string (*measure)(const Measured& measured) = nullptr;
};

struct Variant {
  std::string_view name;        // "upstream", "x86-4.16", "vasdias-v1", ...
  std::string_view provenance;  // "seed 000, attachment ...", "Linux 6.1".
  std::string_view summary;     // One line: what it is.
  const Layout* layout = nullptr;
  BuildUpdateFn build_update = nullptr;
  // nullptr: the layout has no aux clock records (before 6.17).
  BuildAuxUpdateFn build_aux_update = nullptr;
  // The reader; a fresh instance per run.
  std::unique_ptr<SimReader> (*make_sim_reader)() = nullptr;
  NativeLoopFn native_loop = nullptr;  // nullptr: no native build.
  // The clocks the variant answers from the page without a syscall, and
  // the clocks it defines beyond the kernel's (kind kVariantSyscall or
  // kUserspace). Kernel ids not listed go to the syscall.
  std::vector<ClockId> vdso_clocks;
  std::vector<ClockDef> own_clocks;
  Semantics semantics;
  // The syscall for clocks the variant adds (nullptr if none): the answer
  // at `counter` on a machine described by `ctx`.
  ClockResult (*syscall)(ClockId clock, uint64_t counter,
                         const PublishContext& ctx) = nullptr;
  // A user-space variant only makes sense on its own clocks: runs call
  // those instead of the scenario's kernel clocks.
  bool own_clocks_only = false;
  // The counter instruction its main path uses (the simulation orders each
  // read by the kind the reader actually asks for; this is for reports and
  // for the benchmark's ratio to the bare instruction): rdtsc_ordered,
  // rdtscp (ordered after earlier loads on every CPU), or a bare rdtsc.
  vdso::CounterRead counter_read = vdso::CounterRead::kOrdered;
  // What its source claims, for `vdsolab compare` to check.
  std::vector<Claim> claims;
  // The built-in variant this one patches, or the closest stand-in for the
  // code it patches (the benchmark compares the two): "" if none.
  std::string_view patches;
  // Its reader follows VDSO_CLOCKMODE_TIMENS (seq odd on a namespace page)
  // to the time page one page on, in the 6.13+ arrangement of
  // VvarPage::CreateWithTimensView(), and adds the namespace's offsets.
  // A variant without it is not run with readers in a time namespace: the
  // run is refused (sim/engine.cc), never answered from a page it would
  // misread (docs/scenarios.md, "Time namespaces").
  bool timens = false;
  // Its reader reads kvm-clock from the pvclock page in PVCLOCK mode
  // (vread_pvclock()), falling back only while the stable bit is clear:
  // the checker holds it to that (property fast_path). Every built-in
  // reader does; a plugin declares it (VDSOLAB_SEM_PVCLOCK).
  bool pvclock = true;
  // Before 6.5, whether the reader sends a counter read with bit 63 set to
  // the syscall (x86 4.20's `(s64)cycles < 0`, vdso_cycles_ok() from 5.8):
  // property fast_path excuses such a fallback only then. The 4.16
  // family's vread_tsc() has no such test (false).
  bool sign_tested_counter = true;
  // The namespace's page in this layout (nullptr: the layout has none;
  // then `timens` is false).
  BuildTimensPageFn build_timens_page = nullptr;
  // Not the model but this timekeeper publishes the page (a kernel tree's
  // kernel/time, --kernel-time); the model still runs beside it as the
  // oracle (variants/foreign_timekeeping.h). nullptr: the model publishes
  // through build_update.
  const ForeignTimekeepingSource* timekeeping = nullptr;
};

// The clock's definition if `variant` defines it, else nullptr.
const ClockDef* FindOwnClock(const Variant& variant, ClockId clock);
// The kernel clock `clock` is judged as: its `same_as` for an own clock
// that has one, else `clock` itself.
inline ClockId JudgedAs(const ClockDef* own, ClockId clock) {
  return own != nullptr && own->same_as >= 0 ? own->same_as : clock;
}
// The same for `variant`'s clock `clock`.
inline ClockId JudgedAs(const Variant& variant, ClockId clock) {
  return JudgedAs(FindOwnClock(variant, clock), clock);
}
// The kernel's name for kernel ids, the variant's for its own.
std::string VariantClockName(const Variant& variant, ClockId clock);
// The system call on a kernel with this variant: the variant's own syscall
// for clocks it adds, the timekeeper model's for the rest, with the coarse
// clocks of the variant's era (tk_xtime() before 6.15).
ClockResult VariantSyscall(const Variant& variant, const PublishContext& ctx,
                           const timekeeper::Timekeeper& tk, ClockId clock,
                           const timekeeper::SyscallContext& sc);

// Whether the variant answers `clock` without the syscall (when the clock
// mode allows).
bool ServesFromPage(const Variant& variant, ClockId clock);

// Claim measures several variants share: the share of MONOTONIC_RAW calls
// that went to the syscall ("100.0% by the syscall (5 of 5 calls)").
std::string RawSyscallShare(const Measured& measured);

// Wraps a reader function template's instantiations into a SimReader: with
// HookedAccess, and (QuietFn, for built-in readers) with QuietAccess.
template <auto Fn, auto QuietFn = nullptr>
class StatelessSimReader final : public SimReader {
  // By type, not by comparing the function's address with null, which
  // GCC does not fold to a constant under AddressSanitizer.
  static constexpr bool kHasQuiet =
      !std::is_same_v<decltype(QuietFn), std::nullptr_t>;

 public:
  std::optional<ClockResult> Call(vdso::HookedAccess& access,
                                  const uint8_t* page, ClockId clock) override {
    return Fn(access, page, clock);
  }
  bool stateless() const override { return true; }
  bool has_quiet_build() const override { return kHasQuiet; }
  std::optional<ClockResult> QuietCall(vdso::QuietAccess& access,
                                       const uint8_t* page,
                                       ClockId clock) override {
    if constexpr (kHasQuiet) {
      return QuietFn(access, page, clock);
    } else {
      return SimReader::QuietCall(access, page, clock);
    }
  }
};
template <auto Fn, auto QuietFn = nullptr>
std::unique_ptr<SimReader> MakeStateless() {
  return std::make_unique<StatelessSimReader<Fn, QuietFn>>();
}

// Calls `call(access)` `iterations` times with NativeAccess and returns the
// last call's time in ns (0 on an error): every variant's native_loop. Each
// result is handed to an empty asm statement, so a call cannot be
// optimised away, at no cost (like benchmark::DoNotOptimize).
template <class Call>
uint64_t RunNativeLoop(uint64_t iterations, Call&& call) {
  vdso::NativeAccess access;
  std::optional<ClockResult> r;
  for (uint64_t i = 0; i < iterations; ++i) {
    r = call(access);
    if (r)
      asm volatile("" : : "r"(r->ts.tv_sec), "r"(r->ts.tv_nsec), "r"(r->ret));
  }
  if (!r || r->ret != 0) return 0;
  return static_cast<uint64_t>(r->ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(r->ts.tv_nsec);
}

// The native loop over a stateless reader function template instantiation.
template <auto Fn>
uint64_t NativeLoop(const uint8_t* page, ClockId clock, uint64_t iterations) {
  return RunNativeLoop(iterations, [page, clock](vdso::NativeAccess& access) {
    return Fn(access, page, clock);
  });
}

}  // namespace vdsolab::variants

#endif  // VDSOLAB_VARIANTS_VARIANT_H_
