// File: ktime/conform.h
//
// The differential oracle (vdsolab conform-model): random operation
// sequences run on the timekeeper model (timekeeper/, in the tree's era
// profile) and on the tree's own kernel/time code (kernel_time.h) from the
// same state; after every operation the timekeeper's fields, ntp.c's state,
// adjtimex()'s return value and read-back, the vDSO data, the syscall
// clocks (the tree's ktime_get_real_ts64() and others) and its WARN()s are
// compared. A difference is shrunk to a minimal sequence and reported with
// its first differing field (docs/ktime.md).

#ifndef VDSOLAB_KTIME_CONFORM_H_
#define VDSOLAB_KTIME_CONFORM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/timespec.h"
#include "ktime/kernel_time.h"
#include "ktime/ktime.h"
#include "timekeeper/profile.h"
#include "timekeeper/timex.h"

namespace vdsolab::ktime {

enum class OpKind {
  kTick,          // update_wall_time() one tick (with jitter) later
  kIdle,          // update_wall_time() after a long NO_HZ idle
  kAdjtimex,      // do_adjtimex()
  kSetTime,       // do_settimeofday64()
  kInjectOffset,  // timekeeping_inject_offset()
  kSuspend,       // timekeeping_suspend(), sleep, timekeeping_resume()
  // timekeeping_inject_sleeptime64(): what an RTC driver's rtc_resume()
  // adds when neither the clocksource nor the persistent clock measured a
  // sleep.
  kInjectSleeptime,
  // timekeeping_notify(): change_clocksource() to another registered
  // clocksource (forward on the old, tk_setup_internals() on the new,
  // TK_CLEAR_NTP), whose counter then runs the sequence.
  kChangeClocksource,
};

// The clocksource a sequence runs on, as its driver registers it.
enum class SourceKind {
  kTsc,       // tsc.c: clocksource_register_khz(tsc_khz), 64 bits
  kHpet,      // hpet.c: 14.318180 MHz, 32 bits, no vDSO mode here
  kAcpiPm,    // acpi_pm.c: 3.579545 MHz, 24 bits
  kKvmClock,  // kvmclock.c: 1 GHz, 64 bits, VDSO_CLOCKMODE_PVCLOCK
};

struct Op {
  OpKind kind = OpKind::kTick;
  uint64_t cycles = 0;        // Counter advance before the operation.
  timekeeper::Timex txc;      // kAdjtimex
  Timespec64 ts;              // kSetTime, kInjectOffset, kInjectSleeptime
  uint64_t sleep_cycles = 0;  // kSuspend: counter advance while asleep
  int64_t sleep_sec = 0;      // kSuspend: the RTC's advance
  // kChangeClocksource: the clocksource switched to, and its counter then.
  SourceKind source = SourceKind::kTsc;
  uint64_t new_counter = 0;
};

// One sequence: a clocksource frequency and boot state, then operations.
struct Sequence {
  SourceKind source = SourceKind::kTsc;
  uint32_t tsc_khz = 2600000;  // kTsc's frequency.
  bool suspend_nonstop = false;
  uint64_t start = 0;  // The counter at timekeeping_init().
  Timespec64 wall;     // read_persistent_clock64() at boot.
  // The ntp_tick_adj= boot parameter, ns per second (0: not given).
  int64_t ntp_tick_adj = 0;
  std::vector<Op> ops;
};

struct ConformOptions {
  uint64_t ops = 100000;  // Operations in all.
  uint64_t seed = 1;
  int ops_per_sequence = 200;
};

struct ConformResult {
  uint64_t ops_compared = 0;
  uint64_t sequences = 0;
  double model_ops_per_s = 0;
  double tree_ops_per_s = 0;
  bool ok = true;
  // On a difference: the minimal sequence, the index of its failing
  // operation, the first differing field and both values.
  Sequence minimal;
  size_t failing_op = 0;
  std::string difference;
  std::string events;  // The tree's printk/events of the minimal run.
  std::vector<std::string> op_counts;  // "adjtimex 12345", ...
  // The tree's WARN()s in the comparisons (each goes on after its trap, as
  // in the kernel), and where the first was ("kernel/time/...c:2043").
  uint64_t tree_warns = 0;
  std::string first_warn;
};

// The era profile for a tree version ("6.12.117" -> "6.10").
absl::StatusOr<timekeeper::TimekeeperProfile> ProfileForTree(
    const std::string& version);

// The profile the model needs to be the tree's oracle: its era's
// (ProfileForTree) plus the later changes the tree carries, found by
// running it (KnownBackports(): a stable tree's backports). Resets the
// tree's statics.
struct TreeProfile {
  timekeeper::TimekeeperProfile profile;
  std::vector<std::string> backports;
  // The tree's code faulted while probed (a patch's bug): its backports
  // are unknown, the era's profile is used as it is. "" if it did not.
  std::string probe_fault;
};
absl::StatusOr<TreeProfile> ProfileForKernelTime(const KernelTime& kt,
                                                 const std::string& version);

// The profile to judge the build of `options` by, `kt` loaded from it:
// with patches, the unpatched tree's (built or found in the cache), whose
// probe a patch cannot move. A patch that reverts a backport is then a
// difference from the model, not silently judged by the older profile it
// made the probe find. `note`: what the patched build's own probe found
// instead (other backports, or a fault) when it differs; "" otherwise.
absl::StatusOr<TreeProfile> ProfileForBuild(const BuildOptions& options,
                                            const KernelTime& kt,
                                            const std::string& version,
                                            std::string* note);

absl::StatusOr<ConformResult> RunConform(
    const KernelTime& kt, const timekeeper::TimekeeperProfile& profile,
    const ConformOptions& options);

// Runs one sequence on both; "" if they agree after every operation, else
// the first difference ("op 3 (adjtimex): tkr_mono.mult: model 1, tree 2"),
// with *failing_op set.
std::string CompareSequence(const KernelTime& kt,
                            const timekeeper::TimekeeperProfile& profile,
                            const Sequence& seq, size_t* failing_op);

std::string FormatOp(const Op& op);
std::string FormatSequence(const Sequence& seq);

}  // namespace vdsolab::ktime

#endif  // VDSOLAB_KTIME_CONFORM_H_
