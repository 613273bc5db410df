// Emulated calls per second of the host variant against the built-in
// reader of its layout, one call at a time through fixed-counter hooks:
//   bazel run //hostvdso:speed -- [calls] [clock]
// Prints calls/s for each, the hooks per call, and the cost per hook.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "hostvdso/host_variant.h"
#include "hostvdso/internal/image_process.h"
#include "hostvdso/testing/test_images.h"
#include "testing/fixed_counter_hooks.h"
#include "testing/publish_bed.h"
#include "variants/registry.h"

namespace vdsolab::hostvdso {
namespace {

double Run(const variants::Variant& v, vdsolab::testing::PublishBed& bed,
           ClockId clock, int calls) {
  std::unique_ptr<variants::SimReader> reader = v.make_sim_reader();
  const uint64_t counter = bed.state().tkr_mono.cycle_last + 1000;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    vdsolab::testing::FixedCounterHooks h = bed.NewHooks(counter);
    vdso::HookedAccess a(bed.page().data(), &h);
    if (!reader->Call(a, bed.page().data(), clock)) std::abort();
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

int Main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 20000;
  const ClockId clock = argc > 2 ? std::atoi(argv[2]) : kClockMonotonic;
  std::string skip;
  absl::StatusOr<const variants::Variant*> host = testing::LoadRunning(&skip);
  if (!host.ok()) {
    std::fprintf(stderr, "%s\n", std::string(host.status().message()).c_str());
    return 1;
  }
  const variants::Variant& builtin =
      **variants::FindVariant(FindHostImageInfo(*host)->era);
  vdsolab::testing::PublishBed bed(builtin, vdsolab::testing::Tsc(2600000));
  bed.tk().Init(1ull << 40, Timespec64{1764460800, 0}, Timespec64{5, 0});
  Run(**host, bed, clock, 100);  // Warm: the child exists, the page mapped.
  const internal::ProcessStats before = internal::Stats();
  const double h = Run(**host, bed, clock, calls);
  const internal::ProcessStats after = internal::Stats();
  const double b = Run(builtin, bed, clock, calls * 10);
  const double hooks = static_cast<double>(after.hooks - before.hooks) / calls;
  std::printf("loads per call: %.1f emulated, %.1f relocated, %.1f stepped\n",
              static_cast<double>(after.emulated - before.emulated) / calls,
              static_cast<double>(after.relocated - before.relocated) / calls,
              static_cast<double>(after.stepped - before.stepped) / calls);
  std::printf(
      "clock %d: host %.0f calls/s (%.1f us/call, %.1f hooks/call, %.2f "
      "us/hook), built-in %s %.0f calls/s (%.3f us/call)\n",
      clock, calls / h, h / calls * 1e6, hooks, h / calls * 1e6 / hooks,
      std::string(builtin.name).c_str(), calls * 10 / b, b / calls / 10 * 1e6);
  return 0;
}

}  // namespace
}  // namespace vdsolab::hostvdso

int main(int argc, char** argv) { return vdsolab::hostvdso::Main(argc, argv); }
