// File: ktree/internal/subprocess.h
//
// Runs a tool (the compiler, tar, patch, objdump) with an argument vector,
// no shell, under LC_ALL=C (ASCII quotes in diagnostics), and collects its
// standard output and error.

#ifndef VDSOLAB_KTREE_INTERNAL_SUBPROCESS_H_
#define VDSOLAB_KTREE_INTERNAL_SUBPROCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace vdsolab::ktree::internal {

struct RunOutput {
  int exit_code = 0;   // 128 + signal if killed by one.
  std::string output;  // stdout and stderr, interleaved as written.
};

// An error only when the program could not be started (the message names
// it); a non-zero exit is a result.
absl::StatusOr<RunOutput> RunProgram(const std::vector<std::string>& argv);

// The command as a shell line, for build logs.
std::string ShellQuote(const std::vector<std::string>& argv);

}  // namespace vdsolab::ktree::internal

#endif  // VDSOLAB_KTREE_INTERNAL_SUBPROCESS_H_
