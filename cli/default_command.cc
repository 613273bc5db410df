// The default job (`vdsolab` without a command): the end-to-end oracle
// check of one variant's reader against the timekeeper's syscall path
// (sim/oracle_run.h).

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/default_races.h"
#include "cli/fresh_replay.h"
#include "cli/native_speed.h"
#include "cli/variant_flags.h"
#include "common/clockid.h"
#include "common/json.h"
#include "common/limits.h"
#include "sim/formats.h"
#include "sim/oracle_run.h"
#include "sim/run.h"
#include "sim/scenario_toml.h"

namespace vdsolab::cli {
namespace {

constexpr double kMaxNs = static_cast<double>(kMaxSimulatedNs);

std::string Duration(uint64_t ns) {
  return absl::FormatDuration(absl::Nanoseconds(static_cast<int64_t>(ns)));
}

absl::StatusOr<sim::OracleRunConfig> ConfigFromFlags(const ParsedFlags& f) {
  sim::OracleRunConfig config;
  config.seed = f.Uint("seed").value_or(config.seed);
  config.duration_ns = f.DurationNs("duration").value_or(config.duration_ns);
  config.tsc_hz = f.Uint("tsc-hz").value_or(config.tsc_hz);
  config.hz = static_cast<int>(f.Int("hz").value_or(config.hz));
  if (std::optional<double> ppm = f.Double("ntp-freq-ppm")) {
    // adjtimex() takes ppm with a 16-bit fraction ("scaled ppm").
    config.ntp_freq = std::llround(*ppm * 65536.0);
  }
  config.ntp_at_ns = f.DurationNs("ntp-at").value_or(config.ntp_at_ns);
  config.reads_per_tick = static_cast<uint32_t>(
      f.Uint("reads-per-tick").value_or(config.reads_per_tick));
  config.tick_jitter_ns =
      f.DurationNs("tick-jitter").value_or(config.tick_jitter_ns);
  if (f.Has("boot-realtime")) {
    const std::string text = f.String("boot-realtime");
    absl::StatusOr<Timespec64> wall = sim::ParseSecondsFraction(text);
    if (!wall.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--boot-realtime=%s: want SECONDS[.NANOSECONDS], e.g. "
          "1764460800.5",
          text));
    }
    // timekeeping_init() would boot at 0 instead (not
    // timespec64_valid_settod()): not the machine asked for.
    if (wall->tv_sec >= kTimeSettodSecMax) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--boot-realtime=%s: the kernel boots at 0 instead of a time this "
          "late (timekeeping_init() refuses %d s and later, "
          "TIME_SETTOD_SEC_MAX)",
          text, kTimeSettodSecMax));
    }
    config.boot_wall = *wall;
  }
  if (config.duration_ns == 0) {
    return absl::InvalidArgumentError("--duration=0: must be positive");
  }
  if (config.ntp_at_ns >= config.duration_ns) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--ntp-at=%s: must fall inside --duration=%s",
        Duration(config.ntp_at_ns), Duration(config.duration_ns)));
  }
  config.accept_known = f.String("accept") == "known";
  if (absl::Status s = sim::ValidateOracleRunConfig(config); !s.ok()) {
    return s;
  }
  return config;
}

// A double as the shortest text that reads back to the same double, so a
// replay command sets what the run had ("100.0003967285156", not "100").
std::string RoundTrip(double v) {
  std::array<char, 64> buf;
  const std::to_chars_result r =
      std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return std::string(buf.data(), r.ptr);
}

// The command that reruns this check, every value spelled out: through
// ./bazelw when run by `bazel run` (BUILD_WORKING_DIRECTORY), else as the
// vdsolab binary itself; file paths made absolute, so that it works from
// any directory.
std::string ReplayCommandLine(const sim::OracleRunConfig& c,
                              const ParsedFlags& f) {
  std::string variant;
  for (const char* name : {"variant", "variant-so", "kernel-tree", "patch",
                           "kernel-cc", "vdso-image", "kernel-time",
                           "kernel-time-patch", "call-timeout", "accept"}) {
    const std::string_view n = name;
    const bool path = n == "variant-so" || n == "kernel-tree" || n == "patch" ||
                      n == "vdso-image" || n == "kernel-time" ||
                      n == "kernel-time-patch";
    for (const std::string& v : f.List(name)) {
      absl::StrAppendFormat(
          &variant, " %s",
          ShellQuote(absl::StrFormat(
              "--%s=%s", name,
              path ? AbsoluteInputPath(ResolveInputPath(v)) : v)));
    }
  }
  const bool under_bazel = std::getenv("BUILD_WORKING_DIRECTORY") != nullptr;
  return absl::StrFormat(
      "%s --seed=%d --duration=%s --tsc-hz=%d "
      "--hz=%d --ntp-freq-ppm=%s --ntp-at=%s --reads-per-tick=%d "
      "--tick-jitter=%s%s%s",
      under_bazel ? "./bazelw run //:vdsolab --" : "vdsolab", c.seed,
      Duration(c.duration_ns), c.tsc_hz, c.hz,
      RoundTrip(static_cast<double>(c.ntp_freq) / 65536.0),
      Duration(c.ntp_at_ns), c.reads_per_tick, Duration(c.tick_jitter_ns),
      c.boot_wall ? absl::StrFormat(" --boot-realtime=%d.%09d",
                                    c.boot_wall->tv_sec, c.boot_wall->tv_nsec)
                  : std::string(),
      variant);
}

// The kernel's clocks and the variant's own the oracle check saw the page
// answer (not only the syscall): what the races race.
std::vector<ClockId> PageClocks(const sim::OracleRunReport& report,
                                const variants::Variant& variant) {
  std::vector<ClockId> clocks;
  for (const sim::ClockStats& s : report.clocks) {
    if (!s.entry_point.empty() || s.reads == s.fallbacks + s.errors) {
      continue;
    }
    // A variant that runs its own clocks only (a user-space clock) calls
    // no kernel clock in the simulation, whatever a stage lists.
    for (ClockId c : kVdsoServedClocks) {
      if (c == s.clock && !variant.own_clocks_only) clocks.push_back(c);
    }
    if (variants::FindOwnClock(variant, s.clock) != nullptr) {
      clocks.push_back(s.clock);
    }
  }
  return clocks;
}

// The names of the variant's own clocks, for the race stages' lines.
ClockNames OwnClockNames(const variants::Variant& variant) {
  ClockNames names;
  for (const variants::ClockDef& c : variant.own_clocks) {
    names[c.id] = std::string(c.name);
  }
  return names;
}

struct RaceRun {
  const RaceStage* stage = nullptr;
  sim::Scenario scenario;  // As run: the variant's era and layout.
  absl::StatusOr<sim::Outcome> outcome;
  std::string replay_file;
  // Held: ran to its end with no failure.
  bool held() const {
    return outcome.ok() && !outcome->failed && outcome->complete;
  }
  // "1234 interleavings" or "812345 calls", with how many read a counter
  // behind cycle_last, read the pvclock page, were made in a time
  // namespace or went to the syscall, where any did: what shows that a
  // stage reached the path it is there for.
  std::string Size() const {
    if (!outcome.ok()) return "";
    if (outcome->exhaustive) {
      return absl::StrFormat("%d interleavings",
                             outcome->exhaustive->interleavings);
    }
    const sim::Coverage& c = outcome->random->coverage;
    std::vector<std::string> parts;
    if (c.negative_motion != 0) {
      parts.push_back(absl::StrFormat("%d with the counter behind cycle_last",
                                      c.negative_motion));
    }
    if (c.pvclock_reads != 0) {
      parts.push_back(
          absl::StrFormat("%d through the pvclock page", c.pvclock_reads));
    }
    if (c.timens_calls != 0) {
      parts.push_back(
          absl::StrFormat("%d in a time namespace", c.timens_calls));
    }
    if (c.fallbacks != 0) {
      parts.push_back(absl::StrFormat("%d by the syscall", c.fallbacks));
    }
    if (parts.empty()) return absl::StrFormat("%d calls", c.calls);
    return absl::StrFormat("%d calls (%s)", c.calls,
                           absl::StrJoin(parts, ", "));
  }
};

// The speed lines: figures, and for a patch a warning when it made the
// call much slower than the unpatched tree's (the same glue on both sides,
// so the ratio is the patch's own).
// What the speed line times: CLOCK_MONOTONIC where the oracle check saw
// the page answer it, else a clock of the variant's own declared the same
// as a kernel clock and answered there (against that clock); nullopt when
// it has neither.
struct SpeedClocks {
  ClockId clock = kClockMonotonic;
  ClockId base_clock = kClockMonotonic;
};
std::optional<SpeedClocks> SpeedClocksOf(
    const variants::Variant& v, const std::vector<ClockId>& page_clocks) {
  auto on_page = [&page_clocks](ClockId c) {
    return std::find(page_clocks.begin(), page_clocks.end(), c) !=
           page_clocks.end();
  };
  if (on_page(kClockMonotonic)) return SpeedClocks{};
  for (const variants::ClockDef& c : v.own_clocks) {
    if (c.same_as >= 0 && on_page(c.id)) return SpeedClocks{c.id, c.same_as};
  }
  return std::nullopt;
}

std::string SpeedLine(const variants::Variant& v, const variants::Variant& base,
                      bool unpatched_tree, const SpeedClocks& clocks,
                      const absl::StatusOr<NativeSpeed>& s) {
  if (!s.ok()) {
    std::string out = absl::StrFormat("speed: %s not timed natively: %s\n",
                                      v.name, s.status().message());
    // Out of time: calls slower than the bound allows, which the patch did.
    if (unpatched_tree && absl::IsDeadlineExceeded(s.status())) {
      out +=
          "speed: WARNING: the patched tree's native calls are too slow to "
          "time within the bound (the unpatched tree's are not)\n";
    }
    return out;
  }
  const double ratio = s->variant_ns / s->base_ns;
  const std::string base_clock =
      clocks.base_clock == clocks.clock
          ? ""
          : absl::StrCat(" ", ClockName(clocks.base_clock));
  std::string out = absl::StrFormat(
      "speed: %s answers %s natively in %.1f ns per call, %s%s in %.1f ns "
      "(%.2fx; wall-clock, best of 3 rounds of at least 0.1 s each: a "
      "figure, not a check)\n",
      v.name, variants::VariantClockName(v, clocks.clock), s->variant_ns,
      base.name, base_clock, s->base_ns, ratio);
  if (unpatched_tree && ratio >= 1.5) {
    absl::StrAppendFormat(&out,
                          "speed: WARNING: the patch makes "
                          "clock_gettime(CLOCK_MONOTONIC) %.1fx slower than "
                          "the unpatched tree's\n",
                          ratio);
  }
  return out;
}

std::vector<RaceRun> RunRaces(const std::vector<RaceStage>& stages,
                              const variants::Variant& variant,
                              const ParsedFlags& flags, bool accept_known) {
  std::vector<RaceRun> runs;
  runs.reserve(stages.size());
  sim::RunOptions options;
  options.accept_known = accept_known;
  for (const RaceStage& stage : stages) {
    RaceRun run{&stage, stage.scenario, absl::UnknownError("not run"), ""};
    UseVariant(variant, &run.scenario);
    run.outcome = sim::Run(run.scenario, variant, options);
    if (run.outcome.ok() && run.outcome->failed &&
        !run.outcome->replays.empty() &&
        run.outcome->replays.front().scenario) {
      // A random stage is built in code: its scenario goes beside the
      // replay (an exhaustive replay is judged by its choices).
      const sim::Scenario& cut = *run.outcome->replays.front().scenario;
      const std::string flag_variant =
          NamesAVariant(flags) ? std::string(variant.name) : "";
      run.replay_file =
          run.scenario.run.strategy == sim::Strategy::kRandom
              ? WriteReplayWithOrigin(cut, run.scenario, run.scenario.name,
                                      flag_variant, run.scenario.run.seed)
              : WriteReplay(cut, run.scenario.name, flag_variant,
                            run.scenario.run.seed, "");
      if (const std::string stale =
              StaleReplayWarning(run.replay_file, variant);
          !stale.empty()) {
        std::fprintf(stderr, "vdsolab: warning: %s\n", stale.c_str());
      }
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

// What the text report prints of the races, before the verdict.
std::string FormatRaces(const std::vector<RaceRun>& runs) {
  std::string out = "\n";
  if (runs.empty()) {
    out +=
        "races: none: the page answered no clock (every read went to the "
        "syscall)\n";
  }
  for (const RaceRun& r : runs) {
    if (!r.outcome.ok()) {
      absl::StrAppendFormat(&out, "races: %s: could not run: %s\n",
                            r.stage->what, r.outcome.status().message());
      continue;
    }
    if (r.held()) {
      absl::StrAppendFormat(&out, "races: %s: %s, every property held\n",
                            r.stage->what, r.Size());
      continue;
    }
    // An exhaustive stage whose every interleaving held failed on the
    // probes of the other entry points (gettimeofday(), time(),
    // clock_getres()) on the settled page: not the raced clock's fault.
    const bool probes_only =
        r.outcome->failed && r.outcome->exhaustive &&
        !r.outcome->exhaustive->minimal &&
        !r.outcome->exhaustive->entry_point_violations.empty();
    absl::StrAppendFormat(
        &out, "races: %s: %s, %s\n\n", r.stage->what, r.Size(),
        probes_only ? "FAILED: every interleaving held, but the other entry "
                      "points' answers on the settled page did not (below)"
        : r.outcome->failed ? "FAILED"
                            : "INCOMPLETE");
    out += sim::FormatOutcome(r.scenario, *r.outcome);
    if (!r.replay_file.empty()) {
      absl::StrAppendFormat(&out,
                            "replay file: %s\nreplay it: vdsolab replay %s\n",
                            r.replay_file, ShellQuotePath(r.replay_file));
    }
  }
  return out;
}

// The verdict when the oracle check held and a stage after it did not:
// where a property broke, else that a stage could not run or complete.
std::string RacesVerdict(const std::vector<RaceRun>& runs) {
  std::vector<std::string> where;
  for (const RaceRun& r : runs) {
    if (r.outcome.ok() && r.outcome->failed &&
        std::find(where.begin(), where.end(), r.stage->where) == where.end()) {
      where.push_back(r.stage->where);
    }
  }
  if (where.empty()) {
    return "FAIL: every read between updates matched the syscall bit for "
           "bit, but a stage after it could not run or complete (above).";
  }
  return absl::StrFormat(
      "FAIL: every read between updates matched the syscall bit for bit, but "
      "%s broke a property (above).",
      absl::StrJoin(where, " and "));
}

int DefaultMain(const ParsedFlags& flags) {
  // Refused before a tree is built for nothing.
  for (const char* time_flag : {"kernel-time", "kernel-time-patch"}) {
    if (!flags.Has(time_flag)) continue;
    Fail(absl::StrFormat(
        "--%s: the default job publishes with the timekeeper model; run a "
        "tree's timekeeper with `vdsolab run SCENARIO --kernel-time=TREE` or "
        "`vdsolab compare --kernel-time=TREE`, or check it against the model "
        "with `vdsolab conform-model`",
        time_flag));
    return kExitBadInput;
  }
  absl::StatusOr<sim::OracleRunConfig> config = ConfigFromFlags(flags);
  if (!config.ok()) {
    Fail(std::string(config.status().message()));
    return kExitBadInput;
  }
  absl::StatusOr<std::vector<const variants::Variant*>> chosen =
      ChooseVariants(flags, false, "upstream");
  if (!chosen.ok()) {
    Fail(std::string(chosen.status().message()));
    return kExitBadInput;
  }
  absl::StatusOr<sim::OracleRunReport> report =
      sim::RunOracleCheck(*config, *chosen->front());
  if (!report.ok()) {
    Fail(std::string(report.status().message()));
    return report.status().code() == absl::StatusCode::kInvalidArgument
               ? kExitBadInput
               : kExitFailed;
  }
  const std::vector<ClockId> page_clocks =
      PageClocks(*report, *chosen->front());
  const std::vector<RaceStage> stages = DefaultRaceStages(
      page_clocks, config->tsc_hz, config->seed, chosen->front()->timens,
      OwnClockNames(*chosen->front()));
  const std::vector<RaceRun> races =
      RunRaces(stages, *chosen->front(), flags, config->accept_known);
  const bool races_held = std::all_of(
      races.begin(), races.end(), [](const RaceRun& r) { return r.held(); });
  const int exit = report->ok() && races_held ? kExitOk : kExitFailed;
  // A variant from a file that held every check: how fast it is natively
  // (never the verdict; a failing one has its failures to fix first).
  std::string speed_line;
  std::optional<NativeSpeed> speed;
  SpeedClocks speed_clocks;
  const SpeedBase base = exit == kExitOk && NamesAVariant(flags)
                             ? SpeedBaseline(chosen->front())
                             : SpeedBase{};
  const variants::Variant* baseline = base.variant;
  if (baseline != nullptr) {
    const std::optional<SpeedClocks> clocks =
        SpeedClocksOf(*chosen->front(), page_clocks);
    speed_clocks = clocks.value_or(SpeedClocks{});
    absl::StatusOr<NativeSpeed> s =
        clocks ? MeasureNativeSpeed(*chosen->front(), *baseline, clocks->clock,
                                    clocks->base_clock)
               : absl::UnavailableError(
                     "it answers neither CLOCK_MONOTONIC nor a clock of its "
                     "own declared the same as a kernel clock from the page");
    if (s.ok()) speed = *s;
    speed_line = SpeedLine(*chosen->front(), *baseline, base.unpatched_tree,
                           clocks.value_or(SpeedClocks{}), s);
  }
  if (flags.String("format", "text") == "json") {
    JsonObject body;
    const sim::OracleRunConfig& c = *config;
    JsonObject cfg;
    cfg.Add("seed", c.seed)
        .Add("duration_ns", c.duration_ns)
        .Add("tsc_hz", c.tsc_hz)
        .Add("hz", c.hz)
        .Add("ntp_freq_ppm", static_cast<double>(c.ntp_freq) / 65536.0)
        .Add("ntp_at_ns", c.ntp_at_ns)
        .Add("reads_per_tick", c.reads_per_tick)
        .Add("tick_jitter_ns", c.tick_jitter_ns)
        .Add("accept_known", c.accept_known);
    JsonArray clocks, failures, accepted, log;
    for (const sim::ClockStats& s : report->clocks) {
      JsonObject cj;
      // The rows of a reader's other entry points (kernel trees) name it
      // instead of a clock id; the others print as before.
      if (s.entry_point.empty()) {
        cj.Add("clock", s.clock);
      } else {
        cj.Add("entry_point", s.entry_point);
      }
      cj.Add("name", s.name)
          .Add("reads", s.reads)
          .Add("vdso", s.reads - s.fallbacks)
          .Add("syscall", s.fallbacks)
          .Add("errors", s.errors)
          .Add("mismatches", s.mismatches)
          .Add("max_abs_diff_ns", s.max_abs_diff_ns)
          .Add("backwards", s.backwards)
          .Add("known", s.known)
          .Add("page_path_lost", s.page_path_lost);
      clocks.AddRaw(cj.Text());
    }
    for (const std::string& f : report->failures) failures.Add(f);
    for (const std::string& a : report->accepted) accepted.Add(a);
    for (const std::string& l : report->kernel_log) log.Add(l);
    body.Add("variant", report->variant)
        .AddRaw("config", cfg.Text())
        .Add("tsc_khz", report->tsc_khz)
        .Add("mult", report->mult)
        .Add("shift", report->shift)
        .Add("max_cycles", report->max_cycles)
        .Add("cycle_interval", report->cycle_interval)
        .Add("final_mult", report->final_mult)
        .Add("updates", report->updates)
        .Add("reads", report->reads)
        .AddRaw("clocks", clocks.Text())
        .AddRaw("failures", failures.Text())
        .AddRaw("accepted", accepted.Text())
        .AddRaw("kernel_log", log.Text());
    if (!report->stop_reason.empty()) {
      body.Add("stop_reason", report->stop_reason);
    }
    JsonArray race_array;
    for (const RaceRun& r : races) {
      JsonObject rj;
      rj.Add("scenario", r.scenario.name).Add("what", r.stage->what);
      if (!r.outcome.ok()) {
        rj.Add("error", std::string(r.outcome.status().message()));
      } else if (r.outcome->exhaustive) {
        rj.Add("interleavings", r.outcome->exhaustive->interleavings);
      } else {
        rj.Add("calls", r.outcome->random->coverage.calls)
            .Add("negative_motion",
                 r.outcome->random->coverage.negative_motion);
      }
      rj.Add("held", r.held());
      if (r.outcome.ok() && !r.held()) {
        // What failed, as run's JSON says it: each property's counts, and
        // the first failure.
        rj.AddRaw("properties", sim::PropertiesJson(r.outcome->stats).Text());
        if (!r.outcome->replays.empty()) {
          rj.AddRaw(
              "first_failure",
              sim::ViolationJson(r.outcome->replays.front().failure).Text());
        }
      }
      if (!r.replay_file.empty()) rj.Add("replay_file", r.replay_file);
      race_array.AddRaw(rj.Text());
    }
    body.AddRaw("races", race_array.Text());
    if (speed) {
      JsonObject sj;
      sj.Add("clock",
             variants::VariantClockName(*chosen->front(), speed_clocks.clock))
          .Add("ns_per_call", speed->variant_ns)
          .Add("baseline", std::string(baseline->name))
          .Add("baseline_clock", ClockName(speed_clocks.base_clock))
          .Add("baseline_ns_per_call", speed->base_ns)
          .Add("ratio", speed->variant_ns / speed->base_ns);
      body.AddRaw("native_speed", sj.Text());
    }
    if (!report->ok()) {
      body.Add("replay_command", ReplayCommandLine(*config, flags));
    }
    return PrintJson("check", exit, body.Text());
  }
  std::fputs(sim::FormatOracleRunReport(*report, false).c_str(), stdout);
  std::fputs(FormatRaces(races).c_str(), stdout);
  if (!speed_line.empty()) std::printf("\n%s", speed_line.c_str());
  std::printf("\n%s\n", !report->ok() || races_held
                            ? sim::OracleVerdict(*report, races_held).c_str()
                            : RacesVerdict(races).c_str());
  if (!report->ok()) {
    std::printf("replay: %s\n", ReplayCommandLine(*config, flags).c_str());
  }
  return exit;
}

}  // namespace

Command DefaultCommand() {
  CommandSpec spec;
  spec.synopsis = "vdsolab [flags]";
  spec.summary = "the built-in end-to-end check";
  spec.description =
      "Runs a simulated machine (a TSC, HZ ticks with jitter, an NTP "
      "frequency offset set by adjtimex()) through the kernel timekeeper "
      "model into a vvar page in the variant's layout, samples every clock "
      "id through the variant's reader and through the timekeeper's "
      "clock_gettime() at the same counter value, and prints per-clock "
      "reads, mismatches, the largest difference and backwards steps.\n\n"
      "Exit status: 0 every read matched and no clock went backwards, 1 a "
      "check failed (a replay command is printed), 2 bad input.";
  spec.flags = {
      MakeSeedFlag(
          "N",
          "seed for everything random; the same seed gives the same report",
          "1"),
      MakeFlag("duration", FlagKind::kDuration, "DURATION",
               "simulated time to run, e.g. 10s, 1500ms, 2m (at most 7 days)",
               "10s", 0, kMaxNs),
      MakeFlag(
          "tsc-hz", FlagKind::kUint, "HZ",
          "true TSC frequency; the kernel model calibrates it to whole kHz as "
          "tsc.c does",
          "2600000000", 1e6, 1e10),
      MakeFlag("hz", FlagKind::kInt, "N", "CONFIG_HZ: timer ticks per second",
               "250", 10, 10000),
      MakeFlag("ntp-freq-ppm", FlagKind::kDouble, "PPM",
               "frequency offset set with adjtimex(ADJ_FREQUENCY)", "42", -500,
               500),
      MakeFlag("ntp-at", FlagKind::kDuration, "DURATION",
               "when the adjtimex() call happens, in simulated time", "300ms",
               0, kMaxNs),
      MakeFlag("reads-per-tick", FlagKind::kUint, "N",
               "reads sampled between consecutive timekeeper events", "40", 1,
               1000000),
      MakeFlag("tick-jitter", FlagKind::kDuration, "DURATION",
               "each tick lands up to this late", "20us", 0, kMaxNs),
      MakeFlag("boot-realtime", FlagKind::kString, "SECONDS[.NANOSECONDS]",
               "CLOCK_REALTIME at boot, e.g. 1764460800.000000000",
               "drawn from the seed"),
  };
  for (FlagSpec& f : VariantFlags(false)) {
    // Named, so that using them says where they work.
    if (f.name == "kernel-time" || f.name == "kernel-time-patch") {
      f.help =
          "not in the default job, which publishes with the timekeeper "
          "model (vdsolab run, compare and conform-model take it)";
    }
    spec.flags.push_back(std::move(f));
  }
  spec.flags.push_back(AcceptFlag());
  spec.flags.push_back(MakeChoice("format", {"text", "json"},
                                  "text, or json (docs/json.md)", "text"));
  return Command{std::move(spec), DefaultMain};
}

}  // namespace vdsolab::cli
