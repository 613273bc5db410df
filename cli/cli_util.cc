#include "cli/cli_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "cli/version.h"
#include "variants/plugin/call_guard.h"

namespace vdsolab::cli {
namespace {

std::atomic<int> g_stop_signal{0};

// Ends the process by `sig`'s default action, as a shell expects of an
// interrupted command. Async-signal-safe (sigaction, sigprocmask, raise
// and _exit all are), so the handler below uses it too: there `sig` is
// masked, and unmasking it delivers the raised signal at once.
[[noreturn]] void DieBy(int sig) {
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  _exit(128 + sig);  // Not reached unless the signal is ignored by policy.
}

extern "C" void OnInterrupt(int sig) {
  // It may interrupt a plugin's call: DieBy()'s sigaction() is vdsolab's.
  const variants::OwnSignalHandler own;
  // A second one: the command is slow to reach its next stop check (a
  // minimisation does not poll the flag); end it now, by the signal.
  if (StopFlag().load()) DieBy(sig);
  // Lock-free atomics only: async-signal-safe. The signal is stored first;
  // the loops poll the flag, and the command reads the signal after them.
  g_stop_signal.store(sig);
  StopFlag().store(true);
}

}  // namespace

std::atomic<bool>& StopFlag() {
  static std::atomic<bool> stop{false};
  return stop;
}

int StopSignal() { return g_stop_signal.load(); }

int InterruptedExit(int exit) {
  const int sig = StopSignal();
  if (sig == 0 || exit != 0) return exit;  // 0: kExitOk (commands.h).
  return 128 + sig;
}

int FinishCommand(int exit) {
  const int sig = StopSignal();
  if (sig == 0 || exit != 128 + sig) return exit;
  std::fflush(stdout);
  std::fprintf(stderr,
               "vdsolab: stopped by %s before the end: what ran is no "
               "verdict\n",
               sig == SIGINT ? "SIGINT" : "SIGTERM");
  std::fflush(stderr);
  DieBy(sig);
}

InterruptScope::InterruptScope() {
  struct sigaction sa = {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

int PrintJson(const std::string& command, int exit_code,
              const std::string& body) {
  // `body` is a JSON object's text; its members follow the envelope's.
  std::string members = body.size() >= 2 ? body.substr(1, body.size() - 2) : "";
  std::printf(
      "{\"vdsolab\": \"%s\", \"schema\": 1, \"command\": \"%s\", "
      "\"exit\": %d%s%s}\n",
      kVersion, command.c_str(), exit_code, members.empty() ? "" : ", ",
      members.c_str());
  return exit_code;
}

std::string FormatEta(double elapsed_s, double fraction_done) {
  if (fraction_done <= 0 || fraction_done > 1 || elapsed_s < 0.5) {
    return "ETA --";
  }
  const double left = elapsed_s * (1 - fraction_done) / fraction_done;
  if (left < 60) return absl::StrFormat("ETA %.0f s", left);
  return absl::StrFormat("ETA %.0f min", left / 60);
}

bool FileExists(const std::string& path) {
  return access(path.c_str(), R_OK) == 0;
}

std::string FlagError(const std::string& flag, const std::string& value,
                      const std::string& message) {
  if (message.starts_with("--" + flag + "=")) return message;
  return absl::StrFormat("--%s=%s: %s", flag, value, message);
}

void Fail(const std::string& message) {
  std::fprintf(stderr, "vdsolab: %s\n", message.c_str());
}

void NoteFuzzyHunks(const std::string& hunks) {
  if (hunks.empty()) return;
  std::fprintf(stderr,
               "vdsolab: note: applied with fuzz (patch matched fewer "
               "context lines than the diff gives, so a change may sit "
               "somewhere other than meant; make the diff against this "
               "tree): %s\n",
               hunks.c_str());
}

std::string AbsoluteInputPath(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return path;
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) return path;
  std::string rel = path;
  while (rel.rfind("./", 0) == 0) rel = rel.substr(2);
  return std::string(cwd) + "/" + rel;
}

std::string ParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "."
         : slash == 0               ? "/"
                                    : path.substr(0, slash);
}

namespace {

// This binary's runfiles tree (<binary>.runfiles; it may not exist), or ""
// when /proc/self/exe cannot be read.
std::string ExeRunfiles() {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe);
  if (n <= 0 || n >= static_cast<ssize_t>(sizeof exe)) return "";
  return std::string(exe, static_cast<size_t>(n)) + ".runfiles";
}

}  // namespace

std::string ResolveInputPath(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    const std::string p = std::string(wd) + "/" + path;
    if (FileExists(p)) return p;
  }
  if (FileExists(path)) return path;
  if (std::string p = BuiltinInputPath(path); !p.empty()) return p;
  return path;  // Let the open fail with the user's own spelling.
}

std::string BuiltinInputPath(const std::string& path) {
  if (path.empty() || path[0] == '/') return "";
  for (const char* env : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    if (const char* dir = std::getenv(env)) {
      const std::string p = std::string(dir) + "/vdsolab/" + path;
      if (FileExists(p)) return p;
    }
  }
  // The binary run directly (bazel-bin/cli/vdsolab from another
  // directory): the built-in files beside it, in its runfiles tree.
  const std::string runfiles = ExeRunfiles();
  if (!runfiles.empty() && FileExists(runfiles + "/vdsolab/" + path)) {
    return runfiles + "/vdsolab/" + path;
  }
  return "";
}

std::string MissingBuiltinHint(const std::string& path) {
  if (path.empty() || path[0] == '/' || FileExists(ResolveInputPath(path)) ||
      !absl::StartsWith(path, "scenarios/")) {
    return "";
  }
  const std::string runfiles = ExeRunfiles();
  if (runfiles.empty() || FileExists(runfiles + "/vdsolab/scenarios")) {
    return "";
  }
  return absl::StrFormat(
      " (the built-in scenarios are in the runfiles beside the binary, "
      "%s/vdsolab/scenarios, which this copy lacks: run bazel-bin/cli/vdsolab "
      "itself, copy its .runfiles too, or name the file by its path in a "
      "checkout)",
      runfiles);
}

namespace {
int g_start_dir = -1;  // RememberStartDirectory()'s descriptor.
}  // namespace

void RememberStartDirectory() {
  if (g_start_dir < 0)
    g_start_dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

std::string ResolveOutputPath(const std::string& path) {
  // A plugin's or tree's chdir() is undone before vdsolab writes (its own
  // code never changes directory). A failure leaves the directory as it is.
  if (g_start_dir >= 0 && fchdir(g_start_dir) != 0) {
    // Stay where we are: the path is resolved as given.
  }
  if (!path.empty() && path[0] == '/') return path;
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    return std::string(wd) + "/" + path;
  }
  return path;
}

std::string SafeFileStem(const std::string& text) {
  std::string stem;
  for (const char c : text) {
    if (stem.size() == kMaxFileStem) break;
    const bool keep = absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
                      c == '.' || c == '_' || c == '+' || c == '-';
    const char out = keep ? c : '-';
    if (stem.empty() && (out == '.' || out == '-')) continue;
    stem += out;
  }
  return stem.empty() ? "scenario" : stem;
}

std::string ShellQuote(const std::string& word) {
  const bool plain =
      !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("._+-/:=,@%").find(c) != std::string_view::npos;
      });
  if (plain) return word;
  return absl::StrCat("'", absl::StrReplaceAll(word, {{"'", "'\\''"}}), "'");
}

std::string ShellQuotePath(const std::string& path) {
  return ShellQuote(!path.empty() && path[0] == '-' ? absl::StrCat("./", path)
                                                    : path);
}

}  // namespace vdsolab::cli
