#include "cli/cli_util.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace vdsolab::cli {
namespace {

extern "C" void OnInterrupt(int) { StopFlag().store(true); }

}  // namespace

std::atomic<bool>& StopFlag() {
  static std::atomic<bool> stop{false};
  return stop;
}

InterruptScope::InterruptScope() {
  struct sigaction sa = {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_);
}

InterruptScope::~InterruptScope() { sigaction(SIGINT, &old_, nullptr); }

bool FileExists(const std::string& path) {
  return access(path.c_str(), R_OK) == 0;
}

void Fail(const std::string& message) {
  std::fprintf(stderr, "vdsolab: %s\n", message.c_str());
}

std::string ResolveInputPath(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    const std::string p = std::string(wd) + "/" + path;
    if (FileExists(p)) return p;
  }
  if (FileExists(path)) return path;
  for (const char* env : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    if (const char* dir = std::getenv(env)) {
      const std::string p = std::string(dir) + "/vdsolab/" + path;
      if (FileExists(p)) return p;
    }
  }
  return path;  // Let the open fail with the user's own spelling.
}

std::string ResolveOutputPath(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    return std::string(wd) + "/" + path;
  }
  return path;
}

}  // namespace vdsolab::cli
