// vdsolab: userspace emulator of the Linux vDSO clock path.
//
// With no command, runs the built-in end-to-end check: a simulated machine
// drives the kernel timekeeper model, which publishes into a vvar page in
// the kernel's layout; every clock is sampled through the upstream vDSO
// reader and through the timekeeper's own clock_gettime() at the same
// counter value. Exit status 0 when every read matched bit for bit and no
// clock went backwards, 1 when a check failed, 2 on bad input.

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/compare.h"
#include "sim/oracle_run.h"
#include "sim/scenario_toml.h"
#include "variants/plugin/loader.h"

ABSL_FLAG(std::string, seed, "",
          "Seed for everything random in the run; the same seed gives the "
          "same report, byte for byte. Default: 1, or the scenario file's "
          "run.seed for `run`.");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(10),
          "Simulated time to run, e.g. 10s, 1500ms, 2m (at most 24h).");
ABSL_FLAG(uint64_t, tsc_hz, 2600000000,
          "True TSC frequency in Hz; the kernel model calibrates it to whole "
          "kHz as tsc.c does.");
ABSL_FLAG(int, hz, 250, "CONFIG_HZ: timer ticks per second (10..10000).");
ABSL_FLAG(double, ntp_freq_ppm, 42.0,
          "Frequency offset set with adjtimex(ADJ_FREQUENCY), in ppm "
          "(-500..500).");
ABSL_FLAG(absl::Duration, ntp_at, absl::Milliseconds(300),
          "When the adjtimex() call happens, in simulated time.");
ABSL_FLAG(uint32_t, reads_per_tick, 40,
          "Reads sampled between consecutive timekeeper events.");
ABSL_FLAG(absl::Duration, tick_jitter, absl::Microseconds(20),
          "Each tick lands up to this late.");
ABSL_FLAG(std::string, replay_out, "",
          "run: where to write the replay file of a failure (default "
          "<scenario>-seed<N>.replay.toml in the current directory).");
ABSL_FLAG(std::string, variant, "",
          "run: the variant to run instead of the scenario's run.reader; "
          "compare: the variants to compare, comma-separated (default all). "
          "See vdsolab variants.");
ABSL_FLAG(std::string, variant_so, "",
          "Load plugin variants from these shared objects (comma-separated; "
          "--variant-so works too) before the command: see docs/plugins.md.");
ABSL_FLAG(std::string, scenarios, "scenarios",
          "compare: the directory of scenario files (*.toml) to run every "
          "variant through.");
ABSL_FLAG(std::string, out, "compare-out",
          "compare: where to write the replay file of each first failure.");
ABSL_FLAG(std::string, format, "text",
          "inspect, compare: \"text\" or \"json\".");
ABSL_FLAG(std::optional<int>, samples, std::nullopt,
          "inspect: snapshots of the page to take, 0.5 ms apart, to analyse "
          "its updates (default: none). conform: page copies to compare on "
          "(default 2500; each covers every served clock in six counter "
          "regimes).");
ABSL_FLAG(bool, watch, false,
          "inspect: sample the page for about a second (--samples=2000).");
ABSL_FLAG(std::string, boot_realtime, "",
          "CLOCK_REALTIME at boot as SECONDS[.NANOSECONDS] (e.g. "
          "1764460800.000000000); empty: drawn from the seed.");

namespace {

constexpr int kExitBadInput = 2;

// --seed, if given: a decimal u64.
absl::StatusOr<std::optional<uint64_t>> SeedFromFlag() {
  const std::string text = absl::GetFlag(FLAGS_seed);
  if (text.empty()) return std::optional<uint64_t>();
  uint64_t seed = 0;
  if (!absl::SimpleAtoi(text, &seed) ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--seed=%s: want a non-negative decimal integer", text));
  }
  return std::optional<uint64_t>(seed);
}

// --boot_realtime: "SECONDS[.NANOSECONDS]".
absl::StatusOr<vdsolab::Timespec64> ParseRealtime(const std::string& text) {
  absl::StatusOr<vdsolab::Timespec64> ts =
      vdsolab::sim::ParseSecondsFraction(text);
  if (!ts.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--boot_realtime=%s: want SECONDS[.NANOSECONDS], e.g. 1764460800.5",
        text));
  }
  return ts;
}

absl::Status NonNegative(absl::Duration d, const char* flag) {
  if (d < absl::ZeroDuration() || d == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--%s=%s: must be a finite, non-negative duration",
                        flag, absl::FormatDuration(d)));
  }
  return absl::OkStatus();
}

absl::StatusOr<vdsolab::sim::OracleRunConfig> ConfigFromFlags() {
  vdsolab::sim::OracleRunConfig config;
  for (auto [d, name] :
       {std::pair{absl::GetFlag(FLAGS_duration), "duration"},
        std::pair{absl::GetFlag(FLAGS_ntp_at), "ntp_at"},
        std::pair{absl::GetFlag(FLAGS_tick_jitter), "tick_jitter"}}) {
    if (absl::Status s = NonNegative(d, name); !s.ok()) return s;
  }
  const double ppm = absl::GetFlag(FLAGS_ntp_freq_ppm);
  if (!std::isfinite(ppm) || std::fabs(ppm) > 500.0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--ntp_freq_ppm=%g: must be within -500..500 ppm", ppm));
  }
  absl::StatusOr<std::optional<uint64_t>> seed = SeedFromFlag();
  if (!seed.ok()) return seed.status();
  config.seed = seed->value_or(1);
  config.duration_ns = static_cast<uint64_t>(
      absl::ToInt64Nanoseconds(absl::GetFlag(FLAGS_duration)));
  config.tsc_hz = absl::GetFlag(FLAGS_tsc_hz);
  config.hz = absl::GetFlag(FLAGS_hz);
  // adjtimex() takes ppm with a 16-bit fraction ("scaled ppm").
  config.ntp_freq = std::llround(ppm * 65536.0);
  config.ntp_at_ns = static_cast<uint64_t>(
      absl::ToInt64Nanoseconds(absl::GetFlag(FLAGS_ntp_at)));
  config.reads_per_tick = absl::GetFlag(FLAGS_reads_per_tick);
  config.tick_jitter_ns = static_cast<uint64_t>(
      absl::ToInt64Nanoseconds(absl::GetFlag(FLAGS_tick_jitter)));
  const std::string boot = absl::GetFlag(FLAGS_boot_realtime);
  if (!boot.empty()) {
    absl::StatusOr<vdsolab::Timespec64> wall = ParseRealtime(boot);
    if (!wall.ok()) return wall.status();
    config.boot_wall = *wall;
  }
  if (config.ntp_at_ns >= config.duration_ns) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--ntp_at=%s: must fall inside --duration=%s",
                        absl::FormatDuration(absl::GetFlag(FLAGS_ntp_at)),
                        absl::FormatDuration(absl::GetFlag(FLAGS_duration))));
  }
  return config;
}

std::string ReplayCommand(const vdsolab::sim::OracleRunConfig& c) {
  return absl::StrFormat(
      "./bazelw run //:vdsolab -- --seed=%d --duration=%s --tsc_hz=%d "
      "--hz=%d --ntp_freq_ppm=%g --ntp_at=%s --reads_per_tick=%d "
      "--tick_jitter=%s%s",
      c.seed, absl::FormatDuration(absl::Nanoseconds(c.duration_ns)), c.tsc_hz,
      c.hz, static_cast<double>(c.ntp_freq) / 65536.0,
      absl::FormatDuration(absl::Nanoseconds(c.ntp_at_ns)), c.reads_per_tick,
      absl::FormatDuration(absl::Nanoseconds(c.tick_jitter_ns)),
      c.boot_wall ? absl::StrFormat(" --boot_realtime=%d.%09d",
                                    c.boot_wall->tv_sec, c.boot_wall->tv_nsec)
                  : std::string());
}

}  // namespace

int main(int argc, char** argv) {
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view path) {
    return absl::StrContains(path, "cli/");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  absl::SetProgramUsageMessage(
      "emulate the Linux vDSO clock path and check it.\n\n"
      "Usage: vdsolab [flags]                  the built-in end-to-end check\n"
      "       vdsolab run FILE [--seed=N]      run a scenario file\n"
      "       vdsolab replay FILE              replay a failure's replay "
      "file\n"
      "       vdsolab variants                 list the vDSO variants\n"
      "       vdsolab compare                  every variant through every "
      "scenario\n"
      "       vdsolab inspect [--watch]        decode the host's live vvar "
      "page\n"
      "       vdsolab conform                  the host's vDSO against "
      "vdsolab's reader\n\n"
      "Scenario files are documented in docs/scenarios.md; built-in ones are "
      "in scenarios/.\n\n"
      "Without a command: "
      "Runs a simulated machine (TSC, HZ ticks, an NTP frequency offset) "
      "through the kernel\ntimekeeper model into a vvar page in the 6.18 "
      "x86-64 layout, samples every clock id\nthrough the upstream vDSO "
      "reader and the timekeeper's clock_gettime() at the same\ncounter "
      "value, and prints per-clock reads, mismatches, the largest "
      "difference and\nbackwards steps. Exit status: 0 all checks hold, 1 a "
      "check failed, 2 bad input.");
  // The documented spelling is --variant-so; Abseil flags use underscores.
  std::vector<std::string> spelled(argv, argv + argc);
  std::vector<char*> fixed;
  for (std::string& a : spelled) {
    if (a.rfind("--variant-so", 0) == 0) a.replace(0, 12, "--variant_so");
    fixed.push_back(a.data());
  }
  std::vector<char*> args =
      absl::ParseCommandLine(static_cast<int>(fixed.size()), fixed.data());
  for (absl::string_view so : absl::StrSplit(absl::GetFlag(FLAGS_variant_so),
                                             ',', absl::SkipEmpty())) {
    absl::StatusOr<const vdsolab::variants::Variant*> v =
        vdsolab::variants::LoadPluginVariant(
            vdsolab::cli::ResolveInputPath(std::string(so)));
    if (!v.ok()) {
      std::fprintf(stderr, "vdsolab: %s\n",
                   std::string(v.status().message()).c_str());
      return kExitBadInput;
    }
  }
  if (args.size() > 1) {
    const std::string command = args[1];
    if (command == "inspect" || command == "conform") {
      if (args.size() != 2) {
        std::fprintf(stderr, "vdsolab: usage: vdsolab %s [flags]\n",
                     command.c_str());
        return kExitBadInput;
      }
      const std::string format = absl::GetFlag(FLAGS_format);
      if (format != "text" && format != "json") {
        std::fprintf(stderr,
                     "vdsolab: --format=%s: want \"text\" or \"json\"\n",
                     format.c_str());
        return kExitBadInput;
      }
      // inspect may take no samples (decode only); conform needs a page.
      const int min_samples = command == "inspect" ? 0 : 1;
      const std::optional<int> samples = absl::GetFlag(FLAGS_samples);
      if (samples && (*samples < min_samples || *samples > 10000000)) {
        std::fprintf(stderr, "vdsolab: --samples=%d: want %d .. 10000000\n",
                     *samples, min_samples);
        return kExitBadInput;
      }
      if (command == "inspect") {
        const int watch_default = absl::GetFlag(FLAGS_watch) ? 2000 : 0;
        return vdsolab::cli::Inspect(format == "json",
                                     samples.value_or(watch_default));
      }
      if (format != "text" || absl::GetFlag(FLAGS_watch)) {
        std::fprintf(stderr,
                     "vdsolab: --format and --watch apply to inspect only\n");
        return kExitBadInput;
      }
      absl::StatusOr<std::optional<uint64_t>> seed = SeedFromFlag();
      if (!seed.ok()) {
        std::fprintf(stderr, "vdsolab: %s\n",
                     std::string(seed.status().message()).c_str());
        return kExitBadInput;
      }
      return vdsolab::cli::Conform(samples.value_or(2500), seed->value_or(1));
    }
    if (command == "variants") {
      if (args.size() != 2) {
        std::fprintf(stderr, "vdsolab: usage: vdsolab variants\n");
        return kExitBadInput;
      }
      return vdsolab::cli::ListVariants();
    }
    if (command == "compare") {
      if (args.size() != 2) {
        std::fprintf(stderr, "vdsolab: usage: vdsolab compare [flags]\n");
        return kExitBadInput;
      }
      vdsolab::cli::CompareOptions options;
      const std::string format = absl::GetFlag(FLAGS_format);
      if (format != "text" && format != "json") {
        std::fprintf(stderr,
                     "vdsolab: --format=%s: want \"text\" or \"json\"\n",
                     format.c_str());
        return kExitBadInput;
      }
      options.json = format == "json";
      options.scenarios_dir = absl::GetFlag(FLAGS_scenarios);
      options.out_dir = absl::GetFlag(FLAGS_out);
      const std::string names = absl::GetFlag(FLAGS_variant);
      if (!names.empty()) options.variants = absl::StrSplit(names, ',');
      return vdsolab::cli::Compare(options);
    }
    if ((command == "run" || command == "replay") && args.size() != 3) {
      std::fprintf(stderr, "vdsolab: usage: vdsolab %s FILE (see --help)\n",
                   command.c_str());
      return kExitBadInput;
    }
    if (command == "run") {
      absl::StatusOr<std::optional<uint64_t>> seed = SeedFromFlag();
      if (!seed.ok()) {
        std::fprintf(stderr, "vdsolab: %s\n",
                     std::string(seed.status().message()).c_str());
        return kExitBadInput;
      }
      return vdsolab::cli::RunScenario(args[2], *seed,
                                       absl::GetFlag(FLAGS_replay_out),
                                       absl::GetFlag(FLAGS_variant));
    }
    if (command == "replay") return vdsolab::cli::ReplayScenario(args[2]);
    std::fprintf(stderr, "vdsolab: unexpected argument '%s' (see --help)\n",
                 args[1]);
    return kExitBadInput;
  }
  absl::StatusOr<vdsolab::sim::OracleRunConfig> config = ConfigFromFlags();
  if (!config.ok()) {
    std::fprintf(stderr, "vdsolab: %s\n",
                 std::string(config.status().message()).c_str());
    return kExitBadInput;
  }
  absl::StatusOr<vdsolab::sim::OracleRunReport> report =
      vdsolab::sim::RunOracleCheck(*config);
  if (!report.ok()) {
    std::fprintf(stderr, "vdsolab: %s\n",
                 std::string(report.status().message()).c_str());
    return report.status().code() == absl::StatusCode::kInvalidArgument
               ? kExitBadInput
               : 1;
  }
  std::fputs(vdsolab::sim::FormatOracleRunReport(*report).c_str(), stdout);
  if (!report->ok()) {
    std::printf("replay: %s\n", ReplayCommand(*config).c_str());
    return 1;
  }
  return 0;
}
