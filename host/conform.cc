#include "host/conform.h"

#include <signal.h>

#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "host/conform_experiment.h"
#include "host/conform_messages.h"
#include "host/conform_sandbox.h"

namespace vdsolab::host {

absl::StatusOr<ConformReport> RunConform(const ConformOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  // A bound on the whole pass: the host code loops over whole seconds in
  // __iter_div_u64_rem(), and a bad counter choice must not hang us.
  absl::StatusOr<ChildOutcome> child = RunInChild(
      [&options](int fd) {
        conform_internal::MessageWriter out(fd);
        return RunConformExperiment(options, out);
      },
      static_cast<unsigned>(60 + options.samples / 50));
  if (!child.ok()) return child.status();
  ConformReport report;
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  if (child->signal != 0) {
    return absl::InternalError(absl::StrFormat(
        "the conformance child died of signal %d%s", child->signal,
        child->signal == SIGALRM ? " (it ran out of time)" : ""));
  }
  if (absl::Status s = conform_internal::ReadMessages(child->output, &report);
      !s.ok()) {
    return s;
  }
  if (!report.skip_reason.empty()) return report;
  if (!child->exited || child->exit_code != 0) {
    return absl::InternalError("the conformance child failed");
  }
  report.supported = true;
  const UpdateAnalysis& a = report.analysis;
  report.prediction_holds = PredictionHolds(a);
  return report;
}

namespace {

std::string CellTable(
    const std::map<std::pair<ClockId, int>, ConformCell>& cells) {
  std::string o = absl::StrFormat("%-24s", "clock");
  for (int reg = 0; reg < kNumRegimes; ++reg) {
    absl::StrAppendFormat(&o, " %18s", RegimeName(static_cast<Regime>(reg)));
  }
  o += "\n";
  for (ClockId clock : kVdsoServedClocks) {
    absl::StrAppendFormat(&o, "%-24s", ClockName(clock));
    for (int reg = 0; reg < kNumRegimes; ++reg) {
      auto it = cells.find({clock, reg});
      const ConformCell cell = it == cells.end() ? ConformCell{} : it->second;
      absl::StrAppendFormat(
          &o, " %18s",
          absl::StrFormat("%d/%d", cell.compared - cell.mismatches,
                          cell.compared));
    }
    o += "\n";
  }
  return o;
}

}  // namespace

std::string FormatConformReport(const ConformReport& r) {
  if (!r.supported) {
    return absl::StrFormat("vdsolab conform: not supported here: %s\n",
                           r.skip_reason);
  }
  std::string o = absl::StrFormat(
      "vdsolab conform: the host vDSO code (Linux %s, clock mode %s) against "
      "vdsolab's upstream reader\n%d comparisons, %d mismatches; %d page "
      "copies retried after a kernel update; %d counter reads emulated at %d "
      "patched rdtsc/rdtscp sites; %.2f s\n\n",
      r.kernel, r.clock_mode, r.compared + r.synthetic_compared,
      r.mismatches + r.synthetic_mismatches, r.page_races, r.counter_traps,
      r.patched_sites, r.seconds);
  absl::StrAppendFormat(&o, "live page (%d comparisons, %d mismatches):\n%s",
                        r.compared, r.mismatches, CellTable(r.cells));
  absl::StrAppendFormat(
      &o,
      "\nsynthetic TSC pages from the timekeeper model (%d comparisons, %d "
      "mismatches):\n%s",
      r.synthetic_compared, r.synthetic_mismatches,
      CellTable(r.synthetic_cells));
  o += "(equal/compared per clock and counter regime)\n";
  o += FormatUpdateAnalysis(r.analysis);  // Ends with the prediction's verdict.
  for (const std::string& d : r.mismatch_details) {
    absl::StrAppendFormat(&o, "\nMISMATCH %s\n", d);
  }
  absl::StrAppendFormat(
      &o, "\n%s\n",
      r.mismatches == 0 && r.synthetic_mismatches == 0 && r.prediction_holds
          ? "PASS: bit-exact agreement with the host vDSO."
          : "FAIL");
  return o;
}

}  // namespace vdsolab::host
