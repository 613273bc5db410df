// File: sim/oracle_run.h
//
// The default job (`vdsolab` without a command): a simulated machine (one
// TSC at an exact frequency, periodic ticks with jitter, an NTP frequency
// offset set by adjtimex()) drives the timekeeper model, which publishes
// every update into the vvar page through a variant's writer; one reader
// samples every clock id through the variant's reader and through the
// timekeeper's clock_gettime() at the same counter value, and the run
// counts mismatches and backwards steps per clock. A reader with other
// entry points (a kernel tree's gettimeofday(), time(), clock_getres())
// has them sampled too, against the model's system calls.
//
// Updates are applied whole at their tick here; interleaving them with
// reader loads is the job of the simulation engine. The run shares none of
// the engine's machinery (Machine, Writer, Checker): it is the independent
// cross-check of a reader against the syscall model that the engine's
// checker rests on (docs/architecture.md).

#ifndef VDSOLAB_SIM_ORACLE_RUN_H_
#define VDSOLAB_SIM_ORACLE_RUN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/timespec.h"
#include "variants/variant.h"

namespace vdsolab::sim {

struct OracleRunConfig {
  uint64_t seed = 1;
  uint64_t tsc_hz = 2600000000;    // True counter frequency.
  int hz = 250;                    // CONFIG_HZ.
  int64_t ntp_freq = 42 << 16;     // adjtimex() freq: scaled ppm.
  uint64_t ntp_at_ns = 300000000;  // When adjtimex() runs.
  uint64_t duration_ns = 10000000000;
  uint32_t reads_per_tick = 40;
  uint64_t tick_jitter_ns = 20000;  // Ticks land up to this late.
  // REALTIME at boot; drawn from the seed when unset.
  std::optional<Timespec64> boot_wall;
  // --accept=known: a step back the variant's era documents passes.
  bool accept_known = false;
};

// Rejects configurations the run cannot honour, naming the bad value.
absl::Status ValidateOracleRunConfig(const OracleRunConfig& config);

struct ClockStats {
  ClockId clock = 0;
  std::string name;
  // A row of a reader's other entry point ("gettimeofday()", "time()",
  // "clock_getres()"; `clock` unused), else "".
  std::string entry_point;
  uint64_t reads = 0;
  uint64_t fallbacks = 0;   // Reads the vDSO passed to the syscall.
  uint64_t errors = 0;      // Reads that returned -errno.
  uint64_t mismatches = 0;  // vDSO result != syscall result.
  uint64_t max_abs_diff_ns = 0;
  uint64_t backwards = 0;  // Reads below this clock's previous read...
  uint64_t known = 0;      // ...of which the variant's era explains.
  // A kernel clock the variant says it answers from the page (Variant::
  // vdso_clocks) of which any read went to the syscall: the page in TSC
  // mode publishes it and the counter is far below bit 63, so no era's
  // reader falls back and its fast path is lost (a patch that made the
  // vDSO fall back answers right, ten times slower).
  bool page_path_lost = false;
};

struct OracleRunReport {
  OracleRunConfig config;
  std::string variant;  // Its name.
  // What the timekeeper ran on.
  uint32_t tsc_khz = 0;
  uint32_t mult = 0;
  uint32_t shift = 0;
  uint64_t max_cycles = 0;
  uint64_t cycle_interval = 0;
  uint32_t final_mult = 0;  // tkr_mono.mult after NTP steering.
  uint64_t updates = 0;     // update_vsyscall() calls.
  uint64_t reads = 0;
  std::vector<ClockStats> clocks;     // One row per clock id sampled.
  std::vector<std::string> failures;  // First few, with replay details.
  // First few step backs the era documents, under accept_known (else they
  // are failures).
  std::vector<std::string> accepted;
  std::vector<std::string> kernel_log;
  // Why the reads stopped before the end ("" if they did not): after
  // kMaxSpins calls the watchdog stopped, as `run` stops (each costs the
  // call bound, and a tree that spins on every call would take hours).
  std::string stop_reason;

  bool ok() const { return ok_accepting(config.accept_known); }
  // Whether it would be ok with the era's documented step backs accepted
  // (--accept=known) or not.
  bool ok_accepting(bool known) const;
};

absl::StatusOr<OracleRunReport> RunOracleCheck(
    const OracleRunConfig& config, const variants::Variant& variant);

// The report as a table for people; byte-identical for the same config.
// Without its last line, the verdict, if `verdict` is false (the default
// job prints its races before it).
std::string FormatOracleRunReport(const OracleRunReport& report,
                                  bool verdict = true);
// That last line: "PASS: every read matched ..." or "FAIL: see above.".
// `rest_held`: whatever the caller checked besides held too (the default
// job's races), so that a report failing only on its era's documented
// behaviour may say that --accept=known lets it pass.
std::string OracleVerdict(const OracleRunReport& report, bool rest_held = true);

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_ORACLE_RUN_H_
