// `vdsolab inspect` and `vdsolab conform`: the running kernel's page and
// vDSO.

#include <time.h>

#include <cstdio>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/json.h"
#include "host/conform.h"
#include "host/counter_regimes.h"
#include "host/inspect.h"
#include "host/live_vvar.h"

namespace vdsolab::cli {
namespace {

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
    return PrintJson("inspect", kExitOk, out);
  } else {
    std::fputs(host::DescribeSnapshotText(*snap, kernel).c_str(), stdout);
    if (analysis) {
      std::fputs(host::FormatUpdateAnalysis(*analysis).c_str(), stdout);
    }
  }
  return kExitOk;
}

JsonArray CellsJson(
    const std::map<std::pair<ClockId, int>, host::ConformCell>& cells) {
  JsonArray a;
  for (const auto& [key, cell] : cells) {
    JsonObject o;
    o.Add("clock", ClockName(key.first))
        .Add("regime", host::RegimeName(static_cast<host::Regime>(key.second)))
        .Add("compared", cell.compared)
        .Add("mismatches", cell.mismatches);
    a.AddRaw(o.Text());
  }
  return a;
}

int Conform(int samples, uint64_t seed, bool json) {
  host::ConformOptions options;
  options.samples = samples;
  options.seed = seed;
  absl::StatusOr<host::ConformReport> report = host::RunConform(options);
  if (!report.ok()) {
    Fail(std::string(report.status().message()));
    return kExitFailed;
  }
  const int exit = report->supported && report->mismatches == 0 &&
                           report->synthetic_mismatches == 0 &&
                           report->prediction_holds
                       ? kExitOk
                       : kExitFailed;
  if (json) {
    const host::ConformReport& r = *report;
    JsonArray details;
    for (const std::string& d : r.mismatch_details) details.Add(d);
    JsonObject body;
    body.Add("supported", r.supported)
        .Add("skip_reason", r.skip_reason)
        .Add("kernel", r.kernel)
        .Add("clock_mode", r.clock_mode)
        .Add("compared", r.compared)
        .Add("mismatches", r.mismatches)
        .Add("synthetic_compared", r.synthetic_compared)
        .Add("synthetic_mismatches", r.synthetic_mismatches)
        .Add("page_races", r.page_races)
        .Add("counter_traps", r.counter_traps)
        .Add("patched_sites", r.patched_sites)
        .Add("prediction_holds", r.prediction_holds)
        .Add("seconds", r.seconds)
        .AddRaw("cells", CellsJson(r.cells).Text())
        .AddRaw("synthetic_cells", CellsJson(r.synthetic_cells).Text())
        .AddRaw("mismatch_details", details.Text());
    return PrintJson("conform", exit, body.Text());
  }
  std::fputs(host::FormatConformReport(*report).c_str(), stdout);
  return exit;
}

int InspectMain(const ParsedFlags& flags) {
  const int watch_default = flags.Bool("watch") ? 2000 : 0;
  const int samples =
      static_cast<int>(flags.Uint("samples").value_or(watch_default));
  return Inspect(flags.String("format", "text") == "json", samples);
}

int ConformMain(const ParsedFlags& flags) {
  return Conform(static_cast<int>(flags.Uint("samples").value_or(2500)),
                 flags.Uint("seed").value_or(1),
                 flags.String("format", "text") == "json");
}

}  // namespace

Command InspectCommand() {
  CommandSpec spec;
  spec.name = "inspect";
  spec.synopsis = "vdsolab inspect [flags]";
  spec.summary = "decode the running kernel's vvar page";
  spec.description =
      "Decodes the host's live vvar page (every field of both clock records, "
      "the pvclock page on kvm-clock); with --samples or --watch, also what "
      "its updates show: the update period, HZ, and whether "
      "tk_setup_internals() predicts what is seen (docs/host.md).\n\n"
      "Exit status: 0 decoded, 1 the host has no page vdsolab can read, 2 "
      "bad input.";
  spec.flags = {
      MakeChoice("format", {"text", "json"}, "the output format", "text"),
      MakeFlag(
          "samples", FlagKind::kUint, "N",
          "snapshots of the page to take, 0.5 ms apart, to analyse its updates",
          "none", 0, 10000000),
      MakeFlag("watch", FlagKind::kBool, "",
               "sample the page for about a second "
               "(--samples=2000)",
               ""),
  };
  return Command{std::move(spec), InspectMain};
}

Command ConformCommand() {
  CommandSpec spec;
  spec.name = "conform";
  spec.synopsis = "vdsolab conform [flags]";
  spec.summary = "the host's own vDSO against vdsolab's reader, bit for bit";
  spec.description =
      "Runs the host's vDSO code on copies of its live page and on "
      "synthetic pages, with an emulated counter in every regime, against "
      "vdsolab's reader on the same bytes and counter values (docs/host.md)."
      "\n\nExit status: 0 every answer agreed, 1 a mismatch or the host "
      "cannot be tested, 2 bad input.";
  spec.flags = {
      MakeFlag(
          "samples", FlagKind::kUint, "N",
          "page copies to compare on (each covers every served clock in six "
          "counter regimes)",
          "2500", 1, 10000000),
      MakeSeedFlag("N", "the seed for the synthetic pages", "1"),
      MakeChoice("format", {"text", "json"}, "text, or json (docs/json.md)",
                 "text"),
  };
  return Command{std::move(spec), ConformMain};
}

}  // namespace vdsolab::cli
