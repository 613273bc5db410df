#include "bench/report.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "bench/median.h"
#include "bench/sim_benchmarks.h"
#include "common/clockid.h"
#include "variants/registry.h"

namespace vdsolab::bench {
namespace {

// The exhaustive strategy's target: one call against one update.
constexpr double kExhaustiveTargetMs = 1000.0;

// A figure by benchmark name, or 0 when it did not run.
double Ns(const std::map<std::string, Measured>& r, const std::string& name) {
  auto it = r.find(name);
  return it == r.end() ? 0.0 : it->second.ns_per_op;
}

double CounterOf(const std::map<std::string, Measured>& r,
                 const std::string& name, const std::string& counter) {
  auto it = r.find(name);
  if (it == r.end()) return 0.0;
  auto c = it->second.counters.find(counter);
  return c == it->second.counters.end() ? 0.0 : c->second;
}

// The host vDSO's __vdso_clock_gettime for a clock, called directly (the
// fair comparison for vdsolab's inlined readers); through glibc if that
// did not run.
double HostVdso(const std::map<std::string, Measured>& r,
                const std::string& clock) {
  const double direct = Ns(r, "host_vdso_direct/" + clock);
  return direct > 0 ? direct : Ns(r, "host_vdso/" + clock);
}

std::string Ratio(double a, double b) {
  if (a <= 0 || b <= 0) return "—";
  return absl::StrFormat("%.2f", a / b);
}

// A paired benchmark's ratio over its repetitions: lowest and highest, or
// nullopt where it did not run.
std::optional<std::pair<double, double>> RatioRange(
    const std::map<std::string, Measured>& r, const std::string& name) {
  const auto m = r.find(name);
  if (m == r.end()) return std::nullopt;
  const auto range = m->second.counter_range.find("ratio");
  if (range == m->second.counter_range.end()) return std::nullopt;
  return range->second;
}

// A paired ratio (RunPair() in sim_benchmarks.cc): the median over the
// repetitions, and where they differ, their range (the machine's drift
// moves the two things compared differently, and on some hosts by more
// than the gap to a target), or why there is none.
std::string PairedFig(const std::map<std::string, Measured>& r,
                      const std::string& name) {
  const double ratio = CounterOf(r, name, "ratio");
  if (ratio <= 0) return "not measured";
  std::string fig = absl::StrFormat("%.2f×", ratio);
  if (const auto range = RatioRange(r, name)) {
    const auto [lo, hi] = *range;
    if (absl::StrFormat("%.2f", lo) != absl::StrFormat("%.2f", hi)) {
      absl::StrAppendFormat(&fig, " (repetitions %.2f–%.2f)", lo, hi);
    }
  }
  return fig;
}

std::string Fig(double ns) {
  if (ns <= 0) return "—";
  return ns < 100 ? absl::StrFormat("%.1f", ns) : absl::StrFormat("%.0f", ns);
}

const char* CounterBench(vdso::CounterRead kind) {
  switch (kind) {
    case vdso::CounterRead::kRdtscp:
      return "counter/rdtscp";
    case vdso::CounterRead::kPlain:
      return "counter/rdtsc";
    case vdso::CounterRead::kOrdered:
      break;
  }
  return "counter/lfence_rdtsc";
}

const char* CounterName(vdso::CounterRead kind) {
  switch (kind) {
    case vdso::CounterRead::kRdtscp:
      return "rdtscp";
    case vdso::CounterRead::kPlain:
      return "rdtsc";
    case vdso::CounterRead::kOrdered:
      break;
  }
  return "lfence; rdtsc";
}

std::string Today() {
  const time_t now = time(nullptr);
  struct tm tm;
  gmtime_r(&now, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace

void CollectingReporter::ReportRuns(const std::vector<Run>& runs) {
  ConsoleReporter::ReportRuns(runs);
  for (const Run& run : runs) {
    if (run.error_occurred || run.run_type != Run::RT_Iteration) continue;
    Measured m;
    m.ns_per_op = run.GetAdjustedRealTime() * 1e9 /
                  benchmark::GetTimeUnitMultiplier(run.time_unit);
    for (const auto& [name, c] : run.counters) m.counters[name] = c.value;
    // The name as registered: without the "/iterations:N" of Iterations()
    // and the "/real_time" of UseRealTime() that Google Benchmark appends.
    std::string name = run.benchmark_name();
    for (const std::string suffix : {"/real_time", "/iterations:"}) {
      const size_t at = name.find(suffix);
      if (at != std::string::npos) name.resize(at);
    }
    repetitions_[name].push_back(m);
  }
}

std::map<std::string, Measured> CollectingReporter::results() const {
  std::map<std::string, Measured> out;
  for (const auto& [name, reps] : repetitions_) {
    Measured m;
    std::vector<double> ns;
    std::map<std::string, std::vector<double>> counters;
    for (const Measured& r : reps) {
      ns.push_back(r.ns_per_op);
      for (const auto& [c, v] : r.counters) counters[c].push_back(v);
    }
    m.ns_per_op = Median(ns);
    for (const auto& [c, v] : counters) {
      m.counters[c] = Median(v);
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      m.counter_range[c] = {*lo, *hi};
    }
    out[name] = m;
  }
  return out;
}

// A simulated read's time with every property check off, for reads per
// second `plain` with them: `plain`'s time over the paired checked ÷
// unchecked ratio where it was measured (kPairedChecks), else the
// unchecked benchmark's own figure; 0 if neither.
double EngineNs(const std::map<std::string, Measured>& r, double plain) {
  const double paired = CounterOf(r, kPairedChecks, "ratio");
  if (plain > 0 && paired > 0) return 1e9 / plain / paired;
  const double unchecked = CounterOf(r, "sim/random_no_checks", "reads_per_s");
  return unchecked > 0 ? 1e9 / unchecked : 0;
}

// The figures behind each missed target, from this run. Why they are
// missed was measured by hand (a profiler, experiments): that analysis is
// the hand-written part of docs/benchmarks.md, with its machine and date.
void AppendWhyMissed(const std::map<std::string, Measured>& r, double host_mono,
                     double plain, double exhaustive_ms, std::string* o) {
  std::string why;
  // The reader on the host's page, for the clocks the target names.
  for (const char* clock : {"CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW"}) {
    const std::string on_host =
        std::string("reader/upstream@host_page/") + clock;
    const std::string on_tsc = std::string("reader/upstream/") + clock;
    const double host = HostVdso(r, clock);
    if (r.count(on_host) == 0 || r.count(on_tsc) == 0 || host <= 0 ||
        Ns(r, on_host) <= 1.05 * host) {
      continue;
    }
    absl::StrAppendFormat(
        &why,
        "- The upstream reader on the host's page, %s: %s ns against the "
        "host vDSO's %s ns; on a TSC-mode page %s ns (%s× the host vDSO); "
        "`lfence; rdtsc` alone %s ns.\n",
        clock, Fig(Ns(r, on_host)), Fig(host), Fig(Ns(r, on_tsc)),
        Ratio(Ns(r, on_tsc), host), Fig(Ns(r, "counter/lfence_rdtsc")));
  }
  // A user-space clock over its counter instruction: what its variant says
  // it does besides the read.
  for (const variants::Variant* v : variants::AllVariants()) {
    if (!v->own_clocks_only) continue;
    const double counter = Ns(r, CounterBench(v->counter_read));
    for (const variants::ClockDef& c : v->own_clocks) {
      const double ns = Ns(r, absl::StrFormat("reader/%s/%s", v->name, c.name));
      if (counter <= 0 || ns <= 1.2 * counter) continue;
      absl::StrAppendFormat(&why, "- %s: %s ns over %s's %s ns: %s.\n", c.name,
                            Fig(ns - counter), CounterName(v->counter_read),
                            Fig(counter), c.cost_note);
    }
  }
  if (plain > 0 && host_mono > 0 && 1e9 / plain > 3 * host_mono) {
    const double engine = EngineNs(r, plain);
    absl::StrAppendFormat(
        &why,
        "- The simulated read: %s ns, %s× the host vDSO's MONOTONIC: the "
        "engine without checks %s ns, the checker %s ns, the reader through "
        "the hook policy alone %s ns. The exhaustive target is met %s× "
        "over.\n",
        Fig(1e9 / plain), Ratio(1e9 / plain, host_mono), Fig(engine),
        Fig(engine > 0 ? 1e9 / plain - engine : 0),
        Fig(Ns(r, "sim/hooked_read")),
        exhaustive_ms > 0
            ? absl::StrFormat("%.0f", kExhaustiveTargetMs / exhaustive_ms)
            : "—");
  }
  if (!why.empty()) {
    absl::StrAppendFormat(o,
                          "\n### The missed targets' figures\n\n%s\nWhy they "
                          "are missed, measured by hand: the hand-written "
                          "part of docs/benchmarks.md.\n",
                          why);
  }
}

// Each patch's calls against the code it patches (Variant::patches), for
// the clocks both were counted on: what the patch gains.
void AppendPatchGains(const std::vector<CallCount>& calls, std::string* o) {
  std::string gains;
  for (const CallCount& after : calls) {
    if (after.variant == nullptr || after.variant->patches.empty()) continue;
    for (const CallCount& before : calls) {
      if (before.variant == nullptr ||
          before.variant->name != after.variant->patches ||
          before.clock != after.clock || before.calls == 0) {
        continue;
      }
      absl::StrAppendFormat(
          &gains,
          "%s, %s: %+.0f%% calls against %s (the code it patches, or its "
          "stand-in).\n",
          after.variant->name, ClockName(after.clock),
          (static_cast<double>(after.calls) /
               static_cast<double>(before.calls) -
           1) *
              100,
          before.variant->name);
    }
  }
  if (!gains.empty()) absl::StrAppendFormat(o, "\n%s", gains);
}

std::string FormatReport(const MachineInfo& machine,
                         const std::string& host_mode,
                         const std::map<std::string, Measured>& r,
                         const SeedFigures& seeds,
                         const ReportOptions& options) {
  std::string o;
  absl::StrAppendFormat(
      &o,
      "# vdsolab benchmarks\n\n"
      "Made by `./bazelw run //bench -- --report`%s on %s. Every ratio is "
      "from this one run. Google Benchmark, real time per call; native "
      "readers run %d calls per timed batch on a page a background thread "
      "keeps current at HZ=250 (the timekeeper model on the real TSC, or the "
      "host's own page, copied every 1 ms). vdsolab's code is built with "
      "-O2; the \"Library was built as DEBUG\" warning Google Benchmark "
      "prints is about Debian's build of the benchmark library itself.\n\n"
      "**Machine:** %s, %d CPU(s); Linux %s; clocksource %s (host vDSO clock "
      "mode %s); TSC %.3f MHz (measured).\n",
      options.quick ? " --quick (short runs: noisy)" : "", Today(), 1000,
      machine.cpu_model, machine.cpus, machine.kernel, machine.clocksource,
      host_mode, machine.tsc_khz / 1000.0);

  // The host.
  absl::StrAppendFormat(
      &o,
      "\n## The host\n\n"
      "vDSO: `clock_gettime()` through glibc (which calls the vDSO); vDSO "
      "direct: `__vdso_clock_gettime` called through its address, the "
      "figure vdsolab's readers are compared with.\n\n"
      "| clock | vDSO ns | vDSO direct ns | syscall ns | syscall ÷ vDSO |\n"
      "|---|---|---|---|---|\n");
  for (ClockId c : kVdsoServedClocks) {
    const double v = Ns(r, "host_vdso/" + ClockName(c));
    const double d = Ns(r, "host_vdso_direct/" + ClockName(c));
    const double s = Ns(r, "host_syscall/" + ClockName(c));
    absl::StrAppendFormat(&o, "| %s | %s | %s | %s | %s |\n", ClockName(c),
                          Fig(v), Fig(d), Fig(s), Ratio(s, v));
  }
  absl::StrAppendFormat(&o,
                        "\n| counter instruction | ns |\n|---|---|\n"
                        "| rdtsc | %s |\n| lfence; rdtsc | %s |\n"
                        "| rdtscp | %s |\n",
                        Fig(Ns(r, "counter/rdtsc")),
                        Fig(Ns(r, "counter/lfence_rdtsc")),
                        Fig(Ns(r, "counter/rdtscp")));

  // The readers.
  absl::StrAppendFormat(
      &o,
      "\n## vdsolab's readers, native (plain loads, the real TSC)\n\n"
      "÷ host vDSO: against the host's `__vdso_clock_gettime` for the same "
      "clock, called directly (for a variant's own clocks, against the "
      "host's MONOTONIC_RAW). ÷ counter: against the counter instruction the "
      "variant reads with. The first rows run vdsolab's upstream reader on "
      "a copy of the host's own page (same clock mode, same data); the "
      "others on a page the timekeeper model keeps current in TSC mode.\n\n"
      "| variant | clock | ns | ÷ host vDSO | ÷ counter |\n"
      "|---|---|---|---|---|\n");
  for (ClockId c : kVdsoServedClocks) {
    const std::string name = "reader/upstream@host_page/" + ClockName(c);
    if (r.count(name) == 0) continue;
    absl::StrAppendFormat(
        &o, "| upstream, on the host's own page (%s) | %s | %s | %s | %s |\n",
        host_mode, ClockName(c), Fig(Ns(r, name)),
        Ratio(Ns(r, name), HostVdso(r, ClockName(c))),
        Ratio(Ns(r, name), Ns(r, "counter/rdtscp")));
  }
  for (const variants::Variant* v : variants::AllVariants()) {
    const std::string prefix = absl::StrFormat("reader/%s/", v->name);
    for (auto it = r.lower_bound(prefix);
         it != r.end() && it->first.rfind(prefix, 0) == 0; ++it) {
      const std::string clock = it->first.substr(prefix.size());
      const bool own = r.count("host_vdso/" + clock) == 0;
      const double host =
          HostVdso(r, own ? std::string("CLOCK_MONOTONIC_RAW") : clock);
      absl::StrAppendFormat(
          &o, "| %s | %s | %s | %s | %s (%s) |\n", v->name, clock,
          Fig(it->second.ns_per_op), Ratio(it->second.ns_per_op, host),
          Ratio(it->second.ns_per_op, Ns(r, CounterBench(v->counter_read))),
          CounterName(v->counter_read));
    }
  }

  // The seeds.
  absl::StrAppendFormat(
      &o,
      "\n## The seeds' own measures\n\n"
      "**timer_latency** (seeds 000/001: average gap between 100 successive "
      "calls, repeated %d times). The seeds reported 200–1000 ns for "
      "MONOTONIC_RAW by syscall, ~20 ns (rdtscp) / ~30 ns (barrier + rdtsc) "
      "for the patched vDSO, ~40 ns for MONOTONIC, on 2.8–3.9 GHz Haswell.\n\n"
      "| clock source | average latency ns | zero deltas | inconsistent |\n"
      "|---|---|---|---|\n",
      seeds.latency.empty() ? 0 : seeds.latency[0].second.runs);
  for (const auto& [name, l] : seeds.latency) {
    absl::StrAppendFormat(&o, "| %s | %.1f | %d | %d |\n", name,
                          l.average_latency_ns, l.zero_deltas,
                          l.inconsistencies);
  }
  absl::StrAppendFormat(
      &o,
      "\n**Calls in an interval** (seed 003, Sverdlin: calls in 10 s, "
      "MONOTONIC 355.5M, RAW 44.9M before the patch and 371.2M after, "
      "+726%%). Measured over %.2f s and scaled to 10 s:\n\n"
      "| clock source | calls per 10 s |\n|---|---|\n",
      static_cast<double>(seeds.interval_ns) / 1e9);
  for (const CallCount& c : seeds.calls) {
    absl::StrAppendFormat(&o, "| %s | %.1fM |\n", c.label,
                          static_cast<double>(c.calls) * 1e10 /
                              static_cast<double>(seeds.interval_ns) / 1e6);
  }
  AppendPatchGains(seeds.calls, &o);
  absl::StrAppendFormat(
      &o,
      "\n**Cycles per call** (seed 002, Desfossez, i7 920: vDSO realtime "
      "101, monotonic 104, trace 66; syscall 240 / 256 / 231), rdtsc before "
      "and after each call:\n\n| clock source | TSC cycles per call |\n"
      "|---|---|\n");
  for (const auto& [name, c] : seeds.cycles) {
    absl::StrAppendFormat(&o, "| %s | %.1f |\n", name, c);
  }

  // The simulator.
  const double plain = CounterOf(r, "sim/random_no_injection", "reads_per_s");
  const double injected = CounterOf(r, "sim/random_injection", "reads_per_s");
  const double host_mono = HostVdso(r, "CLOCK_MONOTONIC");
  // The targets' figures: the runs paired with host calls, where measured.
  const double paired_plain = CounterOf(r, kPairedNoInjection, "ratio");
  const double paired_injected = CounterOf(r, kPairedInjection, "ratio");
  const double one = Ns(r, "sim/exhaustive_1_update");
  const double two = Ns(r, "sim/exhaustive_2_updates");
  absl::StrAppendFormat(
      &o,
      "\n## The simulator\n\n| measure | figure |\n|---|---|\n"
      "| simulated reads per second, no injection | %.2fM (%s ns per read, "
      "%s × the host vDSO's MONOTONIC; paired: %s) |\n"
      "| simulated reads per second, random injection (preemption, stalls, "
      "migration, early counter reads) | %.2fM (%s ns per read, %s ×; "
      "paired: %s) |\n"
      "| exhaustive: one MONOTONIC call against 1 update | %.0f "
      "interleavings in %.2f ms (%.0f per s) |\n"
      "| exhaustive: one MONOTONIC call against 2 updates | %.0f "
      "interleavings in %.1f ms (%.0f per s) |\n",
      plain / 1e6, Fig(plain > 0 ? 1e9 / plain : 0),
      Ratio(plain > 0 ? 1e9 / plain : 0, host_mono),
      PairedFig(r, kPairedNoInjection), injected / 1e6,
      Fig(injected > 0 ? 1e9 / injected : 0),
      Ratio(injected > 0 ? 1e9 / injected : 0, host_mono),
      PairedFig(r, kPairedInjection),
      CounterOf(r, "sim/exhaustive_1_update", "interleavings"), one / 1e6,
      CounterOf(r, "sim/exhaustive_1_update", "interleavings_per_s"),
      CounterOf(r, "sim/exhaustive_2_updates", "interleavings"), two / 1e6,
      CounterOf(r, "sim/exhaustive_2_updates", "interleavings_per_s"));
  // The exhaustive strategy against updates, with and without reduction.
  absl::StrAppendFormat(
      &o,
      "\n### Exhaustive: time against updates, with and without "
      "partial-order reduction\n\nUpstream reader, MONOTONIC; plain "
      "enumeration is cut after a fixed number of executions (\"> N "
      "(capped)\").\n\n| shape | updates | plain: executions | plain: time "
      "| por: executions (checked) | por: time | plain count | factor |\n"
      "|---|---|---|---|---|---|---|---|\n");
  for (sim::ExhaustiveShape shape :
       {sim::ExhaustiveShape::kOneCall, sim::ExhaustiveShape::kTwoCalls,
        sim::ExhaustiveShape::kTwoReaders}) {
    for (int updates = 1; updates <= 4; ++updates) {
      const std::string none =
          ExhaustiveShapeBench(shape, sim::Reduction::kNone, updates);
      const std::string por =
          ExhaustiveShapeBench(shape, sim::Reduction::kPor, updates);
      if (r.count(none) == 0 && r.count(por) == 0) continue;
      const bool capped = CounterOf(r, none, "capped") > 0;
      const double ran = CounterOf(r, por, "executions");
      const double count = CounterOf(r, por, "plain");
      absl::StrAppendFormat(
          &o,
          "| %s | %d | %s%.0f%s | %.1f ms | %.0f (%.0f) | %.1f ms | %.0f | "
          "%.1f× |\n",
          sim::ExhaustiveShapeName(shape), updates, capped ? "> " : "",
          CounterOf(r, none, "executions"), capped ? " (capped)" : "",
          Ns(r, none) / 1e6, ran, CounterOf(r, por, "checked"),
          Ns(r, por) / 1e6, count, ran > 0 ? count / ran : 0.0);
    }
  }
  // Where a simulated read's time goes.
  const double engine = EngineNs(r, plain);
  if (plain > 0 && engine > 0 && r.count("sim/hooked_read") != 0) {
    const double hooked = Ns(r, "sim/hooked_read");
    const double paired_checks = CounterOf(r, kPairedChecks, "ratio");
    absl::StrAppendFormat(
        &o,
        "\nWhere a simulated read (no injection) goes: %s ns. The upstream "
        "reader through the simulation's access policy alone (a virtual "
        "hook per load and counter read, no simulation around it, the real "
        "counter): %s ns. The engine with every property check off "
        "(scheduling, the writer's ticks, applying and rolling back pending "
        "stores, per-load bookkeeping): %s ns per read, so the checker "
        "(the oracle's value for the exact, torn, monotonic, causal and "
        "cross-clock checks) adds %s ns%s.\n",
        Fig(1e9 / plain), Fig(hooked), Fig(engine), Fig(1e9 / plain - engine),
        paired_checks > 0
            ? absl::StrFormat(" (paired: runs with and without the checks "
                              "in alternation, checked ÷ unchecked %s)",
                              PairedFig(r, kPairedChecks))
            : "");
  }

  // Kernel trees against the built-in reader of their era.
  struct TreeRatio {
    std::string which;  // "6.12.117@6.10"
    double ratio;       // Paired where measured.
    std::string pair;   // The paired benchmark.
  };
  std::vector<TreeRatio> tree_ratios;
  for (const auto& [name, m] : r) {
    if (name.rfind("sim/tree/", 0) != 0) continue;
    const std::string rest = name.substr(9);  // "6.12.117@6.10"
    const size_t at = rest.find('@');
    if (at == std::string::npos) continue;
    const std::string era = rest.substr(at + 1);
    const double tree = CounterOf(r, name, "reads_per_s");
    const double builtin = CounterOf(r, TreeBuiltinBench(era), "reads_per_s");
    if (tree <= 0 || builtin <= 0) continue;
    // The target's figure: the alternating runs' ratio where measured.
    const std::string pair = TreePairBench(rest.substr(0, at), era);
    const double paired = CounterOf(r, pair, "ratio");
    if (tree_ratios.empty()) {
      absl::StrAppendFormat(
          &o,
          "\n### Kernel trees' own vDSO code in the simulation\n\nThe "
          "scenario of the no-injection row, with a kernel tree's own "
          "lib/vdso compiled as a variant (docs/kernel-trees.md) and with "
          "the built-in reader of its era. Paired: the two run in "
          "alternation, each run timed alone, the median over the pairs of "
          "tree ÷ built-in time (then the median over the repetitions, and "
          "their range); the target's figure, as the machine's speed drifts "
          "between benchmarks run seconds apart.\n\n| tree | reads per "
          "second | built-in | reads per second | tree ÷ built-in (time per "
          "read) | paired |\n|---|---|---|---|---|---|\n");
    }
    absl::StrAppendFormat(&o, "| %s | %.2fM | %s | %.2fM | %s× | %s |\n",
                          rest.substr(0, at), tree / 1e6, era, builtin / 1e6,
                          Ratio(builtin, tree), PairedFig(r, pair));
    tree_ratios.push_back(
        TreeRatio{rest, paired > 0 ? paired : builtin / tree, pair});
  }

  // The targets.
  // A paired figure (`paired`, a benchmark name; one that did not run has
  // no range) whose repetitions fell on both sides of the limit says so:
  // the verdict is the median's.
  const auto target = [&o, &r](const std::string& what, double measured,
                               double limit, const std::string& unit,
                               const std::string& paired = "") {
    std::string verdict =
        measured <= 0 ? "not measured"
        : measured <= limit
            ? "met"
            : absl::StrFormat("missed by %.0f%%", (measured / limit - 1) * 100);
    if (const auto range = RatioRange(r, paired); measured > 0 && range &&
                                                  range->first <= limit &&
                                                  limit < range->second) {
      absl::StrAppendFormat(&verdict,
                            " (the repetitions ranged %.2f–%.2f, across the "
                            "limit)",
                            range->first, range->second);
    }
    absl::StrAppendFormat(&o, "| %s | %.2f%s | ≤ %.2f%s | %s |\n", what,
                          measured, unit, limit, unit, verdict);
  };
  absl::StrAppendFormat(&o,
                        "\n## Targets\n\n| target | measured | limit | |\n"
                        "|---|---|---|---|\n");
  for (const char* clock : {"CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW"}) {
    const std::string on_host =
        std::string("reader/upstream@host_page/") + clock;
    const double ratio = r.count(on_host) != 0
                             ? Ns(r, on_host) / HostVdso(r, clock)
                             : Ns(r, std::string("reader/upstream/") + clock) /
                                   HostVdso(r, clock);
    target(absl::StrFormat("upstream reader ÷ host vDSO, %s%s", clock,
                           r.count(on_host) != 0 ? " (same page)" : ""),
           ratio, 1.05, "×");
  }
  for (const variants::Variant* v : variants::AllVariants()) {
    if (!v->own_clocks_only) continue;
    for (const variants::ClockDef& c : v->own_clocks) {
      const double ns = Ns(r, absl::StrFormat("reader/%s/%s", v->name, c.name));
      target(absl::StrFormat("%s ÷ %s", c.name, CounterName(v->counter_read)),
             ns / Ns(r, CounterBench(v->counter_read)), 1.2, "×");
    }
  }
  target("simulated read (no injection) ÷ host vDSO MONOTONIC",
         paired_plain > 0             ? paired_plain
         : plain > 0 && host_mono > 0 ? (1e9 / plain) / host_mono
                                      : 0,
         3.0, "×", kPairedNoInjection);
  target("simulated read (random injection) ÷ host vDSO MONOTONIC",
         paired_injected > 0             ? paired_injected
         : injected > 0 && host_mono > 0 ? (1e9 / injected) / host_mono
                                         : 0,
         5.0, "×", kPairedInjection);
  for (const TreeRatio& t : tree_ratios) {
    target(absl::StrFormat("kernel tree %s simulated ÷ its era's built-in "
                           "reader",
                           t.which),
           t.ratio, 1.5, "×", t.pair);
  }
  target("exhaustive, one call against one update (ms)", one / 1e6,
         kExhaustiveTargetMs, " ms");
  AppendWhyMissed(r, host_mono, plain, one / 1e6, &o);
  return o;
}

bool WriteReport(const std::string& markdown, const ReportOptions& options) {
  std::string path = options.out;
  if (path.empty()) {
    path = "docs/benchmarks.md";
    if (const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY")) {
      path = std::string(ws) + "/" + path;
    }
  } else if (path[0] != '/') {
    if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
      path = std::string(wd) + "/" + path;
    }
  }
  std::string kept;
  {
    std::ifstream old(path);
    std::stringstream text;
    text << old.rdbuf();
    const size_t at = text.str().find(kHandWrittenMarker);
    if (at != std::string::npos) kept = "\n" + text.str().substr(at);
  }
  std::ofstream out(path);
  out << markdown << kept;
  out.close();
  if (!out) {
    std::fprintf(stderr, "bench: cannot write the report to %s\n",
                 path.c_str());
    return false;
  }
  std::fprintf(stderr, "bench: report written to %s\n", path.c_str());
  return true;
}

}  // namespace vdsolab::bench
