// File: sim/scenario.h
//
// A scenario: everything a simulation run depends on, as data. With the
// seed, it decides the run completely (design rule 4). Scenarios are read
// from and written to TOML files (sim/scenario_toml.h); docs/scenarios.md
// documents every field.

#ifndef VDSOLAB_SIM_SCENARIO_H_
#define VDSOLAB_SIM_SCENARIO_H_

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clockid.h"
#include "common/timespec.h"
#include "timekeeper/profile.h"

namespace vdsolab::sim {

// A counter jump at a true time (a TSC write, a migration to a host with a
// different TSC, a hypervisor correction). Negative jumps go backwards.
struct CounterStep {
  uint64_t at_ns = 0;
  int64_t cycles = 0;

  friend bool operator==(const CounterStep&, const CounterStep&) = default;
};

// How one CPU's counter differs from the machine's ideal counter. The
// offsets, drift, steps, wobble and jitter add up (TigerBeetle-style time
// models as data).
struct CpuCounterSpec {
  int64_t offset_cycles = 0;  // Constant skew against CPU 0's ideal.
  int64_t drift_ppb = 0;      // Rate error, parts per billion.
  std::vector<CounterStep> steps;
  uint64_t wobble_cycles = 0;     // Triangle wave, peak amplitude.
  uint64_t wobble_period_ns = 0;  // Its period (0: no wobble).
  uint64_t jitter_cycles = 0;     // Per-read noise in [0, jitter].

  friend bool operator==(const CpuCounterSpec&,
                         const CpuCounterSpec&) = default;
};

struct MachineSpec {
  // "tsc" (vDSO mode TSC), "kvm-clock" (a guest: the counter is the TSC and
  // a hypervisor publishes kvm-clock in the pvclock page, vDSO mode
  // PVCLOCK; sim/hypervisor.h), or "hpet" / "acpi_pm" (vDSO mode NONE: the
  // vDSO falls back to the syscall for hres clocks).
  std::string clocksource = "tsc";
  uint64_t counter_hz = 2600000000;  // True nominal frequency.
  uint64_t calibrated_hz = 0;  // What the kernel registers; 0: counter_hz.
  int width_bits = 64;         // The counter wraps at 2^width.
  uint64_t counter_start = 1ull << 36;  // CPU 0's value at true time 0.
  std::vector<CpuCounterSpec> cpus = {CpuCounterSpec{}};
  bool rdtscp = true;  // The CPUs have RDTSCP (some variants publish it).
  // kvm-clock: the hypervisor's master clock updates of vCPU 0's pvclock
  // page, one per period at a drawn point of its first half (0: only the
  // scenario's pvclock_update events); kvm-clock's value at true time 0.
  uint64_t pvclock_period_ns = 0;
  uint64_t kvmclock_start_ns = 400000000;

  friend bool operator==(const MachineSpec&, const MachineSpec&) = default;
};

struct KernelSpec {
  int hz = 250;
  Timespec64 boot_realtime{1764460800, 0};
  Timespec64 boot_offset{1, 0};  // MONOTONIC at boot.
  uint32_t hrtimer_res_ns = 1;
  int timekeeping_cpu = 0;  // Whose counter the timekeeper reads.
  bool has_rtc = false;
  // The timekeeper's era (timekeeper/profile.h): "5.3" .. "6.18".
  std::string era = "6.18";
  // Shipped defects switched back on (timekeeper/profile.h KnownDefects()),
  // for the history tests.
  std::vector<std::string> defects;
  // Later changes a stable tree carries (timekeeper/profile.h
  // KnownBackports()): set by --kernel-time from what the tree does.
  std::vector<std::string> backports;
  // CONFIG_POSIX_AUX_CLOCKS (6.17+): the aux clocks exist (disabled ones
  // answer -ENODEV instead of -EINVAL); events enable them.
  bool aux_clocks = false;
  // The TSC keeps counting in suspend (X86_FEATURE_NONSTOP_TSC_S3): resume
  // measures the sleep with it.
  bool tsc_nonstop = false;
  // read_persistent_clock64() works (x86's CMOS RTC): suspend and resume
  // read it, in whole seconds of true time since boot_realtime.
  bool persistent_clock = true;
  // The time namespace of readers with `timens = true` (CONFIG_TIME_NS):
  // its struct timens_offsets, written through /proc/PID/timens_offsets
  // before the run (proc_timens_set_offset()'s domain, checked against
  // MONOTONIC and BOOTTIME at boot, boot_offset).
  Timespec64 timens_monotonic{0, 0};
  Timespec64 timens_boottime{0, 0};

  friend bool operator==(const KernelSpec&, const KernelSpec&) = default;
};

// Costs and disturbances in true nanoseconds; probabilities in ppm.
struct TimingSpec {
  uint64_t tick_jitter_ns = 2000;    // Ticks land up to this late.
  uint64_t load_ns = 1;              // A reader's page load.
  uint64_t counter_read_ns = 10;     // A reader's counter read.
  uint64_t syscall_ns = 250;         // The fallback syscall.
  uint64_t writer_start_ns = 300;    // Tick to the writer's first store.
  uint64_t store_ns = 1;             // Between two writer stores.
  uint32_t writer_stall_ppm = 0;     // Before a store, the writer stalls...
  uint64_t writer_stall_max_ns = 0;  // ...for up to this long.
  uint32_t preempt_ppm = 0;          // Before a reader hook, preemption...
  uint64_t preempt_max_ns = 0;       // ...for up to this long.

  friend bool operator==(const TimingSpec&, const TimingSpec&) = default;
};

enum class EventKind {
  kAdjtimexFrequency,  // adjtimex(ADJ_FREQUENCY, freq)
  kAdjtimexTick,       // adjtimex(ADJ_TICK, tick)
  kSetTime,            // clock_settime(CLOCK_REALTIME, realtime)
  kIdle,               // NO_HZ: no ticks for `duration_ns`
  kPause,              // VM pause: no ticks and no reader calls
  kAdjtimex,           // adjtimex()/clock_adjtime() with any modes and fields
  kSetTai,             // adjtimex(ADJ_TAI, tai)
  kSetOffset,          // adjtimex(ADJ_SETOFFSET | ADJ_NANO, offset)
  kLeap,               // adjtimex(ADJ_STATUS, STA_INS or STA_DEL): `leap`
  kSuspend,            // suspend to RAM for `duration_ns`, then resume
  kClocksource,        // switch the timekeeper to `clocksource`
  kAuxEnable,          // /sys/kernel/time/aux_clocks/<aux>/aux_clock_enable = 1
  kAuxDisable,         // ... = 0
  kAuxSettime,         // clock_settime(CLOCK_AUX + aux, realtime)
  kPvclockUpdate,      // kvm-clock: the hypervisor rewrites vCPU 0's pvti
  // Not in scenario files: the resume the writer schedules for kSuspend.
  kResume,
};

// EventSpec::expect_ret when nothing is expected.
inline constexpr int64_t kNoExpectedRet = INT64_MIN;

struct EventSpec {
  EventKind kind = EventKind::kAdjtimexFrequency;
  uint64_t at_ns = 0;
  int64_t freq_scaled_ppm = 0;  // kAdjtimexFrequency: ppm << 16.
  int64_t tick_usec = 10000;    // kAdjtimexTick, kAdjtimex.
  Timespec64 realtime;          // kSetTime, kAuxSettime.
  uint64_t duration_ns = 0;     // kIdle, kPause, kSuspend.
  // kAdjtimex: struct timex as the caller fills it (modes says which
  // fields the kernel reads), on CLOCK_REALTIME or an aux clock.
  uint32_t modes = 0;
  int64_t offset = 0;
  int64_t freq = 0;  // Scaled ppm, unclamped: the kernel validates.
  int64_t maxerror = 0;
  int64_t esterror = 0;
  int32_t status = 0;
  int64_t constant = 0;
  int64_t time_sec = 0;
  int64_t time_usec = 0;
  ClockId clock = kClockRealtime;
  // kAdjtimex and the other syscall events: what the call must return,
  // and read-back fields as "name=value" (timekeeper/timex.h names:
  // "freq=6553600", "status=8193"); a mismatch fails the run.
  int64_t expect_ret = kNoExpectedRet;
  std::vector<std::string> expect_readback;
  int32_t tai = 0;              // kSetTai: 0 .. 100000.
  Timespec64 offset_time;       // kSetOffset: signed, tv_nsec in [0, 1e9).
  std::string leap = "insert";  // kLeap: "insert" or "delete".
  std::string clocksource;      // kClocksource: "tsc", "hpet", "acpi_pm".
  int aux = 0;                  // kAux*: the aux clock, 0..7.
  // kPvclockUpdate: a new master clock (else the same values under a new
  // version), PVCLOCK_TSC_STABLE_BIT, and the TSC frequency KVM scales
  // with from now on (0: unchanged).
  bool pvclock_master = true;
  bool pvclock_stable = true;
  uint64_t tsc_khz = 0;

  friend bool operator==(const EventSpec&, const EventSpec&) = default;
};

struct ReaderSpec {
  int id = -1;  // Stable identity for randomness and replays; -1: index.
  int cpu = 0;
  std::vector<ClockId> clocks = {kClockMonotonic};  // Called in turn.
  uint64_t period_ns = 20000;        // Between the end of one call and
  uint64_t period_jitter_ns = 0;     // the start of the next, plus jitter.
  uint32_t migrate_ppm = 0;          // Move to another CPU between calls.
  uint32_t migrate_midcall_ppm = 0;  // ...or at a hook inside a call.
  // The reader's task is in the time namespace of kernel.timens_*: it reads
  // the namespace's page and the syscall adds the offsets.
  bool timens = false;
  // It also calls each of the variant's own clocks (a plugin's, a
  // user-space clock's) after `clocks`; false: `clocks` alone (and, for a
  // variant that runs its own clocks only, the own clocks it lists).
  bool own_clocks = true;

  friend bool operator==(const ReaderSpec&, const ReaderSpec&) = default;
};

struct FaultSpec {
  // rdtsc without ordering: the counter is read up to speculation_ns before
  // the read's seq load, not after the loads that precede it in program
  // order (the CPU executed it early).
  bool unordered_counter_read = false;
  uint64_t speculation_ns = 200;
  // Relaxed ordering: what a compiler may do to plain accesses no barrier
  // separates, and a weakly ordered CPU to any. In reorder_ppm of a
  // reader's loads (0: program order), the load sees the page as it was
  // after any store that landed since the reader's last barrier
  // (smp_rmb(), cpu_relax(), an ordered counter read, the syscall), but
  // not before what an earlier load of the same bytes saw (coherence).
  // And the stores a writer makes between two smp_wmb() land in a drawn
  // order (stores to the same bytes keep theirs), in reorder_ppm of
  // updates. A kernel tree's code reports its barriers through KCSAN's
  // instrumentation (docs/scenarios.md); a compiled image's loads, whose
  // barriers nothing reports, stay in program order.
  uint32_t reorder_ppm = 0;

  friend bool operator==(const FaultSpec&, const FaultSpec&) = default;
};

struct CheckSpec {
  bool exact = true;        // 1: vDSO == syscall at the counter used.
  bool monotonic = true;    // 2: per reader, per clock.
  bool causal = true;       // 3: across readers, by true time.
  bool sane = true;         // 4: tv_nsec in [0, 1e9), sane tv_sec.
  bool raw_rate = true;     // 5: RAW exact; MONOTONIC at the NTP rate.
  bool cross_clock = true;  // 6: BOOT-MONO, REAL-MONO, TAI-REAL, coarse.
  bool torn = true;         // 7: the value of some consistent page state.
  uint32_t livelock_budget = 10000;  // 8: loop iterations before giving up.

  friend bool operator==(const CheckSpec&, const CheckSpec&) = default;
};

enum class Strategy {
  kRandom,      // Seeded random timing, preemption and stalls.
  kExhaustive,  // Every distinct interleaving of one call with k updates.
};

// What the exhaustive strategy races against the updates.
enum class ExhaustiveShape {
  kOneCall,     // One call of the first reader.
  kTwoCalls,    // Two consecutive calls of the first reader (monotonic).
  kTwoReaders,  // The first reader's call, then the second reader's on its
                // own CPU, started after the first ended (causal).
};

// How the exhaustive strategy enumerates.
enum class Reduction {
  kNone,  // Every distinct interleaving, one execution each.
  kPor,   // Partial-order reduction: one execution per reached state.
};

// Which call a replay file points at (written with a failure).
struct ReplaySpec {
  bool present = false;
  int reader = 0;              // Reader id.
  uint64_t call = 0;           // That reader's call number.
  std::string property;        // The property it violated.
  std::vector<int> decisions;  // Exhaustive: the interleaving's choices.
  // The run accepted documented kernel behaviours (--accept=known): its
  // replay judges by the same rule, so a known behaviour where the defect
  // was is no recurrence.
  bool accept_known = false;

  friend bool operator==(const ReplaySpec&, const ReplaySpec&) = default;
};

// Where the variant under test came from when it is not built in, so that
// a replay file loads it again and says what ran (`[variant]`).
struct VariantSource {
  bool present = false;
  std::string plugin;                // A plugin's shared object (--variant-so).
  std::string plugin_sha256;         // Its content when the run was made.
  std::string kernel_tree;           // A kernel tree (--kernel-tree)...
  std::vector<std::string> patches;  // ...and the patches applied to it.
  // The tree's compiled code (ktree::BuiltVariant::code_sha256) when the
  // run was made: a directory tree edited since builds other code.
  std::string tree_code_sha256;
  // A compiled vDSO (hostvdso/): "[vdso]" for the running kernel's image
  // (--variant=host), else the file of --vdso-image; and the sha256 of
  // the image's bytes when the run was made.
  std::string vdso_image;
  std::string vdso_image_sha256;
  std::string origin;  // What the variant says of itself (ABI v2 origin).
  // A kernel tree whose kernel/time publishes the page (--kernel-time),
  // and the patches applied to it.
  std::string kernel_time;
  std::vector<std::string> kernel_time_patches;
  // --call-timeout when the run was given one (0: the default): a replay
  // without the flag bounds the calls as the run did, or a call the run
  // found spinning may pass it.
  uint64_t call_timeout_ns = 0;

  friend bool operator==(const VariantSource&, const VariantSource&) = default;
};

struct RunSpec {
  uint64_t duration_ns = 1000000000;
  uint64_t seed = 1;
  Strategy strategy = Strategy::kRandom;
  std::string reader = "upstream";  // The variant (vdsolab variants).
  // A replay file's: the scenario file its run was cut from (absolute),
  // and that file's sha256 then. With another variant whose schedule
  // diverges from the replay's, `vdsolab replay` runs that scenario whole
  // instead (sim/replay.cc), so that a fix gets a verdict.
  std::string origin;
  std::string origin_sha256;
  // kExhaustive: the call starts just before the first update at or after
  // exhaustive_at_ns, and races the next `exhaustive_updates` updates.
  uint64_t exhaustive_at_ns = 100000000;
  int exhaustive_updates = 1;
  // The window slides on from exhaustive_at_ns, one update at a time,
  // until one of its updates carries a reader's clock into a new second:
  // the one moment its basetime sec moves too, which a window anywhere
  // else never varies (a sec load outside the seq loop is wrong only
  // there). A variant's own clocks, which the syscall model does not
  // answer, have no basetime: for them the window stays at exhaustive_at.
  bool exhaustive_rollover = false;
  ExhaustiveShape exhaustive_shape = ExhaustiveShape::kOneCall;
  Reduction exhaustive_reduction = Reduction::kNone;

  friend bool operator==(const RunSpec&, const RunSpec&) = default;
};

struct Scenario {
  std::string name = "unnamed";
  std::string description;
  MachineSpec machine;
  KernelSpec kernel;
  TimingSpec timing;
  std::vector<EventSpec> events;
  std::vector<ReaderSpec> readers = {ReaderSpec{}};
  FaultSpec faults;
  CheckSpec checks;
  RunSpec run;
  ReplaySpec replay;
  VariantSource variant;

  friend bool operator==(const Scenario&, const Scenario&) = default;
};

// Checks every field's range; the message names the field and the value.
absl::Status ValidateScenario(const Scenario& scenario);

// What a valid scenario probably does not mean: an event or a counter step
// after the run's end (it never happens), a pause that outlasts the run
// (no reader runs after it starts), a reader period as long as the run (it
// may make no call), an event inside a suspend or a pause (no task runs
// there). One line each, for stderr, starting with the key.
std::vector<std::string> ScenarioWarnings(const Scenario& scenario);

// The timekeeper profile kernel.era and kernel.defects name.
absl::StatusOr<timekeeper::TimekeeperProfile> KernelProfile(
    const KernelSpec& kernel);

// EventSpec::expect_readback as (field, value) pairs.
absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> ParseReadback(
    const std::vector<std::string>& items);

// A reader's id: its `id` field, or its index when that is -1.
int ReaderId(const Scenario& scenario, size_t index);

// The names the TOML files use, e.g. "adjtimex_frequency", "MONOTONIC_RAW".
const char* EventKindName(EventKind kind);
const char* StrategyName(Strategy strategy);
const char* ExhaustiveShapeName(ExhaustiveShape shape);
const char* ReductionName(Reduction reduction);
// "MONOTONIC" for CLOCK_MONOTONIC; ids without a name as decimal.
std::string ClockShortName(ClockId clock);

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_SCENARIO_H_
