// How the simulator's cost grows: reads per second (wall and CPU time),
// simulated seconds per wall second, peak RSS and the records a run holds
// (sim::RunResult::retained) against readers (1-64), CPUs
// (1-64) and simulated duration (1 s to 1 day, a long VM pause and a long
// NO_HZ idle included). The table of docs/benchmarks.md ("How cost
// grows").
//
//   ./bazelw run //bench:scaling                  every case, a Markdown table
//   ./bazelw run //bench:scaling -- --quick       short cases (for the test)
//   ./bazelw run //bench:scaling -- --sweep=duration   one sweep only
//
// Each case runs in a child process of its own (this binary again, with
// --case=N), so that its peak RSS (the child's ru_maxrss, from wait4()) is
// its own and not the high-water mark of the cases before it.

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/machine_info.h"
#include "sim/engine.h"
#include "variants/upstream.h"

extern char** environ;

namespace vdsolab::bench {
namespace {

constexpr uint64_t kSec = 1000000000;

struct Case {
  const char* sweep;  // "readers", "cpus", "duration".
  int readers;
  int cpus;
  uint64_t duration_ns;
  uint64_t period_ns;  // Each reader, between calls.
  bool events;         // An adjtimex(), a long pause and a long idle.
};

std::vector<Case> Cases(bool quick) {
  std::vector<Case> cases;
  // Readers each on its own CPU, 50000 calls per simulated second each:
  // the work grows with the readers, the cost per call should not.
  for (int n = 1; n <= 64; n *= 2) {
    cases.push_back(
        Case{"readers", n, n, quick ? kSec / 100 : kSec, 20000, false});
  }
  // 64 readers spread over 1-64 CPUs (reader i on CPU i mod CPUs), moving
  // to another CPU between 1% of their calls.
  for (int n = 1; n <= 64; n *= 2) {
    cases.push_back(
        Case{"cpus", 64, n, quick ? kSec / 400 : kSec / 4, 20000, false});
  }
  // Two readers on two CPUs at 100 calls per simulated second each, so that
  // a simulated day costs minutes: the cost is per call and per writer
  // update, not per simulated second.
  const uint64_t durations[] = {kSec, 60 * kSec, 3600 * kSec, 86400 * kSec};
  for (uint64_t d : durations) {
    if (quick && d > 60 * kSec) break;
    cases.push_back(Case{"duration", 2, 2, d, 10000000, true});
  }
  return cases;
}

std::string FormatDuration(uint64_t ns) {
  if (ns >= 86400 * kSec) {
    return absl::StrFormat("%d day", ns / (86400 * kSec));
  }
  if (ns >= 3600 * kSec) return absl::StrFormat("%d h", ns / (3600 * kSec));
  if (ns >= 60 * kSec) return absl::StrFormat("%d min", ns / (60 * kSec));
  if (ns >= kSec) return absl::StrFormat("%d s", ns / kSec);
  return absl::StrFormat("%d ms", ns / 1000000);
}

sim::Scenario Build(const Case& c) {
  sim::Scenario s;
  s.name = absl::StrFormat("scaling-%s-%d-%d-%d", c.sweep, c.readers, c.cpus,
                           c.duration_ns);
  s.run.duration_ns = c.duration_ns;
  s.machine.cpus.assign(static_cast<size_t>(c.cpus), sim::CpuCounterSpec{});
  s.readers.clear();
  for (int i = 0; i < c.readers; ++i) {
    sim::ReaderSpec r;
    r.cpu = i % c.cpus;
    r.clocks = {kClockMonotonic, kClockRealtime, kClockMonotonicRaw,
                kClockBoottime,  kClockTai,      kClockMonotonicCoarse};
    r.period_ns = c.period_ns;
    if (c.cpus > 1) r.migrate_ppm = 10000;
    s.readers.push_back(r);
  }
  if (c.events) {
    // In proportion to the duration, so that every length has the same
    // shape: NTP steers at 1/8, the VM pauses from 1/4 to 1/2 (no ticks,
    // no calls: 6 h of a day), the timekeeping CPU idles from 5/8 for 1/16
    // (no ticks, calls go on: 1.5 h of a day).
    const uint64_t d = c.duration_ns;
    sim::EventSpec ntp;
    ntp.kind = sim::EventKind::kAdjtimexFrequency;
    ntp.at_ns = d / 8;
    ntp.freq_scaled_ppm = 50 << 16;
    sim::EventSpec pause;
    pause.kind = sim::EventKind::kPause;
    pause.at_ns = d / 4;
    pause.duration_ns = d / 4;
    sim::EventSpec idle;
    idle.kind = sim::EventKind::kIdle;
    idle.at_ns = d / 8 * 5;
    idle.duration_ns = d / 16;
    s.events = {ntp, pause, idle};
  }
  return s;
}

uint64_t ResidentBytes() {
  FILE* f = fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;  // NOLINT(runtime/int)
  const int n = fscanf(f, "%llu %llu", &size, &resident);
  fclose(f);
  return n == 2 ? resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

double Now(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// The child: runs one case and prints its figures as key=value words.
int RunCase(const Case& c) {
  const sim::Scenario s = Build(c);
  const uint64_t rss_before = ResidentBytes();
  // RSS once a tenth of the simulated time has run, against the end: what
  // the run itself keeps adding as it goes.
  uint64_t rss_tenth = 0;
  sim::RandomOptions options;
  options.progress = [&](uint64_t done, uint64_t total, uint64_t, uint64_t) {
    if (rss_tenth == 0 && done >= total / 10) rss_tenth = ResidentBytes();
  };
  const double t0 = Now(CLOCK_MONOTONIC);
  const double cpu0 = Now(CLOCK_PROCESS_CPUTIME_ID);
  absl::StatusOr<sim::RunResult> r =
      sim::RunRandom(s, variants::UpstreamVariant(), options);
  const double wall = Now(CLOCK_MONOTONIC) - t0;
  const double cpu = Now(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  if (!r.ok()) {
    fprintf(stderr, "%s: %s\n", s.name.c_str(),
            std::string(r.status().message()).c_str());
    return 1;
  }
  const uint64_t rss_end = ResidentBytes();
  const sim::Retained& k = r->retained;
  uint64_t failures = 0;
  for (const sim::PropertyStats& st : r->stats) {
    failures += st.defects + st.known_kernel;
  }
  printf(
      "calls=%llu updates=%llu wall=%.6f cpu=%.6f rss_before=%llu "
      "rss_tenth=%llu "
      "rss_end=%llu retained_updates=%llu retained_stores=%llu "
      "retained_states=%llu retained_divergence=%llu retained_violations=%llu "
      "retained_aux=%llu retained_outcomes=%llu failures=%llu\n",
      static_cast<unsigned long long>(r->coverage.calls),      // NOLINT
      static_cast<unsigned long long>(r->updates),             // NOLINT
      wall, cpu, static_cast<unsigned long long>(rss_before),  // NOLINT
      static_cast<unsigned long long>(rss_tenth),              // NOLINT
      static_cast<unsigned long long>(rss_end),                // NOLINT
      static_cast<unsigned long long>(k.updates),              // NOLINT
      static_cast<unsigned long long>(k.stores),               // NOLINT
      static_cast<unsigned long long>(k.checker_states),       // NOLINT
      static_cast<unsigned long long>(k.divergence_points),    // NOLINT
      static_cast<unsigned long long>(k.violations),           // NOLINT
      static_cast<unsigned long long>(k.aux_records),          // NOLINT
      static_cast<unsigned long long>(k.outcomes),             // NOLINT
      static_cast<unsigned long long>(failures));              // NOLINT
  return 0;
}

struct Figures {
  bool ok = false;
  double calls = 0, updates = 0, wall = 0;
  // The run's CPU time as well as its wall time: on a machine shared with
  // other builds the wall time is partly waiting for a CPU.
  double cpu = 0;
  double rss_tenth = 0, rss_end = 0, maxrss = 0;  // Bytes.
  double retained = 0, failures = 0;
  std::string error;
};

// The parent: runs case `index` in a child and reads its line back.
Figures Spawn(const char* self, size_t index, bool quick) {
  Figures f;
  int out[2];
  if (pipe(out) != 0) {
    f.error = "pipe failed";
    return f;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::string case_flag = absl::StrFormat("--case=%d", index);
  std::string quick_flag = quick ? "--quick" : "--full";
  char* argv[] = {const_cast<char*>(self), case_flag.data(), quick_flag.data(),
                  nullptr};
  pid_t pid = 0;
  const int err = posix_spawn(&pid, self, &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (err != 0) {
    close(out[0]);
    f.error = absl::StrFormat("posix_spawn: %s", strerror(err));
    return f;
  }
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) {
    text.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  int status = 0;
  struct rusage usage;
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    f.error = "the case failed";
    return f;
  }
  f.maxrss = static_cast<double>(usage.ru_maxrss) * 1024;  // KiB on Linux.
  double retained = 0;
  for (absl::string_view word : absl::StrSplit(text, ' ')) {
    std::pair<std::string, std::string> kv = absl::StrSplit(word, '=');
    double v = 0;
    if (!absl::SimpleAtod(kv.second, &v)) continue;
    if (kv.first == "calls") f.calls = v;
    if (kv.first == "updates") f.updates = v;
    if (kv.first == "wall") f.wall = v;
    if (kv.first == "cpu") f.cpu = v;
    if (kv.first == "rss_tenth") f.rss_tenth = v;
    if (kv.first == "rss_end") f.rss_end = v;
    if (kv.first == "failures") f.failures = v;
    if (kv.first.rfind("retained_", 0) == 0) retained += v;
  }
  f.retained = retained;
  f.ok = f.wall > 0;
  if (!f.ok) f.error = "no figures in: " + text;
  return f;
}

std::string Mib(double bytes) {
  return absl::StrFormat("%.1f", bytes / (1024.0 * 1024.0));
}

int Main(int argc, char** argv) {
  bool quick = false;
  int only_case = -1;
  std::string sweep;
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--full") {
      quick = false;
    } else if (absl::ConsumePrefix(&a, "--case=")) {
      if (!absl::SimpleAtoi(a, &only_case)) only_case = -2;
    } else if (absl::ConsumePrefix(&a, "--sweep=")) {
      sweep = std::string(a);
    } else {
      fprintf(stderr, "scaling: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  const std::vector<Case> cases = Cases(quick);
  if (only_case != -1) {
    if (only_case < 0 || static_cast<size_t>(only_case) >= cases.size()) {
      fprintf(stderr, "scaling: no case %d\n", only_case);
      return 2;
    }
    return RunCase(cases[static_cast<size_t>(only_case)]);
  }
  const MachineInfo m = ProbeMachine();
  printf(
      "**Machine:** %s, %d CPU(s); Linux %s; clocksource %s. Upstream "
      "reader, six clocks in turn, HZ=250, seed 1%s.\n\n",
      m.cpu_model.c_str(), m.cpus, m.kernel.c_str(), m.clocksource.c_str(),
      quick ? "; --quick (short runs)" : "");
  printf(
      "| sweep | readers | CPUs | simulated | calls | updates | wall s | "
      "CPU s | calls/s (wall) | calls/s (CPU) | CPU ns per call or update | "
      "simulated s / wall s | peak RSS MiB | RSS growth MiB | retained "
      "records |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  fflush(stdout);
  int failed = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    if (!sweep.empty() && sweep != c.sweep) continue;
    // /proc/self/exe: the binary itself, wherever Bazel put it.
    const Figures f = Spawn("/proc/self/exe", i, quick);
    if (!f.ok) {
      fprintf(stderr, "scaling: case %zu (%s): %s\n", i, c.sweep,
              f.error.c_str());
      ++failed;
      continue;
    }
    const double sim_s = static_cast<double>(c.duration_ns) / 1e9;
    printf(
        "| %s | %d | %d | %s | %.0f | %.0f | %.2f | %.2f | %.2fM | %.2fM | "
        "%.0f | %.1f | %s | %s | %.0f |%s\n",
        c.sweep, c.readers, c.cpus, FormatDuration(c.duration_ns).c_str(),
        f.calls, f.updates, f.wall, f.cpu, f.calls / f.wall / 1e6,
        f.cpu > 0 ? f.calls / f.cpu / 1e6 : 0.0,
        f.cpu * 1e9 / (f.calls + f.updates), sim_s / f.wall,
        Mib(f.maxrss).c_str(),
        f.rss_tenth == 0 ? "—" : Mib(f.rss_end - f.rss_tenth).c_str(),
        f.retained,
        f.failures != 0
            ? absl::StrFormat(" (%.0f failures)", f.failures).c_str()
            : "");
    fflush(stdout);
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace vdsolab::bench

int main(int argc, char** argv) { return vdsolab::bench::Main(argc, argv); }
