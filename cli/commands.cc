#include "cli/commands.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/cli_util.h"
#include "host/conform.h"
#include "host/inspect.h"
#include "host/live_vvar.h"
#include "sim/run.h"
#include "sim/scenario_toml.h"
#include "variants/registry.h"

namespace vdsolab::cli {
namespace {

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

int RunScenario(const std::string& path, std::optional<uint64_t> seed,
                const std::string& replay_out,
                const std::string& variant_name) {
  absl::StatusOr<sim::Scenario> scenario =
      sim::LoadScenarioFile(ResolveInputPath(path));
  if (!scenario.ok()) {
    Fail(std::string(scenario.status().message()));
    return kExitBadInput;
  }
  if (seed) scenario->run.seed = *seed;
  if (!variant_name.empty()) scenario->run.reader = variant_name;
  absl::StatusOr<const variants::Variant*> variant =
      variants::FindVariant(scenario->run.reader);
  if (!variant.ok()) {
    Fail(std::string(variant.status().message()));
    return kExitBadInput;
  }
  InterruptScope interrupt;
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto started = std::chrono::steady_clock::now();

  sim::RunOptions options;
  options.stop = &StopFlag();
  if (tty) {
    options.progress = [&](const sim::Progress& p) {
      const double secs = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - started)
                              .count();
      if (p.strategy == sim::Strategy::kExhaustive) {
        std::fprintf(
            stderr, "\r[explore] %llu interleavings, %llu failing, %.0f/s   ",
            static_cast<unsigned long long>(p.interleavings),
            static_cast<unsigned long long>(p.failing),
            secs > 0 ? static_cast<double>(p.interleavings) / secs : 0.0);
        return;
      }
      std::fprintf(stderr,
                   "\r[run] %.3f/%.3f s simulated, %llu calls, %.2fM calls/s, "
                   "%llu failing   ",
                   static_cast<double>(p.simulated_ns) / 1e9,
                   static_cast<double>(p.total_ns) / 1e9,
                   static_cast<unsigned long long>(p.calls),
                   secs > 0 ? static_cast<double>(p.calls) / secs / 1e6 : 0.0,
                   static_cast<unsigned long long>(p.failing));
    };
  }
  absl::StatusOr<sim::Outcome> outcome =
      sim::Run(*scenario, **variant, options);
  if (tty) std::fputs("\n", stderr);
  if (!outcome.ok()) {
    Fail(std::string(outcome.status().message()));
    return kExitBadInput;
  }
  std::fputs(sim::FormatOutcome(*scenario, *outcome).c_str(), stdout);
  if (!outcome->failed) return kExitOk;
  if (outcome->replays.empty() || !outcome->replays.front().scenario) {
    Fail(outcome->replays.empty() ? "no replay could be made"
                                  : outcome->replays.front().error);
    return kExitFailed;
  }
  const sim::Scenario& minimal = *outcome->replays.front().scenario;
  if (outcome->strategy == sim::Strategy::kRandom) {
    std::printf(
        "minimal: reader %d, call %llu; %zu reader(s), %zu event(s), "
        "%s simulated\n",
        minimal.replay.reader,
        static_cast<unsigned long long>(minimal.replay.call),
        minimal.readers.size(), minimal.events.size(),
        sim::FormatDurationNs(minimal.run.duration_ns).c_str());
  }
  return WriteReplay(minimal, scenario->name, scenario->run.seed, replay_out);
}

int ReplayScenario(const std::string& path) {
  absl::StatusOr<sim::Scenario> scenario =
      sim::LoadScenarioFile(ResolveInputPath(path));
  if (!scenario.ok()) {
    Fail(std::string(scenario.status().message()));
    return kExitBadInput;
  }
  absl::StatusOr<const variants::Variant*> variant =
      variants::FindVariant(scenario->run.reader);
  if (!variant.ok()) {
    Fail(std::string(variant.status().message()));
    return kExitBadInput;
  }
  absl::StatusOr<sim::ReplayOutcome> replay = sim::Replay(*scenario, **variant);
  if (!replay.ok()) {
    Fail(std::string(replay.status().message()));
    return kExitBadInput;
  }
  std::fputs(replay->text.c_str(), stdout);
  return replay->reproduced ? kExitFailed : kExitNotReproduced;
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
    for (int i = 1; i < samples && !StopFlag().load(); ++i) {
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

int ListVariants() {
  for (const variants::Variant* v : variants::AllVariants()) {
    std::vector<std::string> served;
    for (ClockId c : v->vdso_clocks) served.push_back(ClockName(c));
    std::vector<std::string> own;
    for (const variants::ClockDef& c : v->own_clocks) {
      own.push_back(
          absl::StrFormat("%s (%d, %s)", c.name, c.id,
                          c.kind == variants::ClockKind::kUserspace
                              ? "user space, measured against MONOTONIC_RAW"
                              : "added to the vDSO and syscall"));
    }
    const variants::Semantics& e = v->semantics;
    std::printf(
        "%s\n  %s\n  provenance: %s\n  page layout: %s\n"
        "  answers from the page: %s\n%s"
        "%s\n",
        std::string(v->name).c_str(), std::string(v->summary).c_str(),
        std::string(v->provenance).c_str(), v->layout->name().c_str(),
        served.empty() ? "(none)" : absl::StrJoin(served, ", ").c_str(),
        own.empty()
            ? ""
            : absl::StrFormat("  own clocks: %s%s\n", absl::StrJoin(own, "; "),
                              v->own_clocks_only ? " (only these)" : "")
                  .c_str(),
        v->own_clocks_only
            ? ""
            : absl::StrFormat("  counter: %s; %s; %s; coarse clocks from %s\n",
                              v->counter_read == vdso::CounterRead::kRdtscp
                                  ? "rdtscp"
                                  : "rdtsc_ordered",
                              e.counter == variants::CounterSemantics::kMasked63
                                  ? "63-bit, bit 62 = negative motion"
                                  : "clamped to cycle_last",
                              e.overflow_protected
                                  ? "overflow-safe past max_cycles"
                                  : "64-bit multiply (wraps past max_cycles)",
                              e.coarse_from_coarse_nsec ? "coarse_nsec (6.15+)"
                                                        : "xtime_nsec >> shift")
                  .c_str());
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
