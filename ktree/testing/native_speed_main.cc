// Native calls per second of a kernel tree's CLOCK_MONOTONIC against the
// built-in reader of its era (docs/kernel-trees.md): both on a page the
// timekeeper model published moments ago from the real TSC, through the
// variants' native loops (NativeAccess: plain loads, lfence; rdtsc). The
// tree's call pays the glue: a hook call per load, the counter thunk, and
// the plugin callbacks.
//
//   bazel run -c opt //ktree:native_speed -- [ITERATIONS]

#include <x86intrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/clockid.h"
#include "ktree/testing/test_trees.h"
#include "timekeeper/clocksource.h"
#include "variants/registry.h"

namespace {

double CallsPerSecond(const vdsolab::variants::Variant& v, const uint8_t* page,
                      uint64_t n) {
  v.native_loop(page, vdsolab::kClockMonotonic, n / 10);  // Warm up.
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t last = v.native_loop(page, vdsolab::kClockMonotonic, n);
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (last == 0)
    std::fprintf(stderr, "%s: the last call failed\n",
                 std::string(v.name).c_str());
  return static_cast<double>(n) / s;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace vdsolab;
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 20000000;
  struct Pair {
    const char* tarball;
    const char* builtin;
  } pairs[] = {{ktree::testing::kTarball61, "6.1"},
               {ktree::testing::kTarball612, "6.10"}};
  for (const Pair& p : pairs) {
    const variants::Variant* tree = ktree::testing::BuildAndLoad(p.tarball);
    if (tree == nullptr) return 1;
    const variants::Variant* builtin = *variants::FindVariant(p.builtin);
    ktree::testing::PublishedPage pp(builtin);
    absl::StatusOr<timekeeper::Clocksource> cs =
        timekeeper::MakeTscClocksource(2600000);
    if (!cs.ok()) return 1;
    pp.Start(*cs, 250, __rdtsc(), Timespec64{1700000000, 0}, Timespec64{1, 0});
    for (int round = 0; round < 3; ++round) {
      const double t = CallsPerSecond(*tree, pp.data(), n);
      const double b = CallsPerSecond(*builtin, pp.data(), n);
      std::printf(
          "%-16s %6.1f M calls/s (%5.1f ns)   built-in %-5s %6.1f M "
          "calls/s (%5.1f ns)   ratio %.1fx\n",
          std::string(tree->name).c_str(), t / 1e6, 1e9 / t, p.builtin, b / 1e6,
          1e9 / b, b / t);
    }
  }
  return 0;
}
