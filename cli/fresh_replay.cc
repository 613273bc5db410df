#include "cli/fresh_replay.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_format.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/variant_flags.h"

namespace vdsolab::cli {

std::optional<bool> ReproducesInFreshProcess(const std::string& file) {
  const std::string path = ResolveOutputPath(file);  // From the start dir.
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return std::nullopt;
  if (pid == 0) {
    // Only async-signal-safe calls between fork() and exec().
    const int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
    }
    execl("/proc/self/exe", "vdsolab", "replay", path.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // A replay is one short run; a plugin that spins is stopped by its call
  // guard, and 2 minutes bound the rest.
  for (int i = 0; i < 12000; ++i) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (!WIFEXITED(status)) return std::nullopt;
      if (WEXITSTATUS(status) == kExitOk) return false;
      if (WEXITSTATUS(status) == kExitFailed) return true;
      return std::nullopt;
    }
    if (r < 0) return std::nullopt;
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return std::nullopt;
}

std::string StaleReplayWarning(const std::string& file,
                               const variants::Variant& variant) {
  if (file.empty() || SourceOf(&variant).plugin.empty() ||
      ReproducesInFreshProcess(file) != false) {
    return "";
  }
  return absl::StrFormat(
      "the minimal replay %s does not reproduce in a fresh process: plugin "
      "%s answers the same calls otherwise after what ran before it in this "
      "process (state kept between calls or runs, which docs/plugins.md "
      "rules out), so its minimal failure may be an artefact of that state; "
      "the failures of the run are real, and the run itself (the same "
      "scenario and seed) shows them",
      file, variant.name);
}

}  // namespace vdsolab::cli
