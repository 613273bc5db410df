// `vdsolab compare`: every variant (or the ones named) through the same
// scenarios and properties, as a variants x properties table with the
// first minimal replay file of each failure, the measured divergence of
// clocks without a kernel oracle, and each variant's claims checked.

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/fresh_replay.h"
#include "cli/variant_flags.h"
#include "common/escape.h"
#include "common/sha256.h"
#include "sim/formats.h"
#include "sim/run.h"
#include "sim/scenario_toml.h"
#include "variants/registry.h"

namespace vdsolab::cli {
namespace {

struct CompareOptions {
  bool accept_known = false;
  std::string format = "text";  // text, json, tap
  std::string svg_dir;          // --svg: one plot per clock without oracle.
  std::string scenarios_dir = "scenarios";  // Every *.toml in it.
  std::vector<const variants::Variant*> variants;
  std::string out_dir = "compare-out";  // Replay files go here.
  bool json = false;
};

// Exploring a variant with many loads against several updates can take
// long; the table says when a run stopped at this budget.
constexpr uint64_t kMaxInterleavings = 2000000;

struct Cell {
  uint64_t checked = 0;
  uint64_t defects = 0;
  uint64_t preconditions = 0;
  uint64_t known = 0;
};

struct FailureNote {
  std::string property;
  std::string scenario;
  std::string verdict;
  std::string why;
  std::string detail;
  std::string replay;  // The replay file, or "" if it could not be written.
  // Why the replay may not show the failure (cli/fresh_replay.h), or "".
  std::string stale;
};

struct VariantResult {
  const variants::Variant* variant = nullptr;
  std::array<Cell, sim::kNumProperties> cells{};
  std::vector<FailureNote> failures;  // First per property.
  uint64_t vdso_answers = 0;          // Times answered from the page.
  uint64_t syscalls = 0;
  uint64_t page_errors = 0;  // Errors the page path returned itself.
  bool run_error = false;
  bool writer_difference = false;  // --kernel-time: the tree's differed...
  std::vector<std::string> writer_differs_in;  // ...in these scenarios.
  double wall_seconds = 0;  // Its runs' wall time, for the slow-call note.
  std::map<ClockId, std::array<uint64_t, 3>> per_clock;
  // The same over the scenarios on a TSC machine only, what the seeds'
  // claims are about (on kvm-clock the x86-4.x variants go to the syscall).
  std::map<ClockId, std::array<uint64_t, 3>> per_clock_tsc;
  // Divergence of own clocks: from the "baseline" scenario if there is
  // one (a steady machine), else from the run with the longest RAW span.
  std::map<ClockId, sim::Divergence> divergence;
  std::string divergence_from;  // The scenario it was measured in.
  // The largest |divergence| in any scenario, and where.
  std::map<ClockId, std::pair<__int128, std::string>> worst_divergence;
  std::vector<std::string> incomplete;  // Scenarios stopped at a budget.
  // Scenarios whose namespace readers ran in the initial namespace: the
  // variant has no VDSO_CLOCKMODE_TIMENS path (Variant::timens).
  std::vector<std::string> outside_namespace;
  // Scenarios a kernel tree's timekeeper (--kernel-time) does not run
  // (clocksource changes, aux clocks), with why: not a failure of the
  // variant, and said as such.
  std::vector<std::pair<std::string, std::string>> not_run;
};

// "kvm-clock (why), other (why)".
std::string NotRunText(
    const std::vector<std::pair<std::string, std::string>>& not_run) {
  return absl::StrJoin(
      not_run, ", ",
      [](std::string* out, const std::pair<std::string, std::string>& n) {
        absl::StrAppendFormat(out, "%s (%s)", n.first, n.second);
      });
}

// A variant without the time namespace path cannot be run with readers in
// one (sim/engine.cc refuses): compare runs them in the initial namespace
// instead and says so. Returns whether it moved any.
// Why a variant's namespace readers ran outside the namespace: the reader
// has no namespace path, or (--kernel-time) the tree's writer publishes no
// namespace page.
std::string OutsideNamespaceText(const variants::Variant& v) {
  return v.timekeeping != nullptr
             ? "no time namespace page (the kernel tree's timekeeper "
               "publishing here writes none)"
             : "no time namespace path";
}

bool MoveOutOfNamespace(const variants::Variant& v, sim::Scenario* s) {
  if (v.timens && v.build_timens_page != nullptr) return false;
  bool moved = false;
  for (sim::ReaderSpec& r : s->readers) {
    moved = moved || r.timens;
    r.timens = false;
  }
  return moved;
}

absl::StatusOr<std::vector<std::pair<std::string, sim::Scenario>>>
LoadScenarios(const std::string& dir) {
  const std::string path = ResolveInputPath(dir);
  DIR* d = opendir(path.c_str());
  if (d == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--scenarios=%s: not a directory vdsolab can read (a relative path "
        "is looked for in the working directory, then among the built-in "
        "files in the binary's runfiles, which a copied binary has not: "
        "give the source tree's scenarios/ directory)",
        dir));
  }
  std::vector<std::string> files;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 5 && name.substr(name.size() - 5) == ".toml" &&
        name.find(".replay.") == std::string::npos) {
      files.push_back(name);
    }
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--scenarios=%s: no *.toml scenario files in it", dir));
  }
  std::vector<std::pair<std::string, sim::Scenario>> out;
  for (const std::string& f : files) {
    absl::StatusOr<sim::Scenario> s = sim::LoadScenarioFile(path + "/" + f);
    if (!s.ok()) return s.status();
    out.emplace_back(f.substr(0, f.size() - 5), *std::move(s));
  }
  return out;
}

std::string CellText(const Cell& c) {
  if (c.checked == 0) return "n/a";
  std::vector<std::string> parts;
  if (c.defects != 0) parts.push_back(absl::StrFormat("FAIL %d", c.defects));
  if (c.known != 0) parts.push_back(absl::StrFormat("known %d", c.known));
  if (parts.empty()) {
    return c.preconditions != 0
               ? absl::StrFormat("pass (pre %d)", c.preconditions)
               : "pass";
  }
  if (c.preconditions != 0) {
    parts.push_back(absl::StrFormat("pre %d", c.preconditions));
  }
  return absl::StrJoin(parts, ", ");
}

void Add(Cell& c, const sim::PropertyStats& s) {
  c.checked += s.checked;
  c.defects += s.defects;
  c.preconditions += s.preconditions;
  c.known += s.known_kernel;
}

FailureNote* FindNote(VariantResult& r, const std::string& property) {
  for (FailureNote& n : r.failures) {
    if (n.property == property) return &n;
  }
  return nullptr;
}

// A variant whose calls are slow but each under the call bound (a loop
// of millions of iterations) makes compare take many times longer, and
// nothing in the table says why: say it on stderr, with the wall time per
// call (the built-in readers' is under a microsecond, simulation included).
void NoteSlowCalls(const std::vector<VariantResult>& results) {
  constexpr double kSlowPerCall = 50e-6;
  for (const VariantResult& r : results) {
    const uint64_t calls = r.vdso_answers + r.syscalls + r.page_errors;
    // A failure's minimal replay re-runs the scenario many times, which the
    // wall time includes and the call count does not: only a variant with
    // no failure is timed fairly (a slow failing one has its failures).
    if (calls == 0 || !r.failures.empty() || r.run_error) continue;
    const double per_call = r.wall_seconds / static_cast<double>(calls);
    if (per_call < kSlowPerCall) continue;
    std::fprintf(stderr,
                 "vdsolab: note: %s took %.1f s, %.0f us of wall time per "
                 "call (built-in variants: under 1 us): its calls are slow "
                 "(a long loop under --call-timeout?)\n",
                 r.variant->name.data(), r.wall_seconds, per_call * 1e6);
  }
}

// --out=DIR, before any run: a directory vdsolab can write in, or one it
// can make there (made with the first replay file).
absl::Status CheckOutDir(const std::string& dir) {
  std::string path = ResolveOutputPath(dir);
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--out=%s: not a directory", dir));
    }
    if (access(path.c_str(), W_OK | X_OK) != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--out=%s: cannot write in it", dir));
    }
    return absl::OkStatus();
  }
  const std::string parent = ParentDir(path);
  if (stat(parent.c_str(), &st) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--out=%s: cannot create it: %s does not exist (compare makes one "
        "directory, not its parents)",
        dir, parent));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--out=%s: cannot create it: %s is not a directory", dir, parent));
  }
  if (access(parent.c_str(), W_OK | X_OK) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--out=%s: cannot create it: cannot write in %s", dir, parent));
  }
  return absl::OkStatus();
}

// One file per variant, scenario and property: several properties can fail
// first in the same scenario, each with its own minimal replay. Its path,
// or "" (said on stderr) if it could not be written.
std::string WriteReplayFile(const std::string& out_dir,
                            const sim::Scenario& replay,
                            const std::string& variant,
                            const std::string& scenario) {
  mkdir(ResolveOutputPath(out_dir).c_str(), 0755);
  const std::string rel = absl::StrFormat(
      "%s/%s--%s--%s.replay.toml", out_dir, SafeFileStem(variant),
      SafeFileStem(scenario), replay.replay.property);
  std::ofstream file(ResolveOutputPath(rel));
  file << sim::ScenarioToToml(replay);
  file.close();
  if (!file) {
    Fail(absl::StrFormat("cannot write the replay file \"%s\"", rel));
    return "";
  }
  return rel;
}

// Runs one scenario for the variant and adds it to the variant's row.
void RunInto(const sim::Scenario& s, const std::string& scenario_name,
             const std::string& out_dir, bool accept_known,
             std::function<void(const sim::Progress&)> progress,
             VariantResult& r) {
  const variants::Variant& v = *r.variant;
  sim::RunOptions options;
  options.stop = &StopFlag();
  options.progress = std::move(progress);
  options.max_interleavings = kMaxInterleavings;
  options.replays = sim::ReplayPolicy::kFirstPerProperty;
  options.accept_known = accept_known;
  absl::StatusOr<sim::Outcome> run = sim::Run(s, v, options);
  // A scenario outside what a tree's timekeeper runs (sim/writer.cc's
  // BootTree(): a precondition of the writer, not of the reader).
  if (!run.ok() && v.timekeeping != nullptr &&
      run.status().code() == absl::StatusCode::kFailedPrecondition) {
    r.not_run.emplace_back(scenario_name, std::string(run.status().message()));
    return;
  }
  if (!run.ok()) {
    r.failures.push_back(FailureNote{"(run)", scenario_name, "error",
                                     std::string(run.status().message()), "",
                                     "", ""});
    r.run_error = true;
    return;
  }
  for (int i = 0; i < sim::kNumProperties; ++i) {
    Add(r.cells[static_cast<size_t>(i)], run->stats[static_cast<size_t>(i)]);
  }
  // A kernel tree's timekeeper that differs from the model stops the run
  // there (sim/engine.cc): the finding is the writer's, not a cut search.
  if (run->random && !run->random->timekeeping_difference.empty()) {
    r.failures.push_back(
        FailureNote{"writer", scenario_name, "difference",
                    "the kernel tree's timekeeper differs from the model",
                    run->random->timekeeping_difference, "", ""});
    r.writer_difference = true;
    r.writer_differs_in.push_back(scenario_name);
  } else if (!run->complete) {
    r.incomplete.push_back(scenario_name);
  }
  if (run->random) {
    const sim::RunResult& random = *run->random;
    r.syscalls += random.coverage.fallbacks;
    const bool tsc = s.machine.clocksource == "tsc";
    for (const auto& [clock, n] : random.coverage.per_clock) {
      for (size_t i = 0; i < n.size(); ++i) r.per_clock[clock][i] += n[i];
      if (tsc) {
        for (size_t i = 0; i < n.size(); ++i) r.per_clock_tsc[clock][i] += n[i];
      }
      r.vdso_answers += n[0];
      r.page_errors += n[2];
    }
    for (const auto& [clock, d] : random.divergence) {
      auto worst = r.worst_divergence.find(clock);
      if (worst == r.worst_divergence.end() ||
          d.max_abs_ns > worst->second.first) {
        r.worst_divergence[clock] = {d.max_abs_ns, scenario_name};
      }
      auto it = r.divergence.find(clock);
      const bool baseline = scenario_name == "baseline";
      if (it == r.divergence.end() || baseline ||
          (r.divergence_from != "baseline" && d.span_ns > it->second.span_ns)) {
        r.divergence[clock] = d;
        r.divergence_from = scenario_name;
      }
    }
  }
  // The first failure per property, but a defect before a known
  // behaviour: the era's documented behaviour in one scenario hid a
  // patch's defect in a later one (its replay was never listed).
  const std::string defect = sim::VerdictName(sim::Verdict::kDefect);
  for (const sim::FailureReplay& replay : run->replays) {
    const std::string property = sim::PropertyName(replay.failure.property);
    FailureNote* had = FindNote(r, property);
    const std::string verdict = sim::VerdictName(replay.failure.verdict);
    if (had != nullptr && (had->verdict == defect || verdict != defect)) {
      continue;
    }
    if (had != nullptr && !had->replay.empty()) {
      std::remove(ResolveOutputPath(had->replay).c_str());
    }
    FailureNote note{property,
                     scenario_name,
                     verdict,
                     replay.failure.why,
                     replay.failure.detail,
                     replay.scenario
                         ? WriteReplayFile(out_dir, *replay.scenario,
                                           std::string(v.name), scenario_name)
                         : "",
                     ""};
    note.stale = StaleReplayWarning(note.replay, v);
    if (had != nullptr) {
      *had = std::move(note);
    } else {
      r.failures.push_back(std::move(note));
    }
  }
}

std::string FormatJson(const std::vector<VariantResult>& results,
                       const std::vector<std::string>& scenarios) {
  std::vector<std::string> vs;
  for (const VariantResult& r : results) {
    std::vector<std::string> props;
    for (int i = 0; i < sim::kNumProperties; ++i) {
      const Cell& c = r.cells[static_cast<size_t>(i)];
      props.push_back(absl::StrFormat(
          "%s: {\"checked\": %d, \"defects\": %d, \"preconditions\": %d, "
          "\"known\": %d, \"verdict\": %s}",
          JsonQuote(sim::PropertyName(static_cast<sim::Property>(i + 1))),
          c.checked, c.defects, c.preconditions, c.known,
          JsonQuote(CellText(c))));
    }
    std::vector<std::string> fails;
    for (const FailureNote& n : r.failures) {
      fails.push_back(absl::StrFormat(
          "{\"property\": %s, \"scenario\": %s, \"verdict\": %s, \"why\": %s, "
          "\"detail\": %s, \"replay\": %s}",
          JsonQuote(n.property), JsonQuote(n.scenario), JsonQuote(n.verdict),
          JsonQuote(n.why), JsonQuote(n.detail), JsonQuote(n.replay)));
    }
    std::vector<std::string> divs;
    for (const auto& [clock, d] : r.divergence) {
      divs.push_back(absl::StrFormat(
          "%s: {\"reads\": %d, \"raw_span_ns\": %d, \"divergence_ns\": %d, "
          "\"ppb\": %.1f, \"max_abs_ns\": %d}",
          JsonQuote(d.name), d.samples, static_cast<int64_t>(d.span_ns),
          static_cast<int64_t>(d.last_ns), d.ppb(),
          static_cast<int64_t>(d.max_abs_ns)));
    }
    vs.push_back(absl::StrFormat(
        "{\"name\": %s, \"provenance\": %s, \"properties\": {%s}, "
        "\"vdso_answers\": %d, \"syscalls\": %d, \"page_errors\": %d, "
        "\"failures\": [%s], "
        "\"divergence_vs_raw\": {%s}, \"incomplete\": [%s], "
        "\"outside_namespace\": [%s], \"not_run\": [%s]}",
        JsonQuote(r.variant->name), JsonQuote(r.variant->provenance),
        absl::StrJoin(props, ", "), r.vdso_answers, r.syscalls, r.page_errors,
        absl::StrJoin(fails, ", "), absl::StrJoin(divs, ", "),
        absl::StrJoin(r.incomplete, ", ",
                      [](std::string* out, const std::string& s) {
                        out->append(JsonQuote(s));
                      }),
        absl::StrJoin(r.outside_namespace, ", ",
                      [](std::string* out, const std::string& s) {
                        out->append(JsonQuote(s));
                      }),
        absl::StrJoin(
            r.not_run, ", ",
            [](std::string* out, const std::pair<std::string, std::string>& n) {
              absl::StrAppendFormat(out, "{\"scenario\": %s, \"why\": %s}",
                                    JsonQuote(n.first), JsonQuote(n.second));
            })));
  }
  return absl::StrFormat(
      "{\"scenarios\": [%s], \"variants\": [%s]}",
      absl::StrJoin(scenarios, ", ",
                    [](std::string* out, const std::string& s) {
                      out->append(JsonQuote(s));
                    }),
      absl::StrJoin(vs, ",\n "));
}

// What each variant's source claims, against what the runs measured.
std::string FormatClaims(const std::vector<VariantResult>& results) {
  std::string o;
  for (const VariantResult& r : results) {
    if (r.variant->claims.empty()) continue;
    variants::Measured measured;
    measured.divergence_scenario = r.divergence_from;
    for (const auto& [clock, n] : r.per_clock_tsc) {
      variants::ClockMeasure& m = measured.clocks[clock];
      m.page = n[0];
      m.syscall = n[1];
      m.page_errors = n[2];
    }
    for (const auto& [clock, d] : r.divergence) {
      measured.clocks[clock].ppb_vs_raw = d.ppb();
    }
    for (const variants::Claim& claim : r.variant->claims) {
      absl::StrAppendFormat(&o, "- **%s** (%s): %s\n", r.variant->name,
                            claim.text, claim.measure(measured));
    }
  }
  if (o.empty()) return o;
  return "\n## The seeds' predictions, measured\n\nOver the scenarios on a TSC "
         "machine (the seeds' own).\n\n" +
         o;
}

std::string FormatTable(const std::vector<VariantResult>& results,
                        const std::vector<std::string>& scenarios) {
  std::string o;
  absl::StrAppendFormat(
      &o,
      "# vdsolab compare: %d variants x %d scenarios\n\n"
      "Made by `vdsolab compare`. docs/compare.md is this output for the "
      "built-in scenarios: `./bazelw run //:vdsolab -- compare "
      "--out=docs/compare-replays > docs/compare.md`.\n\n"
      "Scenarios: %s. Each cell sums a property over every scenario: "
      "\"pass\", \"FAIL n\" (defects), \"known n\" (a documented kernel or "
      "era behaviour), \"pre n\" (a violated precondition of the design), "
      "\"n/a\" (never checked).\n\n",
      results.size(), scenarios.size(), absl::StrJoin(scenarios, ", "));
  std::string header = "| variant |";
  std::string rule = "|---|";
  for (int i = 0; i < sim::kNumProperties; ++i) {
    absl::StrAppendFormat(&header, " %s |",
                          sim::PropertyName(static_cast<sim::Property>(i + 1)));
    rule += "---|";
  }
  // With a kernel tree's timekeeper (--kernel-time) its lockstep against
  // the model is a column of its own: a difference stops the run, so the
  // properties' cells alone read "pass" for a run that failed.
  bool tree_writer = false;
  for (const VariantResult& r : results) {
    tree_writer |= r.variant->timekeeping != nullptr;
  }
  if (tree_writer) {
    header += " writer |";
    rule += "---|";
  }
  header += " page / syscall / page errors |";
  rule += "---|";
  absl::StrAppendFormat(&o, "%s\n%s\n", header, rule);
  for (const VariantResult& r : results) {
    absl::StrAppendFormat(&o, "| %s |", r.variant->name);
    for (const Cell& c : r.cells)
      absl::StrAppendFormat(&o, " %s |", CellText(c));
    if (tree_writer) {
      absl::StrAppendFormat(
          &o, " %s |",
          r.variant->timekeeping == nullptr ? std::string("model")
          : !r.writer_differs_in.empty()
              ? absl::StrFormat("DIFFERS %d (%s)", r.writer_differs_in.size(),
                                absl::StrJoin(r.writer_differs_in, ", "))
          : r.run_error ? std::string("error")
                        : std::string("pass"));
    }
    absl::StrAppendFormat(&o, " %d / %d / %d |\n", r.vdso_answers, r.syscalls,
                          r.page_errors);
  }
  bool any_divergence = false;
  for (const VariantResult& r : results)
    any_divergence |= !r.divergence.empty();
  if (any_divergence) {
    absl::StrAppendFormat(
        &o,
        "\n## Clocks without a kernel oracle, against CLOCK_MONOTONIC_RAW\n\n"
        "Their advance minus RAW's advance at the same counter values, "
        "measured in the baseline scenario (else the longest run).\n\n"
        "| variant | clock | scenario | reads | RAW time | divergence | ppb | "
        "max abs | worst in any scenario |\n"
        "|---|---|---|---|---|---|---|---|---|\n");
    for (const VariantResult& r : results) {
      for (const auto& [clock, d] : r.divergence) {
        absl::StrAppendFormat(
            &o,
            "| %s | %s | %s | %d | %.3f s | %d ns | %.1f | %d ns | %d ns (%s) "
            "|\n",
            r.variant->name, d.name, r.divergence_from, d.samples,
            static_cast<double>(d.span_ns) / 1e9,
            static_cast<int64_t>(d.last_ns), d.ppb(),
            static_cast<int64_t>(d.max_abs_ns),
            static_cast<int64_t>(r.worst_divergence.at(clock).first),
            r.worst_divergence.at(clock).second);
      }
    }
  }
  absl::StrAppendFormat(&o, "\n## The variants\n\n");
  for (const VariantResult& r : results) {
    absl::StrAppendFormat(&o, "- **%s**: %s. *%s*\n", r.variant->name,
                          r.variant->summary, r.variant->provenance);
    if (!r.outside_namespace.empty()) {
      std::string why = OutsideNamespaceText(*r.variant);
      why[0] = static_cast<char>(std::toupper(why[0]));
      absl::StrAppendFormat(&o,
                            "  %s: the namespace readers of %s ran in the "
                            "initial namespace.\n",
                            why, absl::StrJoin(r.outside_namespace, ", "));
    }
    if (!r.not_run.empty()) {
      absl::StrAppendFormat(&o, "  Not run: %s.\n", NotRunText(r.not_run));
    }
  }
  absl::StrAppendFormat(&o, "\n## First failure per variant and property\n\n");
  bool any = false;
  for (const VariantResult& r : results) {
    for (const FailureNote& n : r.failures) {
      any = true;
      absl::StrAppendFormat(&o, "- **%s**, %s, scenario %s: [%s] %s\n",
                            r.variant->name, n.property, n.scenario, n.verdict,
                            n.why);
      if (!n.detail.empty()) absl::StrAppendFormat(&o, "  (%s)\n", n.detail);
      if (!n.replay.empty()) {
        absl::StrAppendFormat(&o, "  replay: `vdsolab replay %s`\n",
                              ShellQuotePath(n.replay));
      }
      if (!n.stale.empty())
        absl::StrAppendFormat(&o, "  warning: %s\n", n.stale);
    }
    if (!r.incomplete.empty()) {
      absl::StrAppendFormat(&o,
                            "- **%s**: stopped early in %s (at a budget: "
                            "the %d interleavings an exhaustive run has "
                            "here, or calls that spun; no verdict for the "
                            "rest, so compare fails)\n",
                            r.variant->name, absl::StrJoin(r.incomplete, ", "),
                            kMaxInterleavings);
    }
  }
  if (!any) absl::StrAppendFormat(&o, "none\n");
  o += FormatClaims(results);
  return o;
}

// TAP: one test point per variant and property, over every scenario.
std::string FormatTap(const std::vector<VariantResult>& results,
                      const std::vector<std::string>& scenarios,
                      bool accept_known) {
  std::string o = absl::StrFormat(
      "TAP version 13\n# vdsolab compare: %d variants x %d scenarios (%s)\n"
      "1..%d\n",
      results.size(), scenarios.size(), absl::StrJoin(scenarios, ", "),
      results.size() * sim::kNumProperties);
  int n = 0;
  for (const VariantResult& r : results) {
    for (int i = 0; i < sim::kNumProperties; ++i) {
      const Cell& c = r.cells[static_cast<size_t>(i)];
      const std::string property =
          sim::PropertyName(static_cast<sim::Property>(i + 1));
      ++n;
      if (c.checked == 0) {
        absl::StrAppendFormat(&o, "ok %d - %s: %s # SKIP never checked\n", n,
                              r.variant->name, property);
        continue;
      }
      const bool fails = c.defects != 0 || (c.known != 0 && !accept_known) ||
                         r.run_error || r.writer_difference ||
                         (!r.incomplete.empty() && !StopFlag().load());
      absl::StrAppendFormat(&o, "%s %d - %s: %s (%s)\n",
                            fails ? "not ok" : "ok", n, r.variant->name,
                            property, CellText(c));
      if (i == 0 && !r.outside_namespace.empty()) {
        absl::StrAppendFormat(&o,
                              "#   %s: the namespace readers of %s ran in the "
                              "initial namespace\n",
                              OutsideNamespaceText(*r.variant),
                              absl::StrJoin(r.outside_namespace, ", "));
      }
      if (i == 0 && !r.not_run.empty()) {
        absl::StrAppendFormat(&o, "#   not run: %s\n", NotRunText(r.not_run));
      }
      if (i == 0 && !r.incomplete.empty()) {
        absl::StrAppendFormat(&o,
                              "#   stopped early (no verdict past the "
                              "budget): %s\n",
                              absl::StrJoin(r.incomplete, ", "));
      }
      for (const FailureNote& note : r.failures) {
        if (i != 0 || note.property != "writer") continue;
        absl::StrAppendFormat(&o, "#   writer, scenario %s: %s: %s\n",
                              note.scenario, note.why, note.detail);
      }
      if (!fails) continue;
      for (const FailureNote& note : r.failures) {
        if (note.property != property) continue;
        absl::StrAppendFormat(&o, "#   scenario %s: [%s] %s\n", note.scenario,
                              note.verdict, note.why);
        if (!note.replay.empty()) {
          absl::StrAppendFormat(&o, "#   replay: vdsolab replay %s\n",
                                ShellQuotePath(note.replay));
        }
        break;
      }
    }
  }
  return o;
}

// --svg=DIR: DIR/<variant>--<clock>.svg for each clock without an oracle.
bool WritePlots(const std::string& dir,
                const std::vector<VariantResult>& results) {
  const std::string path = ResolveOutputPath(dir);
  mkdir(path.c_str(), 0755);
  for (const VariantResult& r : results) {
    for (const auto& [clock, d] : r.divergence) {
      const std::string file =
          absl::StrFormat("%s/%s--%s.svg", path, r.variant->name, d.name);
      std::ofstream out(file);
      out << sim::DivergenceSvg(
          absl::StrFormat("%s %s against CLOCK_MONOTONIC_RAW (scenario %s)",
                          r.variant->name, d.name, r.divergence_from),
          d);
      out.close();
      if (!out) {
        Fail(absl::StrFormat("--svg=%s: cannot write %s", dir, file));
        return false;
      }
    }
  }
  return true;
}

int Compare(const CompareOptions& options) {
  auto scenarios = LoadScenarios(options.scenarios_dir);
  if (!scenarios.ok()) {
    Fail(std::string(scenarios.status().message()));
    return kExitBadInput;
  }
  if (absl::Status s = CheckOutDir(options.out_dir); !s.ok()) {
    Fail(std::string(s.message()));
    return kExitBadInput;
  }
  const std::vector<const variants::Variant*>& chosen = options.variants;
  InterruptScope interrupt;
  std::vector<VariantResult> results;
  std::vector<std::string> names;
  for (const auto& [name, scenario] : *scenarios) names.push_back(name);
  // Each scenario's file and its sha256, for its replays' run.origin.
  std::map<std::string, std::pair<std::string, std::string>> origins;
  // A file identical to the built-in one of its name is named as that
  // (scenarios/NAME.toml), so that docs/compare-replays reads the same on
  // every machine; any other by its absolute path.
  const std::string dir_path = ResolveInputPath(options.scenarios_dir);
  for (const std::string& name : names) {
    const std::string file = absl::StrCat(dir_path, "/", name, ".toml");
    const std::string rel = absl::StrCat("scenarios/", name, ".toml");
    absl::StatusOr<std::string> sha = Sha256File(file);
    const std::string builtin = BuiltinInputPath(rel);
    absl::StatusOr<std::string> builtin_sha =
        builtin.empty() ? absl::StatusOr<std::string>(absl::NotFoundError(""))
                        : Sha256File(builtin);
    const bool same = sha.ok() && builtin_sha.ok() && *sha == *builtin_sha;
    origins[name] = {same ? rel : AbsoluteInputPath(file),
                     sha.ok() ? *sha : ""};
  }
  // Progress on a terminal: by simulated time over every run, with an ETA.
  const bool tty = isatty(STDERR_FILENO) != 0;
  uint64_t total_ns = 0;
  for (const auto& [name, scenario] : *scenarios) {
    total_ns += scenario.run.duration_ns * chosen.size();
  }
  uint64_t done_ns = 0;
  const auto started = std::chrono::steady_clock::now();
  size_t runs = 0;
  for (const variants::Variant* v : chosen) {
    VariantResult r;
    r.variant = v;
    const auto variant_started = std::chrono::steady_clock::now();
    for (const auto& [name, scenario] : *scenarios) {
      if (StopFlag().load()) break;
      sim::Scenario s = scenario;
      UseVariant(*v, &s);
      // Its replays name the file: random runs only (an exhaustive replay
      // is judged by its choices), and not one whose readers compare moved
      // out of the time namespace (the file is not what ran).
      const bool moved = MoveOutOfNamespace(*v, &s);
      if (moved) r.outside_namespace.push_back(name);
      if (s.run.origin.empty() && !moved &&
          s.run.strategy == sim::Strategy::kRandom) {
        s.run.origin = origins[name].first;
        s.run.origin_sha256 = origins[name].second;
      }
      s.replay = sim::ReplaySpec{};
      ++runs;
      std::function<void(const sim::Progress&)> progress;
      if (tty) {
        progress = [&, name = name](const sim::Progress& p) {
          const double secs = std::chrono::duration<double>(
                                  std::chrono::steady_clock::now() - started)
                                  .count();
          const uint64_t at = done_ns + p.simulated_ns;
          std::fprintf(
              stderr, "\r[compare] run %zu of %zu: %s on %s, %s   ", runs,
              chosen.size() * scenarios->size(), v->name.data(), name.c_str(),
              FormatEta(secs, static_cast<double>(at) /
                                  static_cast<double>(total_ns ? total_ns : 1))
                  .c_str());
        };
        progress(sim::Progress{});
      }
      RunInto(s, name, options.out_dir, options.accept_known, progress, r);
      done_ns += scenario.run.duration_ns;
    }
    r.wall_seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - variant_started)
                         .count();
    results.push_back(std::move(r));
  }
  if (tty) std::fputs("\n", stderr);
  NoteSlowCalls(results);
  // A defect or a known kernel behaviour in any cell, a run that could
  // not run, or one stopped at a budget (what it did not explore has no
  // verdict) fails the comparison.
  int exit = kExitOk;
  for (const VariantResult& r : results) {
    // (Ctrl-C's cut is InterruptedExit()'s to report.)
    if (r.run_error || r.writer_difference ||
        (!r.incomplete.empty() && !StopFlag().load())) {
      exit = kExitFailed;
    }
    for (const Cell& c : r.cells) {
      if (c.defects != 0 || (c.known != 0 && !options.accept_known)) {
        exit = kExitFailed;
      }
    }
  }
  if (!options.svg_dir.empty() && !WritePlots(options.svg_dir, results)) {
    return kExitBadInput;
  }
  // Ctrl-C: a table with cells missing is no verdict.
  exit = InterruptedExit(exit);
  if (options.format == "json") {
    return FinishCommand(
        PrintJson("compare", exit, FormatJson(results, names)));
  }
  std::fputs(options.format == "tap"
                 ? FormatTap(results, names, options.accept_known).c_str()
                 : FormatTable(results, names).c_str(),
             stdout);
  if (StopFlag().load()) {
    std::fputs(options.format == "tap"
                   ? "Bail out! interrupted before the end\n"
                   : "(stopped early: interrupted; the table is incomplete)\n",
               stdout);
  }
  return FinishCommand(exit);
}

int CompareMain(const ParsedFlags& flags) {
  CompareOptions options;
  absl::StatusOr<std::vector<const variants::Variant*>> chosen =
      ChooseVariants(flags, true, "");
  if (!chosen.ok()) {
    Fail(std::string(chosen.status().message()));
    return kExitBadInput;
  }
  options.variants = *std::move(chosen);
  options.scenarios_dir = flags.String("scenarios", options.scenarios_dir);
  options.out_dir = flags.String("out", options.out_dir);
  options.format = flags.String("format", "text");
  options.svg_dir = flags.String("svg");
  options.accept_known = flags.String("accept") == "known";
  return Compare(options);
}

}  // namespace

Command CompareCommand() {
  CommandSpec spec;
  spec.name = "compare";
  spec.synopsis = "vdsolab compare [flags]";
  spec.summary = "every variant through every scenario, side by side";
  spec.description =
      "Runs each variant through each scenario file of a directory and "
      "prints a variants x properties table, the first minimal replay file "
      "of each failure, the divergence of clocks without a kernel oracle "
      "from CLOCK_MONOTONIC_RAW, and each variant's claims against what the "
      "runs measured (docs/compare.md).\n\n"
      "Exit status: 0 every property held for every variant, 1 a property "
      "failed somewhere (the table says where) or a run could not run, 2 "
      "bad input. Stopped by Ctrl-C or SIGTERM with nothing failed, it "
      "prints the table so far and ends by that signal (a shell's status "
      "130 or 143): no verdict.";
  spec.flags = VariantFlags(true);
  spec.flags.push_back(AcceptFlag());
  spec.flags.push_back(MakeFlag("scenarios", FlagKind::kString, "DIR",
                                "the directory of scenario files (*.toml)",
                                "scenarios"));
  spec.flags.push_back(MakeFlag(
      "out", FlagKind::kString, "DIR",
      "where to write the replay file of each first failure", "compare-out"));
  spec.flags.push_back(
      MakeChoice("format", {"text", "json", "tap"},
                 "the table for people, json (docs/json.md) for scripts, tap "
                 "(kselftest style, one test per variant and property) for CI",
                 "text"));
  spec.flags.push_back(
      MakeFlag("svg", FlagKind::kString, "DIR",
               "also plot each clock without a kernel oracle against "
               "CLOCK_MONOTONIC_RAW over time, one SVG per variant and clock, "
               "into DIR"));
  return Command{std::move(spec), CompareMain};
}

}  // namespace vdsolab::cli
