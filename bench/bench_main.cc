// vdsolab's benchmarks (Google Benchmark): the host's vDSO and syscall per
// clock, the counter instructions, every variant's native reader on a page
// kept current, the seeds' own measures, and the simulator.
//
//   ./bazelw run //bench                 the Google Benchmark console output
//   ./bazelw run //bench -- --report     + a Markdown report of the ratios,
//                                        written to docs/benchmarks.md
//
// --report_out=PATH writes the report elsewhere; --quick shortens every
// measurement (for tests); --kernel-tree=PATH (repeatable) adds a kernel
// tree's own vDSO code simulated against the built-in reader of its era
// (default without --quick: Debian's linux-source tarballs in /usr/src, if
// present; --kernel-tree= with no path: none); --benchmark_* flags work as
// usual.

#include <benchmark/benchmark.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "bench/counters.h"
#include "bench/live_page.h"
#include "bench/machine_info.h"
#include "bench/report.h"
#include "bench/seed_measures.h"
#include "bench/sim_benchmarks.h"
#include "common/clockid.h"
#include "host/live_vvar.h"
#include "host/vdso_elf.h"
#include "variants/registry.h"

namespace vdsolab::bench {
namespace {

constexpr int kBatch = 1000;  // Native reader calls per timed batch.

uint64_t ToNs(const struct timespec& ts) {
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t HostVdso(ClockId clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);  // glibc calls the vDSO.
  return ToNs(ts);
}

uint64_t HostSyscall(ClockId clock) {
  struct timespec ts;
  syscall(SYS_clock_gettime, clock, &ts);
  return ToNs(ts);
}

// __vdso_clock_gettime itself, called through its address as glibc does
// after its own dispatch: the figure vdsolab's inlined readers compare with.
HostClockGettime FindHostVdso() {
  absl::StatusOr<host::VdsoMappings> maps = host::FindVdsoMappings();
  if (!maps.ok() || !maps->vdso) return nullptr;
  absl::StatusOr<host::VdsoSymbol> fn = host::FindVdsoSymbol(
      "__vdso_clock_gettime", maps->vdso->end - maps->vdso->start);
  if (!fn.ok()) return nullptr;
  return reinterpret_cast<HostClockGettime>(fn->address);
}

struct Pages {
  std::map<std::string, std::unique_ptr<LiveVariantPage>> variant;
  std::unique_ptr<HostPageMirror> host;
  std::string host_error;
};

void RegisterHost(Pages& pages) {
  const HostClockGettime direct = FindHostVdso();
  for (ClockId c : kVdsoServedClocks) {
    if (direct != nullptr) {
      benchmark::RegisterBenchmark(
          absl::StrFormat("host_vdso_direct/%s", ClockName(c)).c_str(),
          [c, direct](benchmark::State& st) {
            struct timespec ts;
            for (auto _ : st) {
              direct(c, &ts);
              benchmark::DoNotOptimize(ts);
            }
          });
    }
    benchmark::RegisterBenchmark(
        absl::StrFormat("host_vdso/%s", ClockName(c)).c_str(),
        [c](benchmark::State& st) {
          struct timespec ts;
          for (auto _ : st) {
            clock_gettime(c, &ts);
            benchmark::DoNotOptimize(ts);
          }
        });
    benchmark::RegisterBenchmark(
        absl::StrFormat("host_syscall/%s", ClockName(c)).c_str(),
        [c](benchmark::State& st) {
          struct timespec ts;
          for (auto _ : st) {
            syscall(SYS_clock_gettime, c, &ts);
            benchmark::DoNotOptimize(ts);
          }
        });
  }
  benchmark::RegisterBenchmark("counter/rdtsc", [](benchmark::State& st) {
    for (auto _ : st) benchmark::DoNotOptimize(Rdtsc());
  });
  benchmark::RegisterBenchmark("counter/lfence_rdtsc",
                               [](benchmark::State& st) {
                                 for (auto _ : st) {
                                   benchmark::DoNotOptimize(LfenceRdtsc());
                                 }
                               });
  benchmark::RegisterBenchmark("counter/rdtscp", [](benchmark::State& st) {
    for (auto _ : st) benchmark::DoNotOptimize(Rdtscp());
  });
  if (pages.host != nullptr) {
    const variants::Variant& up = **variants::FindVariant("upstream");
    const uint8_t* page = pages.host->data();
    for (ClockId c : kVdsoServedClocks) {
      benchmark::RegisterBenchmark(
          absl::StrFormat("reader/upstream@host_page/%s", ClockName(c)).c_str(),
          [&up, page, c](benchmark::State& st) {
            while (st.KeepRunningBatch(kBatch)) {
              benchmark::DoNotOptimize(up.native_loop(page, c, kBatch));
            }
          });
    }
  }
}

std::vector<ClockId> BenchClocks(const variants::Variant& v) {
  std::vector<ClockId> clocks;
  if (!v.own_clocks_only) clocks = v.vdso_clocks;
  for (const variants::ClockDef& c : v.own_clocks) {
    bool listed = false;
    for (ClockId id : clocks) listed |= id == c.id;
    if (!listed) clocks.push_back(c.id);
  }
  return clocks;
}

void RegisterReaders(Pages& pages, uint32_t tsc_khz) {
  for (const variants::Variant* v : variants::AllVariants()) {
    if (v->native_loop == nullptr) continue;
    absl::StatusOr<std::unique_ptr<LiveVariantPage>> page =
        LiveVariantPage::Start(*v, tsc_khz);
    if (!page.ok()) {
      std::fprintf(stderr, "bench: no live page for %s: %s\n",
                   std::string(v->name).c_str(),
                   std::string(page.status().message()).c_str());
      continue;
    }
    const uint8_t* data = (*page)->data();
    pages.variant[std::string(v->name)] = *std::move(page);
    for (ClockId c : BenchClocks(*v)) {
      benchmark::RegisterBenchmark(
          absl::StrFormat("reader/%s/%s", v->name,
                          variants::VariantClockName(*v, c))
              .c_str(),
          [v, data, c](benchmark::State& st) {
            while (st.KeepRunningBatch(kBatch)) {
              benchmark::DoNotOptimize(v->native_loop(data, c, kBatch));
            }
          });
    }
  }
}

// The seeds' measures, run once each after the benchmarks.
SeedFigures MeasureSeeds(const Pages& pages, bool quick) {
  SeedFigures f;
  const int repeat = quick ? 20 : 2000;
  const uint64_t interval = quick ? 20000000u : 1000000000u;
  const int iterations = quick ? 20000 : 2000000;
  const auto native = [&pages](const char* variant, ClockId clock) {
    const variants::Variant* v = *variants::FindVariant(variant);
    const uint8_t* page = pages.variant.at(variant)->data();
    return ClockCall(
        [v, page, clock] { return v->native_loop(page, clock, 1); });
  };
  struct Source {
    std::string name;
    ClockCall call;
  };
  const std::vector<Source> latency = {
      {"host vDSO, MONOTONIC_RAW", [] { return HostVdso(kClockMonotonicRaw); }},
      {"host vDSO, MONOTONIC", [] { return HostVdso(kClockMonotonic); }},
      {"host syscall, MONOTONIC_RAW",
       [] { return HostSyscall(kClockMonotonicRaw); }},
      {"x86-4.16, MONOTONIC_RAW (its syscall fallback)",
       native("x86-4.16", kClockMonotonicRaw)},
      {"vasdias-v1, MONOTONIC_RAW", native("vasdias-v1", kClockMonotonicRaw)},
      {"vasdias-rdtscp, MONOTONIC_RAW",
       native("vasdias-rdtscp", kClockMonotonicRaw)},
      {"vasdias-rc5-2, MONOTONIC_RAW",
       native("vasdias-rc5-2", kClockMonotonicRaw)},
      {"upstream, MONOTONIC_RAW", native("upstream", kClockMonotonicRaw)},
  };
  for (const Source& s : latency) {
    f.latency.push_back({s.name, TimerLatency(s.call, repeat)});
  }
  // Seed 003 counts a vdsolab reader's calls: which one, for the report.
  struct Counted {
    std::string name;
    const char* variant;  // nullptr: the host's.
    ClockId clock;
    ClockCall call;
  };
  const auto reader = [&native](std::string name, const char* variant,
                                ClockId clock) {
    return Counted{std::move(name), variant, clock, native(variant, clock)};
  };
  const std::vector<Counted> counting = {
      {"host vDSO, MONOTONIC", nullptr, kClockMonotonic,
       [] { return HostVdso(kClockMonotonic); }},
      {"host vDSO, MONOTONIC_RAW", nullptr, kClockMonotonicRaw,
       [] { return HostVdso(kClockMonotonicRaw); }},
      {"host vDSO, REALTIME", nullptr, kClockRealtime,
       [] { return HostVdso(kClockRealtime); }},
      reader("x86-4.16, MONOTONIC_RAW (before the patch: syscall)", "x86-4.16",
             kClockMonotonicRaw),
      reader("sverdlin-v2, MONOTONIC_RAW (after the patch)", "sverdlin-v2",
             kClockMonotonicRaw),
      reader("sverdlin-v2, MONOTONIC", "sverdlin-v2", kClockMonotonic),
  };
  for (const Counted& c : counting) {
    f.calls.push_back(CallCount{
        c.name,
        c.variant == nullptr ? nullptr : *variants::FindVariant(c.variant),
        c.clock, CallsInInterval(c.call, interval)});
  }
  f.interval_ns = interval;
  const std::vector<Source> cycles = {
      {"host vDSO, REALTIME", [] { return HostVdso(kClockRealtime); }},
      {"host vDSO, MONOTONIC", [] { return HostVdso(kClockMonotonic); }},
      {"host syscall, REALTIME", [] { return HostSyscall(kClockRealtime); }},
      {"host syscall, MONOTONIC", [] { return HostSyscall(kClockMonotonic); }},
      {"trace-clock, CLOCK_TRACE (vDSO)", native("trace-clock", 32)},
      {"x86-4.16, REALTIME", native("x86-4.16", kClockRealtime)},
  };
  for (const Source& s : cycles) {
    f.cycles.push_back({s.name, CyclesPerCall(s.call, iterations)});
  }
  return f;
}

}  // namespace
// Debian's linux-source tarballs, where installed (docs/kernel-trees.md).
std::vector<std::string> DefaultTrees() {
  std::vector<std::string> trees;
  for (const char* t : {"/usr/src/linux-source-6.1.tar.xz",
                        "/usr/src/linux-source-6.12.tar.xz"}) {
    if (access(t, R_OK) == 0) trees.push_back(t);
  }
  return trees;
}

}  // namespace vdsolab::bench

int main(int argc, char** argv) {
  using namespace vdsolab::bench;
  ReportOptions options;
  std::vector<char*> rest;
  std::vector<std::string> trees;
  bool trees_given = false;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--report") {
      options.report = true;
    } else if (a.rfind("--report_out=", 0) == 0) {
      options.report = true;
      options.out = a.substr(13);
      if (options.out.empty()) {
        std::fprintf(stderr, "bench: --report_out needs a file path\n");
        return 2;
      }
    } else if (a == "--quick") {
      options.quick = true;
    } else if (a.rfind("--kernel-tree=", 0) == 0) {
      trees_given = true;
      if (a.size() > 14) trees.push_back(a.substr(14));
    } else {
      rest.push_back(argv[i]);
    }
  }
  // Defaults, each unless given: a report takes the median of 5 short
  // repetitions run in random order, so that a host figure and the reader
  // it is divided into are measured across the same stretch of time, not
  // minutes apart under different background load.
  std::vector<std::string> defaults;
  if (options.quick) {
    defaults = {"--benchmark_min_time=0.01"};
  } else if (options.report) {
    defaults = {"--benchmark_min_time=0.1", "--benchmark_repetitions=5",
                "--benchmark_enable_random_interleaving=true"};
  } else {
    defaults = {"--benchmark_min_time=0.3"};
  }
  // The program name, the defaults not given, then what was given. (Built
  // anew rather than inserted into: GCC 12 under UBSan warns about the
  // insert with -Warray-bounds.)
  std::vector<char*> args(rest.begin(), rest.begin() + 1);
  for (std::string& d : defaults) {
    const std::string key = d.substr(0, d.find('='));
    bool given = false;
    for (char* a : rest) given |= std::strncmp(a, key.c_str(), key.size()) == 0;
    if (!given) args.push_back(d.data());
  }
  args.insert(args.end(), rest.begin() + 1, rest.end());
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 2;

  const MachineInfo machine = ProbeMachine();
  if (machine.tsc_khz == 0) {
    std::fprintf(stderr, "bench: could not measure the TSC frequency\n");
    return 1;
  }
  Pages pages;
  absl::StatusOr<std::unique_ptr<HostPageMirror>> mirror =
      HostPageMirror::Start();
  if (mirror.ok()) {
    pages.host = *std::move(mirror);
  } else {
    pages.host_error = std::string(mirror.status().message());
  }
  RegisterHost(pages);
  RegisterReaders(pages, machine.tsc_khz);
  const auto upstream = pages.variant.find("upstream");
  RegisterSimBenchmarks(
      options.quick,
      upstream == pages.variant.end() ? nullptr : upstream->second->data(),
      FindHostVdso());
  if (!trees_given && !options.quick) trees = DefaultTrees();
  for (const std::string& e : RegisterTreeBenchmarks(options.quick, trees)) {
    std::fprintf(stderr, "bench: no kernel-tree benchmark for %s\n", e.c_str());
  }

  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  if (!options.report) return 0;
  const SeedFigures seeds = MeasureSeeds(pages, options.quick);
  const std::string md =
      FormatReport(machine,
                   pages.host != nullptr ? pages.host->clock_mode()
                                         : "(" + pages.host_error + ")",
                   reporter.results(), seeds, options);
  std::fputs(md.c_str(), stdout);
  return WriteReport(md, options) ? 0 : 1;
}
