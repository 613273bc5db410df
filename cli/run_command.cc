// `vdsolab run SCENARIO` and `vdsolab replay FILE`.

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/fresh_replay.h"
#include "cli/kernel_time_variant.h"
#include "cli/variant_flags.h"
#include "common/sha256.h"
#include "sim/formats.h"
#include "sim/run.h"
#include "sim/scenario_toml.h"
#include "variants/variant.h"

namespace vdsolab::cli {
namespace {

// The scenario key a run's default variant comes from.
constexpr char kReaderKey[] = "run.reader";

// Writes the replay scenario; its path, or "" (said on stderr) if it could
// not be written. By default "<name>-seed<N>.replay.toml" in the working
// directory, the name made a safe file-name stem (a scenario's name is free
// text: "../x" or "a/b" must not choose the directory); with a variant
// given by flag, "<name>-<variant>-seed<N>.replay.toml": runs of one
// scenario against several variants, one after another, keep each one's
// replay instead of the last overwriting the others.
// A complete run without a single property check or event outcome: a
// PASS would say nothing.
bool NothingChecked(const sim::Outcome& outcome) {
  if (outcome.failed || !outcome.complete) return false;
  for (const sim::PropertyStats& p : outcome.stats) {
    if (p.checked != 0) return false;
  }
  return !outcome.random || outcome.random->outcomes.empty();
}

// Calls were made but none had its answer judged: every one was an error
// no check judges (a user-space clock with no answer on this machine, as
// perf's time with cap_user_time off on unsynchronised counters). A PASS
// would say the variant was tested when nothing of it was.
bool NoAnswerChecked(const sim::Outcome& outcome) {
  if (outcome.failed || !outcome.complete || !outcome.random ||
      outcome.random->coverage.calls == 0 ||
      outcome.random->coverage.errors != outcome.random->coverage.calls ||
      !outcome.random->outcomes.empty()) {
    return false;
  }
  for (sim::Property p :
       {sim::Property::kExact, sim::Property::kMonotonic,
        sim::Property::kCausal, sim::Property::kSane, sim::Property::kRawRate,
        sim::Property::kCrossClock, sim::Property::kTorn}) {
    if (outcome.stats[static_cast<size_t>(p) - 1].checked != 0) return false;
  }
  return true;
}

// Exit 2 for an error about the scenario file at `path`, at the line of
// the key the message starts with ("run.reader: ...") when it names one.
int FailInScenario(const std::string& path, const absl::Status& status) {
  const std::string message(status.message());
  Fail(absl::StrFormat("%s: %s", sim::ScenarioKeyPosition(path, message),
                       message));
  return kExitBadInput;
}

// Whether a file can be made at `path` (its directory exists and is
// writable): checked before a run, so that a wrong --replay-out is bad
// input at once, not a lost replay after a long run. "" if it can, else
// why not.
std::string CannotWriteAt(const std::string& path) {
  const std::string dir = ParentDir(path);
  if (access(dir.c_str(), W_OK) != 0) {
    return absl::StrFormat("%s: %s", dir, strerror(errno));
  }
  return "";
}

// Writes `text` to `path` (a --svg or --trace file); false, said, if it
// could not.
bool WriteText(const std::string& flag, const std::string& path,
               const std::string& text) {
  std::ofstream file(ResolveOutputPath(path));
  file << text;
  file.close();
  if (!file) {
    Fail(absl::StrFormat("--%s=%s: cannot write it", flag, path));
    return false;
  }
  return true;
}

// The progress line on a terminal.
std::function<void(const sim::Progress&)> ProgressLine(
    std::chrono::steady_clock::time_point started) {
  return [started](const sim::Progress& p) {
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
    std::fprintf(
        stderr,
        "\r[run] %.3f/%.3f s simulated, %llu calls, %.2fM calls/s, "
        "%llu failing, %s   ",
        static_cast<double>(p.simulated_ns) / 1e9,
        static_cast<double>(p.total_ns) / 1e9,
        static_cast<unsigned long long>(p.calls),
        secs > 0 ? static_cast<double>(p.calls) / secs / 1e6 : 0.0,
        static_cast<unsigned long long>(p.failing),
        FormatEta(secs, p.total_ns == 0 ? 0
                                        : static_cast<double>(p.simulated_ns) /
                                              static_cast<double>(p.total_ns))
            .c_str());
  };
}

int Run(const ParsedFlags& flags) {
  const std::string path = flags.positional()[0];
  const std::string file = ResolveInputPath(path);
  absl::StatusOr<sim::Scenario> scenario = sim::LoadScenarioFile(file);
  if (!scenario.ok()) {
    Fail(absl::StrCat(scenario.status().message(), MissingBuiltinHint(path)));
    return kExitBadInput;
  }
  if (std::optional<uint64_t> seed = flags.Uint("seed")) {
    scenario->run.seed = *seed;
  }
  if (const std::string out = flags.String("replay-out"); !out.empty()) {
    if (const std::string why = CannotWriteAt(ResolveOutputPath(out));
        !why.empty()) {
      Fail(absl::StrFormat("--replay-out=%s: cannot write there (%s)", out,
                           why));
      return kExitBadInput;
    }
  }
  for (const std::string& warning : sim::ScenarioWarnings(*scenario)) {
    std::fprintf(stderr, "vdsolab: warning: %s: %s\n",
                 sim::ScenarioKeyPosition(file, warning).c_str(),
                 warning.c_str());
  }
  // A [variant] section (a replay file's, or written by hand) is loaded as
  // `replay` loads it when no flag names a variant; run.reader must then
  // name what it loaded: left at another variant, the run would silently
  // be that one's.
  if (scenario->variant.present && !NamesAVariant(flags)) {
    const variants::Variant* loaded = nullptr;
    if (absl::Status s = LoadRecordedVariant(scenario->variant, &loaded);
        !s.ok()) {
      Fail(absl::StrFormat("%s: [variant]: %s", path, s.message()));
      return kExitBadInput;
    }
    // A paired writer's name carries the reader's ("example-c@ktime-...").
    if (loaded != nullptr && loaded->name != ReaderOf(scenario->run.reader)) {
      return FailInScenario(
          file, absl::InvalidArgumentError(absl::StrFormat(
                    "%s = \"%s\": the [variant] section loads variant %s; "
                    "name it here (or give the variant by flag)",
                    kReaderKey, scenario->run.reader, loaded->name)));
    }
  }
  absl::StatusOr<std::vector<const variants::Variant*>> chosen =
      ChooseVariants(flags, false, scenario->run.reader, kReaderKey);
  if (!chosen.ok()) {
    if (absl::StartsWith(chosen.status().message(), kReaderKey)) {
      return FailInScenario(file, chosen.status());
    }
    Fail(std::string(chosen.status().message()));
    return kExitBadInput;
  }
  const variants::Variant& variant = *chosen->front();
  UseVariant(variant, &*scenario);
  InterruptScope interrupt;
  sim::RunOptions options;
  options.stop = &StopFlag();
  options.accept_known = flags.String("accept") == "known";
  if (std::optional<uint64_t> n = flags.Uint("max-interleavings")) {
    options.max_interleavings = *n;
  }
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (tty) options.progress = ProgressLine(std::chrono::steady_clock::now());
  absl::StatusOr<sim::Outcome> outcome = sim::Run(*scenario, variant, options);
  if (tty) std::fputs("\n", stderr);
  if (!outcome.ok()) return FailInScenario(file, outcome.status());
  if (NothingChecked(*outcome)) {
    return FailInScenario(
        file, absl::InvalidArgumentError(absl::StrFormat(
                  "run.duration = %s: no reader made a call and no event "
                  "was checked: nothing was tested (a reader's first call "
                  "falls within its first period)",
                  sim::FormatDurationNs(scenario->run.duration_ns))));
  }
  if (NoAnswerChecked(*outcome)) {
    return FailInScenario(
        file, absl::InvalidArgumentError(absl::StrFormat(
                  "variant %s answered every one of the run's %d calls with "
                  "an error no check judges: nothing of it was tested on "
                  "this machine (its clocks: %s; `vdsolab variants` says "
                  "when they answer)",
                  variant.name, outcome->random->coverage.calls,
                  absl::StrJoin(outcome->random->coverage.per_clock, ", ",
                                [&](std::string* out, const auto& c) {
                                  out->append(variants::VariantClockName(
                                      variant, c.first));
                                }))));
  }
  const std::string format = flags.String("format", "text");
  // A run cut at a budget has no verdict for what it did not reach: not a
  // PASS (the report says INCOMPLETE).
  const int exit = InterruptedExit(
      outcome->failed || (!outcome->complete && !outcome->interrupted)
          ? kExitFailed
          : kExitOk);
  // The first failure's minimal replay, written in every format.
  std::string replay_file;
  const sim::Scenario* minimal = nullptr;
  if (outcome->failed) {
    if (outcome->replays.empty() && outcome->random &&
        !outcome->random->timekeeping_difference.empty()) {
      // No reader call to replay: the tree's operations are the scenario's
      // and the seed's, so the run itself reproduces the difference.
      std::fprintf(stderr,
                   "vdsolab: the kernel tree's timekeeper differs from the "
                   "model with no reader call failing (no replay file: no "
                   "call to trace); the run itself reproduces it:\n"
                   "rerun it: vdsolab run %s%s --seed=%llu\n",
                   ShellQuotePath(AbsoluteInputPath(file)).c_str(),
                   FlagsToLoad(&variant).c_str(),
                   static_cast<unsigned long long>(scenario->run.seed));
    } else if (outcome->replays.empty() || !outcome->replays.front().scenario) {
      Fail(outcome->replays.empty() ? "no replay could be made"
                                    : outcome->replays.front().error);
    } else {
      // The replay names the file it was cut from (unless that was a
      // replay itself, which names its own), so that a replay against a
      // fix whose schedule diverges can run it whole.
      sim::Scenario& cut = *outcome->replays.front().scenario;
      // Random runs only: an exhaustive replay is judged by its choices.
      if (cut.run.origin.empty() && !scenario->replay.present &&
          cut.run.strategy == sim::Strategy::kRandom) {
        cut.run.origin = AbsoluteInputPath(file);
        if (absl::StatusOr<std::string> sha = Sha256File(file); sha.ok()) {
          cut.run.origin_sha256 = *sha;
        }
      }
      minimal = &cut;
      replay_file =
          WriteReplay(*minimal, scenario->name,
                      NamesAVariant(flags) ? std::string(variant.name) : "",
                      scenario->run.seed, flags.String("replay-out"));
      if (const std::string stale = StaleReplayWarning(replay_file, variant);
          !stale.empty()) {
        std::fprintf(stderr, "vdsolab: warning: %s\n", stale.c_str());
      }
    }
  }
  if (format == "json") {
    return FinishCommand(
        PrintJson("run", exit,
                  sim::OutcomeJson(*scenario, *outcome, replay_file).Text()));
  }
  if (format == "tap") {
    std::fputs(
        sim::OutcomeTap(*scenario, *outcome, options.accept_known).c_str(),
        stdout);
    if (!replay_file.empty()) {
      std::printf("# replay it: vdsolab replay %s\n",
                  ShellQuotePath(replay_file).c_str());
    }
    return FinishCommand(exit);
  }
  std::fputs(sim::FormatOutcome(*scenario, *outcome).c_str(), stdout);
  if (minimal != nullptr && outcome->strategy == sim::Strategy::kRandom) {
    std::printf(
        "minimal: reader %d, call %llu; %zu reader(s), %zu event(s), "
        "%s simulated\n",
        minimal->replay.reader,
        static_cast<unsigned long long>(minimal->replay.call),
        minimal->readers.size(), minimal->events.size(),
        sim::FormatDurationNs(minimal->run.duration_ns).c_str());
  }
  if (!replay_file.empty()) {
    std::printf("seed: %llu\nreplay file: %s\nreplay it: vdsolab replay %s\n",
                static_cast<unsigned long long>(scenario->run.seed),
                replay_file.c_str(), ShellQuotePath(replay_file).c_str());
  }
  return FinishCommand(exit);
}

int Replay(const ParsedFlags& flags) {
  const std::string file = ResolveInputPath(flags.positional()[0]);
  absl::StatusOr<sim::Scenario> scenario =
      sim::LoadScenarioFile(file, "replay file");
  if (!scenario.ok()) {
    Fail(std::string(scenario.status().message()));
    return kExitBadInput;
  }
  if (!scenario->replay.present) {
    Fail(absl::StrFormat(
        "%s: this scenario has no [replay] section; use `vdsolab run` for it",
        flags.positional()[0]));
    return kExitBadInput;
  }
  // The file records whether its run accepted documented kernel
  // behaviours; --accept=known accepts them for any file.
  if (flags.String("accept") == "known") scenario->replay.accept_known = true;
  // Without variant flags, the file's own variant (loaded again from where
  // it came from); with them, the same schedule against that variant.
  ApplyRecordedCallTimeout(scenario->variant);
  // A relative origin is compare's built-in scenarios/NAME.toml: the
  // built-in file first (a working directory's own scenarios/ may differ).
  std::string origin_file = scenario->run.origin;
  if (!origin_file.empty() && origin_file[0] != '/') {
    const std::string builtin = BuiltinInputPath(origin_file);
    origin_file = builtin.empty() ? ResolveInputPath(origin_file) : builtin;
  }
  if (!NamesAVariant(flags)) {
    if (absl::Status s = LoadRecordedVariant(scenario->variant); !s.ok()) {
      Fail(absl::StrFormat("%s: [variant]: %s", flags.positional()[0],
                           s.message()));
      return kExitBadInput;
    }
  }
  absl::StatusOr<std::vector<const variants::Variant*>> chosen =
      ChooseVariants(flags, false, scenario->run.reader, kReaderKey);
  if (!chosen.ok()) {
    if (absl::StartsWith(chosen.status().message(), kReaderKey)) {
      return FailInScenario(file, chosen.status());
    }
    Fail(std::string(chosen.status().message()));
    return kExitBadInput;
  }
  // The file's variant by name, but not its code: judged as another.
  const sim::VariantSource now = SourceOf(chosen->front());
  const sim::VariantSource& was = scenario->variant;
  auto differs = [](const std::string& a, const std::string& b) {
    return !a.empty() && !b.empty() && a != b;
  };
  const bool code_changed =
      was.present && (differs(now.plugin_sha256, was.plugin_sha256) ||
                      differs(now.tree_code_sha256, was.tree_code_sha256) ||
                      differs(now.vdso_image_sha256, was.vdso_image_sha256));
  absl::StatusOr<sim::ReplayOutcome> replay =
      sim::Replay(*scenario, *chosen->front(), code_changed, origin_file);
  if (!replay.ok()) return FailInScenario(file, replay.status());
  // Not comparable (another variant's schedule diverged) and not reached
  // (the run stopped first) are no fix.
  // A diverged replay judged by its origin scenario is FIXED or NOT FIXED.
  const bool not_comparable =
      replay->diverged && (!replay->origin_ran || replay->origin_failed);
  const int exit = replay->reproduced || replay->failed || not_comparable ||
                           !replay->stopped_before.empty()
                       ? kExitFailed
                       : kExitOk;
  if (flags.Has("svg") && !WriteText("svg", flags.String("svg"),
                                     sim::ReplaySvg(*scenario, *replay))) {
    return kExitBadInput;
  }
  if (flags.Has("trace") &&
      !WriteText("trace", flags.String("trace"),
                 sim::ReplayChromeTrace(*scenario, *replay))) {
    return kExitBadInput;
  }
  if (flags.String("format", "text") == "json") {
    return PrintJson(
        "replay", exit,
        sim::ReplayJson(*scenario, *chosen->front(), *replay).Text());
  }
  std::fputs(replay->text.c_str(), stdout);
  return exit;
}

// <name>[-<flag_variant>]-seed<N>: the stem of a run's replay files.
std::string ReplayStem(const std::string& name, const std::string& flag_variant,
                       uint64_t seed) {
  return absl::StrFormat(
      "%s-seed%d",
      flag_variant.empty()
          ? SafeFileStem(name)
          : absl::StrCat(SafeFileStem(name), "-", SafeFileStem(flag_variant)),
      seed);
}

}  // namespace

std::string WriteReplay(const sim::Scenario& replay, const std::string& name,
                        const std::string& flag_variant, uint64_t seed,
                        const std::string& replay_out) {
  const std::string out = ResolveOutputPath(
      !replay_out.empty()
          ? replay_out
          : ReplayStem(name, flag_variant, seed) + ".replay.toml");
  std::ofstream file(out);
  file << sim::ScenarioToToml(replay);
  file.close();
  if (!file) {
    Fail(absl::StrFormat("cannot write the replay file \"%s\"", out));
    return "";
  }
  return out;
}

std::string WriteReplayWithOrigin(sim::Scenario replay,
                                  const sim::Scenario& origin,
                                  const std::string& name,
                                  const std::string& flag_variant,
                                  uint64_t seed) {
  const std::string origin_file =
      ResolveOutputPath(ReplayStem(name, flag_variant, seed) + ".origin.toml");
  sim::Scenario whole = origin;
  whole.replay = sim::ReplaySpec{};
  const std::string text = sim::ScenarioToToml(whole);
  std::ofstream file(origin_file);
  file << text;
  file.close();
  // Without it, the replay stands without its origin.
  if (file) {
    replay.run.origin = AbsoluteInputPath(origin_file);
    replay.run.origin_sha256 = Sha256::Of(text);
  }
  return WriteReplay(replay, name, flag_variant, seed, "");
}

Command RunCommand() {
  CommandSpec spec;
  spec.name = "run";
  spec.synopsis = "vdsolab run SCENARIO [flags]";
  spec.summary = "run a scenario file on the simulation engine";
  spec.description =
      "Runs the scenario (a TOML file; docs/scenarios.md, built-in ones in "
      "scenarios/) with its strategy, random or exhaustive, and checks every "
      "call against the properties. On a failure it writes a minimal replay "
      "file and prints the command that replays it.\n\n"
      "Exit status: 0 every property held (where its preconditions did), 1 "
      "a property failed or the run stopped at a budget before its end "
      "(INCOMPLETE: no verdict), 2 bad input. Stopped by Ctrl-C or SIGTERM "
      "before "
      "its end with nothing failed, it prints what ran and ends by that "
      "signal (a shell's status 130 or 143): no verdict.";
  spec.positional = {"SCENARIO"};
  spec.min_positional = spec.max_positional = 1;
  spec.flags = {
      MakeSeedFlag("N", "the seed for everything random in the run",
                   "the file's run.seed"),
      MakeFlag("replay-out", FlagKind::kString, "FILE",
               "where to write the replay file of a failure",
               "<scenario>-seed<N>.replay.toml, or "
               "<scenario>-<variant>-seed<N>.replay.toml for a variant given "
               "by flag"),
      AcceptFlag(),
      MakeChoice("format", {"text", "json", "tap"},
                 "the report: text for people, json (docs/json.md) for "
                 "scripts, tap (kselftest-style) for CI",
                 "text"),
      MakeFlag("max-interleavings", FlagKind::kUint, "N",
               "an exhaustive search stops after N interleavings (the report "
               "then says INCOMPLETE, exit 1)",
               "50000000", 1, 1e12),
  };
  for (FlagSpec& f : VariantFlags(false)) spec.flags.push_back(std::move(f));
  return Command{std::move(spec), Run};
}

Command ReplayCommand() {
  CommandSpec spec;
  spec.name = "replay";
  spec.synopsis = "vdsolab replay FILE [flags]";
  spec.summary = "replay a failure's replay file, step by step";
  spec.description =
      "Runs the failing call a replay file names again and prints it step by "
      "step: the reader's loads and counter reads, the writer stores that "
      "landed between them, the page at the counter read. With --variant (or "
      "--variant-so, --kernel-tree) the same schedule checks another "
      "variant: a replay file is a regression test.\n\n"
      "A replay file records where its variant came from (a plugin's path "
      "and hash, a kernel tree and its patches), so `vdsolab replay FILE` "
      "alone loads it again, and whether its run accepted documented kernel "
      "behaviours (replay.accept_known, from --accept=known): a replay "
      "judges as its run did.\n\n"
      "Exit status: 0 the failure did not recur (FIXED with another "
      "variant, else NOT REPRODUCED), 1 it did (REPRODUCED), 2 bad input.";
  spec.positional = {"FILE"};
  spec.min_positional = spec.max_positional = 1;
  spec.flags = {
      MakeChoice("format", {"text", "json"},
                 "text, or json (docs/json.md) with the call step by step",
                 "text"),
      MakeFlag("svg", FlagKind::kString, "FILE",
               "also draw the call as an SVG: the reader's loads and counter "
               "reads and the writer's stores on one time axis"),
      MakeFlag("trace", FlagKind::kString, "FILE",
               "also write the call in the Chrome trace-event format, for "
               "Perfetto (ui.perfetto.dev) or chrome://tracing"),
      AcceptFlag(),
  };
  for (FlagSpec& f : VariantFlags(false)) spec.flags.push_back(std::move(f));
  return Command{std::move(spec), Replay};
}

}  // namespace vdsolab::cli
