#include "cli/commands.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_format.h"
#include "host/conform.h"
#include "host/inspect.h"
#include "host/live_vvar.h"
#include "sim/engine.h"
#include "sim/exhaustive.h"
#include "sim/run_report.h"
#include "sim/scenario_toml.h"

namespace vdsolab::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void OnInterrupt(int) { g_stop.store(true); }

// Ctrl-C stops the run; the report of what was found so far still prints.
class InterruptScope {
 public:
  InterruptScope() {
    struct sigaction sa = {};
    sa.sa_handler = OnInterrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_);
  }
  ~InterruptScope() { sigaction(SIGINT, &old_, nullptr); }

 private:
  struct sigaction old_;
};

bool FileExists(const std::string& path) {
  return access(path.c_str(), R_OK) == 0;
}

void Fail(const std::string& message) {
  std::fprintf(stderr, "vdsolab: %s\n", message.c_str());
}

// Writes the replay scenario; the run failed either way.
int WriteReplay(const sim::Scenario& replay, const std::string& name,
                uint64_t seed, const std::string& replay_out) {
  const std::string out = ResolveOutputPath(
      !replay_out.empty()
          ? replay_out
          : absl::StrFormat("%s-seed%d.replay.toml", name, seed));
  std::ofstream file(out);
  file << sim::ScenarioToToml(replay);
  file.close();
  if (!file) {
    Fail(absl::StrFormat("cannot write the replay file \"%s\"", out));
    return kExitFailed;
  }
  std::printf("seed: %llu\nreplay file: %s\nreplay it: vdsolab replay %s\n",
              static_cast<unsigned long long>(seed), out.c_str(), out.c_str());
  return kExitFailed;
}

}  // namespace

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

int RunScenario(const std::string& path, std::optional<uint64_t> seed,
                const std::string& replay_out) {
  absl::StatusOr<sim::Scenario> scenario =
      sim::LoadScenarioFile(ResolveInputPath(path));
  if (!scenario.ok()) {
    Fail(std::string(scenario.status().message()));
    return kExitBadInput;
  }
  if (seed) scenario->run.seed = *seed;
  absl::StatusOr<sim::ReaderFn> reader =
      sim::ReaderByName(scenario->run.reader);
  if (!reader.ok()) {
    Fail(std::string(reader.status().message()));
    return kExitBadInput;
  }
  InterruptScope interrupt;
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto started = std::chrono::steady_clock::now();

  if (scenario->run.strategy == sim::Strategy::kExhaustive) {
    sim::ExploreOptions options;
    options.stop = &g_stop;
    if (tty) {
      options.progress = [&](uint64_t done, uint64_t failing) {
        const double secs = std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - started)
                                .count();
        std::fprintf(stderr,
                     "\r[explore] %llu interleavings, %llu failing, %.0f/s   ",
                     static_cast<unsigned long long>(done),
                     static_cast<unsigned long long>(failing),
                     secs > 0 ? static_cast<double>(done) / secs : 0.0);
      };
    }
    absl::StatusOr<sim::ExploreResult> result =
        sim::Explore(*scenario, *reader, options);
    if (tty) std::fputs("\n", stderr);
    if (!result.ok()) {
      Fail(std::string(result.status().message()));
      return kExitBadInput;
    }
    std::fputs(sim::FormatExploreReport(*scenario, *result).c_str(), stdout);
    if (!result->minimal) return kExitOk;
    sim::Scenario replay = *scenario;
    replay.replay.present = true;
    replay.replay.reader = sim::ReaderId(replay, 0);
    replay.replay.property =
        result->minimal_violations.empty()
            ? ""
            : sim::PropertyName(result->minimal_violations[0].property);
    replay.replay.decisions = *result->minimal;
    return WriteReplay(replay, scenario->name, scenario->run.seed, replay_out);
  }

  sim::RunOptions options;
  options.stop = &g_stop;
  if (tty) {
    options.progress = [&](uint64_t done_ns, uint64_t total_ns, uint64_t calls,
                           uint64_t failures) {
      const double secs = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - started)
                              .count();
      std::fprintf(stderr,
                   "\r[run] %.3f/%.3f s simulated, %llu calls, %.2fM calls/s, "
                   "%llu failing   ",
                   static_cast<double>(done_ns) / 1e9,
                   static_cast<double>(total_ns) / 1e9,
                   static_cast<unsigned long long>(calls),
                   secs > 0 ? static_cast<double>(calls) / secs / 1e6 : 0.0,
                   static_cast<unsigned long long>(failures));
    };
  }
  absl::StatusOr<sim::RunResult> result =
      sim::RunRandom(*scenario, *reader, options);
  if (tty) std::fputs("\n", stderr);
  if (!result.ok()) {
    Fail(std::string(result.status().message()));
    return kExitBadInput;
  }
  std::fputs(sim::FormatRunReport(*scenario, *result).c_str(), stdout);
  const sim::Violation* failure = sim::FirstFailure(*result);
  if (failure == nullptr) return kExitOk;

  absl::StatusOr<sim::Scenario> minimal =
      sim::MinimizeFailure(*scenario, *reader, *failure);
  if (!minimal.ok()) {
    Fail(std::string(minimal.status().message()));
    return kExitFailed;
  }
  std::printf(
      "minimal: reader %d, call %llu; %zu reader(s), %zu event(s), "
      "%s simulated\n",
      minimal->replay.reader,
      static_cast<unsigned long long>(minimal->replay.call),
      minimal->readers.size(), minimal->events.size(),
      sim::FormatDurationNs(minimal->run.duration_ns).c_str());
  return WriteReplay(*minimal, scenario->name, scenario->run.seed, replay_out);
}

int ReplayScenario(const std::string& path) {
  absl::StatusOr<sim::Scenario> scenario =
      sim::LoadScenarioFile(ResolveInputPath(path));
  if (!scenario.ok()) {
    Fail(std::string(scenario.status().message()));
    return kExitBadInput;
  }
  absl::StatusOr<sim::ReaderFn> reader =
      sim::ReaderByName(scenario->run.reader);
  if (!reader.ok()) {
    Fail(std::string(reader.status().message()));
    return kExitBadInput;
  }
  bool reproduced = false;
  absl::StatusOr<std::string> text =
      scenario->run.strategy == sim::Strategy::kExhaustive
          ? sim::ReplayInterleaving(*scenario, *reader, &reproduced)
          : sim::ReplayFailure(*scenario, *reader, &reproduced);
  if (!text.ok()) {
    Fail(std::string(text.status().message()));
    return kExitBadInput;
  }
  std::fputs(text->c_str(), stdout);
  return reproduced ? kExitFailed : kExitNotReproduced;
}

int Inspect(bool json, int samples) {
  absl::StatusOr<host::VdsoMappings> maps = host::FindVdsoMappings();
  if (!maps.ok()) {
    Fail(std::string(maps.status().message()));
    return kExitFailed;
  }
  const host::KernelVersion kernel = host::RunningKernel();
  absl::StatusOr<host::LiveSnapshot> snap = host::TakeSnapshot(*maps);
  if (!snap.ok()) {
    Fail(std::string(snap.status().message()));
    return kExitFailed;
  }
  if (absl::Status layout = host::CheckLayout(*snap, kernel); !layout.ok()) {
    Fail(std::string(layout.message()));
    return kExitFailed;
  }
  std::optional<host::UpdateAnalysis> analysis;
  if (samples > 0) {
    std::vector<host::LiveSnapshot> all = {*snap};
    for (int i = 1; i < samples && !g_stop.load(); ++i) {
      struct timespec pause = {0, 500000};
      nanosleep(&pause, nullptr);
      absl::StatusOr<host::LiveSnapshot> s = host::TakeSnapshot(*maps);
      if (s.ok()) all.push_back(*std::move(s));
    }
    analysis = host::AnalyzeUpdates(all, host::KernelHz());
  }
  if (json) {
    std::string out = host::DescribeSnapshotJson(*snap, kernel);
    if (analysis) {
      out.pop_back();  // The closing brace.
      out +=
          ", \"updates\": " + host::FormatUpdateAnalysisJson(*analysis) + "}";
    }
    std::printf("%s\n", out.c_str());
  } else {
    std::fputs(host::DescribeSnapshotText(*snap, kernel).c_str(), stdout);
    if (analysis) {
      std::fputs(host::FormatUpdateAnalysis(*analysis).c_str(), stdout);
    }
  }
  return kExitOk;
}

int Conform(int samples, uint64_t seed) {
  host::ConformOptions options;
  options.samples = samples;
  options.seed = seed;
  absl::StatusOr<host::ConformReport> report = host::RunConform(options);
  if (!report.ok()) {
    Fail(std::string(report.status().message()));
    return kExitFailed;
  }
  std::fputs(host::FormatConformReport(*report).c_str(), stdout);
  if (!report->supported) return kExitFailed;
  return report->mismatches == 0 && report->synthetic_mismatches == 0 &&
                 report->prediction_holds
             ? kExitOk
             : kExitFailed;
}

}  // namespace vdsolab::cli
