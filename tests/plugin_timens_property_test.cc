// A plugin's readers in a time namespace, end to end: the version-2
// example plugin (examples/plugin/example_plugin_v2.c) declares
// VDSOLAB_SEM_TIME_NAMESPACE, so the simulation runs its namespace readers
// through the namespace's view of the vvar area, telling it where the time
// page is (vdsolab_ops.time_page_offset), as it does a kernel tree's own
// do_hres_timens(). For namespace offsets anywhere in
// proc_timens_set_offset()'s domain, of both signs, and a writer and
// readers that race, every property holds, and the namespace's readers
// enter through the namespace page on their calls: a loader that showed
// the plugin the time page where the namespace page is, or no time page,
// would leave it spinning on the namespace page's seq 1 (a livelock) or
// answering unshifted times (inexact).

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
#include "common/clockid.h"
#include "common/timespec.h"
#include "sim/engine.h"
#include "sim/run_report.h"
#include "sim/scenario.h"
#include "testing/runfile.h"
#include "tests/generators.h"
#include "variants/plugin/loader.h"
#include "variants/variant.h"

namespace vdsolab {
namespace {

using testing::Runfile;

const variants::Variant& ExamplePluginV2() {
  static const variants::Variant* v = [] {
    absl::StatusOr<const variants::Variant*> loaded =
        variants::LoadPluginVariant(
            Runfile("examples/plugin/libexample_plugin_v2.so"));
    if (!loaded.ok()) {
      ADD_FAILURE() << loaded.status();
      return static_cast<const variants::Variant*>(nullptr);
    }
    return *loaded;
  }();
  RC_ASSERT(v != nullptr);
  return *v;
}

// An offset for a clock at most `now_s` seconds into the run, where
// proc_timens_set_offset() takes it (now + offset stays in [0,
// KTIME_SEC_MAX / 2)), with a second's and ten seconds' margin.
Timespec64 GenOffset(int64_t now_s) {
  return testing::GenTimensOffset(-now_s + 1, kKtimeSecMax / 2 - now_s - 10);
}

RC_GTEST_PROP(PluginTimens, NamespaceReadersAnswerTheSyscallPlusOffsets, ()) {
  const variants::Variant& v = ExamplePluginV2();
  RC_ASSERT(v.timens);  // The plugin's declaration reached the variant.

  sim::Scenario s;
  s.run.duration_ns = 20000000;
  s.run.seed = *rc::gen::inRange<uint64_t>(1, 1u << 30);
  s.kernel.hz = *rc::gen::element(100, 250, 1000);
  // Boot 60 s in: MONOTONIC reads at least that, so offsets down to -59 s
  // keep a namespace's clock at 0 or above.
  s.kernel.boot_offset = Timespec64{60, 0};
  s.kernel.timens_monotonic = GenOffset(60);
  s.kernel.timens_boottime = GenOffset(60);
  s.timing.preempt_ppm = *rc::gen::element(0, 5000);
  s.timing.preempt_max_ns = 20000;
  s.timing.writer_stall_ppm = *rc::gen::element(0, 50000);
  s.timing.writer_stall_max_ns = 5000;
  sim::ReaderSpec in_ns;
  in_ns.clocks = {kClockMonotonic,       kClockBoottime, kClockMonotonicRaw,
                  kClockMonotonicCoarse, kClockRealtime, kClockTai};
  in_ns.period_ns = 5000;
  in_ns.timens = true;
  sim::ReaderSpec outside;
  outside.clocks = {kClockMonotonic, kClockBoottime};
  outside.period_ns = 7000;
  s.readers = {in_ns, outside};

  RC_CLASSIFY(s.kernel.timens_monotonic.tv_sec < 0, "MONOTONIC set back");
  RC_CLASSIFY(s.kernel.timens_boottime.tv_sec > 1000000, "BOOTTIME far ahead");
  RC_CLASSIFY(s.timing.preempt_ppm != 0, "preempted readers");

  absl::StatusOr<sim::RunResult> r = sim::RunRandom(s, v);
  RC_ASSERT(r.ok());
  if (r->failed) {
    RC_FAIL(absl::StrFormat(
        "the plugin's namespace readers failed a check (seed %d, offsets "
        "MONOTONIC %s, BOOTTIME %s):\n%s",
        s.run.seed, FormatTimespec(s.kernel.timens_monotonic),
        FormatTimespec(s.kernel.timens_boottime), sim::FormatRunReport(s, *r)));
  }
  RC_ASSERT(r->coverage.timens_calls > 1000u);
  RC_ASSERT(r->coverage.vdso_answers > r->coverage.calls / 2);
}

}  // namespace
}  // namespace vdsolab
