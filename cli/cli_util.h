// File: cli/cli_util.h
//
// What the CLI's commands share: Ctrl-C handling, error messages, and paths
// as the user meant them under `bazel run`.

#ifndef VDSOLAB_CLI_CLI_UTIL_H_
#define VDSOLAB_CLI_CLI_UTIL_H_

#include <signal.h>

#include <atomic>
#include <string>

namespace vdsolab::cli {

// Set by Ctrl-C while an InterruptScope is alive.
std::atomic<bool>& StopFlag();

// Ctrl-C (SIGINT) or SIGTERM stops the long-running command; what was
// found so far still prints.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  struct sigaction old_int_;
  struct sigaction old_term_;
};

// Prints a command's --format=json answer on stdout: one object whose
// first members are the envelope every command shares (docs/json.md):
// {"vdsolab": VERSION, "schema": 1, "command": ..., "exit": ..., ...}.
// Returns `exit_code`.
int PrintJson(const std::string& command, int exit_code,
              const std::string& body_members_json);

// "ETA 12 s" from the time so far and the fraction done.
std::string FormatEta(double elapsed_s, double fraction_done);

bool FileExists(const std::string& path);

// "vdsolab: <message>" on stderr.
void Fail(const std::string& message);

// A path as the user meant it: relative to the directory `bazel run` was
// started in, else to the runfiles (for the built-in scenarios/).
std::string ResolveInputPath(const std::string& path);
std::string ResolveOutputPath(const std::string& path);

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_CLI_UTIL_H_
