// File: bench/report.h
//
// Collects what Google Benchmark measured and turns it, with the seeds'
// measures and the machine, into the Markdown report (docs/benchmarks.md):
// every ratio comes from the same run.

#ifndef VDSOLAB_BENCH_REPORT_H_
#define VDSOLAB_BENCH_REPORT_H_

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench/machine_info.h"
#include "bench/seed_measures.h"

namespace vdsolab::bench {

struct ReportOptions {
  bool report = false;
  bool quick = false;
  std::string out = "docs/benchmarks.md";
};

struct Measured {
  double ns_per_op = 0;                    // Real time per iteration.
  std::map<std::string, double> counters;  // As reported (rates per s).
};

// A console reporter that also keeps every run's figures by name.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override;
  const std::map<std::string, Measured>& results() const { return results_; }

 private:
  std::map<std::string, Measured> results_;
};

struct SeedFigures {
  std::vector<std::pair<std::string, LatencyResult>> latency;
  std::vector<std::pair<std::string, uint64_t>> calls;
  uint64_t interval_ns = 0;
  std::vector<std::pair<std::string, double>> cycles;
};

std::string FormatReport(const MachineInfo& machine,
                         const std::string& host_mode,
                         const std::map<std::string, Measured>& results,
                         const SeedFigures& seeds,
                         const ReportOptions& options);

// Writes the report to options.out (relative to where `bazel run` was
// started); false with a message on failure.
bool WriteReport(const std::string& markdown, const ReportOptions& options);

}  // namespace vdsolab::bench

#endif  // VDSOLAB_BENCH_REPORT_H_
