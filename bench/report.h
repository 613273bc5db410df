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
#include "common/clockid.h"
#include "variants/variant.h"

namespace vdsolab::bench {

struct ReportOptions {
  bool report = false;
  bool quick = false;
  // Empty: docs/benchmarks.md in the workspace (under `bazel run`), else in
  // the current directory.
  std::string out;
};

struct Measured {
  double ns_per_op = 0;                    // Real time per iteration.
  std::map<std::string, double> counters;  // As reported (rates per s).
  // Each counter's lowest and highest over the repetitions (results()).
  std::map<std::string, std::pair<double, double>> counter_range;
};

// A console reporter that also keeps every run's figures by name.
// Prints as the console reporter does and keeps every repetition of every
// benchmark; results() gives each benchmark's median repetition (time and
// each counter), which one slow repetition (a tick, a migration) does not
// move, and each counter's range over the repetitions.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override;
  std::map<std::string, Measured> results() const;

 private:
  std::map<std::string, std::vector<Measured>> repetitions_;
};

// Seed 003's count of calls in an interval, for one clock source.
struct CallCount {
  std::string label;  // The row's name in the report.
  // The vdsolab reader counted, and its clock; nullptr for the host's.
  const variants::Variant* variant = nullptr;
  ClockId clock = 0;
  uint64_t calls = 0;
};

struct SeedFigures {
  std::vector<std::pair<std::string, LatencyResult>> latency;
  std::vector<CallCount> calls;
  uint64_t interval_ns = 0;
  std::vector<std::pair<std::string, double>> cycles;
};

std::string FormatReport(const MachineInfo& machine,
                         const std::string& host_mode,
                         const std::map<std::string, Measured>& results,
                         const SeedFigures& seeds,
                         const ReportOptions& options);

// The line after which a report file is written by hand (analyses measured
// once, with their machine and date): WriteReport() keeps that part of the
// file it replaces.
inline constexpr char kHandWrittenMarker[] =
    "<!-- Hand-written below this line: --report keeps it. -->";

// Writes the report to options.out (a relative path is taken from where
// `bazel run` was started), followed by the hand-written part of the file
// it replaces, if any; false with a message on failure.
bool WriteReport(const std::string& markdown, const ReportOptions& options);

}  // namespace vdsolab::bench

#endif  // VDSOLAB_BENCH_REPORT_H_
