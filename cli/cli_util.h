// File: cli/cli_util.h
//
// What the CLI's commands share: Ctrl-C handling, error messages, and paths
// as the user meant them under `bazel run`.

#ifndef VDSOLAB_CLI_CLI_UTIL_H_
#define VDSOLAB_CLI_CLI_UTIL_H_

#include <signal.h>

#include <atomic>
#include <cstddef>
#include <string>

namespace vdsolab::cli {

// Set by Ctrl-C while an InterruptScope is alive.
std::atomic<bool>& StopFlag();
// The signal that set it (SIGINT or SIGTERM), or 0.
int StopSignal();

// The exit status of a command Ctrl-C may have stopped: `exit` when it ran
// to its end or found a failure (a failure stands, however far the run
// got), else 128 + the signal, the status a shell gives a process that
// signal ended: a run cut short proves nothing, so it must not exit 0.
int InterruptedExit(int exit);

// Returns `exit`; an InterruptedExit() of 128 + signal ends the process by
// that signal instead (stdout flushed, one line on stderr), so that a
// shell or a build tool sees the run was stopped, not passed.
int FinishCommand(int exit);

// Ctrl-C (SIGINT) or SIGTERM stops the long-running command; what was
// found so far still prints. A second one ends the process at once, by
// the signal.
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

// A note on stderr naming a patch's hunks that applied only with fuzz
// (patch dropped context lines to place them), if there are any.
void NoteFuzzyHunks(const std::string& hunks);

// "--FLAG=VALUE: message", unless the message already starts with
// "--FLAG=" (a library that names the flag itself).
std::string FlagError(const std::string& flag, const std::string& value,
                      const std::string& message);

// A path as the user meant it: relative to the directory `bazel run` was
// started in, else to the runfiles (for the built-in scenarios/).
std::string ResolveInputPath(const std::string& path);

// `path` among the built-in files (the runfiles: RUNFILES_DIR,
// TEST_SRCDIR, or beside the binary), whatever the working directory has;
// "" if it is not one.
std::string BuiltinInputPath(const std::string& path);
// For an input `path` that ResolveInputPath() found nowhere: a hint when it
// names one of the built-in files (scenarios/...) and this binary has no
// runfiles tree beside it (a copy of bazel-bin/cli/vdsolab); else "".
std::string MissingBuiltinHint(const std::string& path);
// `path` made absolute against the working directory if it names a file
// or directory there (else unchanged): for paths a replay file records,
// which `vdsolab replay` may read from anywhere.
std::string AbsoluteInputPath(const std::string& path);
// The directory `path` names a file in: "." for a bare name, "/" at the
// root.
std::string ParentDir(const std::string& path);
std::string ResolveOutputPath(const std::string& path);
// The working directory vdsolab started in, kept open (main(), before any
// code under test runs): ResolveOutputPath() returns to it first, so that
// code under test that calls chdir() does not move vdsolab's output files
// away from the paths it prints.
void RememberStartDirectory();

// A file-name stem made from free text (a scenario's `name`, a variant's):
// the bytes [A-Za-z0-9._+-] kept, every other byte '-', no leading '.' or
// '-' (so no hidden file, no flag-like name, no "..": the stem never
// leaves its directory), at most kMaxFileStem bytes, "scenario" if nothing
// is left.
inline constexpr size_t kMaxFileStem = 64;
std::string SafeFileStem(const std::string& text);

// `arg` as one shell word, to paste: as it is when it needs no quoting,
// else in single quotes.
std::string ShellQuote(const std::string& arg);

// A path as one shell word for a command's argument: ShellQuote(), after
// "./" before a relative path starting with '-' (not to be taken for a
// flag).
std::string ShellQuotePath(const std::string& path);

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_CLI_UTIL_H_
