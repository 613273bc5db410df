// File: cli/compare.h
//
// `vdsolab compare`: every variant (or the ones named) through the same
// scenarios and properties, as a variants x properties table with the
// first minimal replay file of each failure, the measured divergence of
// clocks without a kernel oracle, and the seeds' own predictions checked.

#ifndef VDSOLAB_CLI_COMPARE_H_
#define VDSOLAB_CLI_COMPARE_H_

#include <string>
#include <vector>

namespace vdsolab::cli {

struct CompareOptions {
  std::string scenarios_dir = "scenarios";  // Every *.toml in it.
  std::vector<std::string> variants;        // Empty: all of them.
  std::string out_dir = "compare-out";      // Replay files go here.
  bool json = false;
};

// Exit 0 when every run ran (failures are findings, shown in the table),
// 1 when a variant could not run a scenario, 2 on bad input.
int Compare(const CompareOptions& options);

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_COMPARE_H_
