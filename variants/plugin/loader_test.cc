// The plugin ABI end to end: the example plugin (examples/plugin) loads,
// runs in the simulation through the hooked access policy, and passes the
// same checks as the built-in reader it reimplements; a broken plugin file
// is refused with a message that names the problem.

#include "variants/plugin/loader.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_format.h"
#include "sim/engine.h"
#include "sim/exhaustive.h"
#include "testing/runfile.h"
#include "variants/registry.h"

namespace vdsolab::variants {
namespace {

using ::vdsolab::testing::Runfile;

sim::Scenario Racy() {
  sim::Scenario s;
  s.run.duration_ns = 300000000;
  s.readers = {sim::ReaderSpec{}, sim::ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonic,       kClockRealtime,
                         kClockMonotonicRaw,    kClockBoottime,
                         kClockRealtimeCoarse,  kClockTai,
                         kClockMonotonicCoarse, kClockProcessCputimeId};
  s.readers[1].period_ns = 3000;
  // Slow, stalling stores and preempted readers: calls race the writer.
  s.timing.store_ns = 40;
  s.timing.writer_stall_ppm = 20000;
  s.timing.writer_stall_max_ns = 5000;
  s.timing.preempt_ppm = 5000;
  s.timing.preempt_max_ns = 20000;
  return s;
}

TEST(PluginLoader, RunsTheExamplePluginLikeTheBuiltInReader) {
  absl::StatusOr<const Variant*> v =
      LoadPluginVariant(Runfile("examples/plugin/libexample_plugin.so"));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ((*v)->name, "example-c");
  // Registered: the CLI and the property suite find it by name.
  absl::StatusOr<const Variant*> found = FindVariant("example-c");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, *v);

  absl::StatusOr<sim::RunResult> r = sim::RunRandom(Racy(), **v);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->failed);
  EXPECT_GT(r->coverage.vdso_answers, 10000u);
  EXPECT_GT(r->coverage.raced, 0u);      // The hooks reached the plugin.
  EXPECT_GT(r->coverage.fallbacks, 0u);  // CPU-time clock: its syscall.
  EXPECT_GT(r->stats[0].checked, 0u);    // exact
  std::printf("example plugin: %llu calls, %llu raced a writer store\n",
              static_cast<unsigned long long>(r->coverage.calls),
              static_cast<unsigned long long>(r->coverage.raced));

  // Exhaustively: every interleaving of one MONOTONIC call with an update.
  sim::Scenario one;
  one.run.strategy = sim::Strategy::kExhaustive;
  one.readers[0].clocks = {kClockMonotonic};
  absl::StatusOr<sim::ExploreResult> e = sim::Explore(one, **v);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->complete);
  EXPECT_GT(e->interleavings, 10u);
  EXPECT_EQ(e->failing, 0u);

  // The native build calls the real counter through the same callbacks.
  ASSERT_NE((*v)->native_loop, nullptr);
}

constexpr ClockId kExampleTrace = 0x20000;  // own_clock_plugin.c's.
constexpr ClockId kExampleTscNs = 0x20001;

bool HasViolation(const sim::RunResult& r, sim::Property p,
                  const std::string& clock) {
  for (const sim::Violation& v : r.violations) {
    if (v.property == p && v.verdict == sim::Verdict::kDefect &&
        v.detail.find(clock) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// ABI version 4: a tracer's clocks of its own. The one declared the twin of
// MONOTONIC_RAW is held to RAW's system call bit for bit, torn reads
// included; the one with its own origin is checked for monotonicity and
// measured against RAW. The plugin leaves every kernel clock to the
// syscall (whose answers `exact` counts too, and `torn` does not).
TEST(PluginLoader, JudgesAVersion4PluginsOwnClocks) {
  absl::StatusOr<const Variant*> v =
      LoadPluginVariant(Runfile("examples/plugin/libown_clock_plugin.so"));
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ((*v)->own_clocks.size(), 2u);
  EXPECT_EQ((*v)->own_clocks[0].id, kExampleTrace);
  EXPECT_EQ((*v)->own_clocks[0].name, "CLOCK_EXAMPLE_TRACE");
  EXPECT_EQ((*v)->own_clocks[0].same_as, kClockMonotonicRaw);
  EXPECT_EQ((*v)->own_clocks[1].kind, ClockKind::kUserspace);
  EXPECT_EQ(VariantClockName(**v, kExampleTscNs), "example_tsc_ns");

  absl::StatusOr<sim::RunResult> r = sim::RunRandom(Racy(), **v);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->failed);
  EXPECT_GT(r->stats[static_cast<int>(sim::Property::kExact) - 1].checked,
            1000u);
  EXPECT_GT(r->stats[static_cast<int>(sim::Property::kTorn) - 1].checked,
            1000u);
  EXPECT_GT(r->coverage.raced, 0u);
  // Measured: the clock without a kernel counterpart, not the twin.
  EXPECT_EQ(r->divergence.count(kExampleTrace), 0u);
  ASSERT_EQ(r->divergence.count(kExampleTscNs), 1u);
  EXPECT_GT(r->divergence[kExampleTscNs].samples, 1000u);

  // Readers of the twin alone (own_clocks = false): every exact check is
  // the twin's, answered from the page.
  sim::Scenario twin = Racy();
  for (sim::ReaderSpec& reader : twin.readers) {
    reader.clocks = {kExampleTrace};
    reader.own_clocks = false;
  }
  r = sim::RunRandom(twin, **v);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->failed);
  EXPECT_EQ(r->coverage.fallbacks, 0u);
  EXPECT_GT(r->stats[static_cast<int>(sim::Property::kExact) - 1].checked,
            10000u);
  EXPECT_EQ(r->divergence.count(kExampleTscNs), 0u);

  // A reader in a time namespace: the twin falls back there, and the
  // syscall moves it by RAW's offset, as it moves RAW.
  sim::Scenario ns = Racy();
  ns.readers[1].timens = true;
  ns.kernel.timens_monotonic = Timespec64{3600, 250000000};
  r = sim::RunRandom(ns, **v);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->failed);
  EXPECT_GT(r->coverage.fallbacks, 1000u);

  sim::Scenario one;
  one.run.strategy = sim::Strategy::kExhaustive;
  one.readers[0].clocks = {kExampleTrace};
  absl::StatusOr<sim::ExploreResult> e = sim::Explore(one, **v);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->complete);
  EXPECT_GT(e->interleavings, 10u);
  EXPECT_EQ(e->failing, 0u);
}

TEST(PluginLoader, FindsTheBugsOfAVersion4PluginsOwnClocks) {
  auto load = [](int bug) {
    return LoadPluginVariant(Runfile(
        absl::StrFormat("examples/plugin/libown_clock_plugin_bug%d.so", bug)));
  };
  // 1: no seq re-check: some interleaving of one call with an update
  // answers a mix of two states.
  absl::StatusOr<const Variant*> v1 = load(1);
  ASSERT_TRUE(v1.ok()) << v1.status();
  sim::Scenario one;
  one.run.strategy = sim::Strategy::kExhaustive;
  one.readers[0].clocks = {kExampleTrace};
  absl::StatusOr<sim::ExploreResult> e = sim::Explore(one, **v1);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_GT(e->failing, 0u);

  // 2: the base and the delta shifted apart: RAW's value, often 1 ns off.
  absl::StatusOr<const Variant*> v2 = load(2);
  ASSERT_TRUE(v2.ok()) << v2.status();
  absl::StatusOr<sim::RunResult> r = sim::RunRandom(Racy(), **v2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->failed);
  EXPECT_TRUE(HasViolation(*r, sim::Property::kExact, "CLOCK_EXAMPLE_TRACE"));

  // 3: 28 bits of the counter: the measured clock goes backwards.
  absl::StatusOr<const Variant*> v3 = load(3);
  ASSERT_TRUE(v3.ok()) << v3.status();
  r = sim::RunRandom(Racy(), **v3);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->failed);
  EXPECT_TRUE(HasViolation(*r, sim::Property::kMonotonic, "example_tsc_ns"));

  // 5: the twin always asks the syscall: right answers, no fast path.
  absl::StatusOr<const Variant*> v5 = load(5);
  ASSERT_TRUE(v5.ok()) << v5.status();
  r = sim::RunRandom(Racy(), **v5);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->failed);
  EXPECT_TRUE(
      HasViolation(*r, sim::Property::kFastPath, "CLOCK_EXAMPLE_TRACE"));
  EXPECT_EQ(r->stats[static_cast<int>(sim::Property::kExact) - 1].defects, 0u);

  // 6: the measured clock, rebased on the page's RAW base and read without
  // its seq loop: no oracle says its value, but rerun on each state current
  // during a raced call, whole, it answers otherwise.
  absl::StatusOr<const Variant*> v6 = load(6);
  ASSERT_TRUE(v6.ok()) << v6.status();
  r = sim::RunRandom(Racy(), **v6);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->failed);
  EXPECT_TRUE(HasViolation(*r, sim::Property::kTorn, "example_tsc_ns"));

  // 4: the seconds loaded after the seq loop: a whole second off, but only
  // where an update carries RAW into a new second, which the exhaustive
  // search reaches when the twin slides its window as RAW does.
  absl::StatusOr<const Variant*> v4 = load(4);
  ASSERT_TRUE(v4.ok()) << v4.status();
  sim::Scenario roll;
  roll.run.strategy = sim::Strategy::kExhaustive;
  roll.run.duration_ns = 3000000000;
  roll.run.exhaustive_at_ns = 900000000;
  roll.run.exhaustive_updates = 2;
  roll.run.exhaustive_rollover = true;
  roll.run.exhaustive_reduction = sim::Reduction::kPor;
  roll.readers[0].clocks = {kExampleTrace};
  e = sim::Explore(roll, **v4);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->complete);
  EXPECT_GT(e->failing, 0u);
  // The right clock holds the same search.
  absl::StatusOr<const Variant*> right = FindVariant("example-own-clocks");
  if (!right.ok()) {
    right =
        LoadPluginVariant(Runfile("examples/plugin/libown_clock_plugin.so"));
  }
  ASSERT_TRUE(right.ok()) << right.status();
  e = sim::Explore(roll, **right);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->complete);
  EXPECT_EQ(e->failing, 0u);
}

TEST(PluginLoader, SaysWhatIsWrongWithABadFile) {
  absl::StatusOr<const Variant*> missing =
      LoadPluginVariant("/nonexistent/libnothing.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/libnothing.so"),
            std::string::npos);

  // A bare name is a file here, not a search of the library path.
  absl::StatusOr<const Variant*> bare = LoadPluginVariant("libm.so.6");
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.status().message().find("./libm.so.6"), std::string::npos)
      << bare.status();

  // A shared object that is not a plugin.
  absl::StatusOr<const Variant*> not_plugin =
      LoadPluginVariant("/lib/x86_64-linux-gnu/libm.so.6");
  ASSERT_FALSE(not_plugin.ok());
  EXPECT_NE(not_plugin.status().message().find(
                "no vdsolab_plugin_v4, vdsolab_plugin_v3, "
                "vdsolab_plugin_v2 or "
                "vdsolab_plugin_v1"),
            std::string::npos)
      << not_plugin.status();

  absl::StatusOr<const Variant*> future =
      LoadPluginVariant(Runfile("examples/plugin/libbad_abi_plugin.so"));
  ASSERT_FALSE(future.ok());
  EXPECT_NE(future.status().message().find("ABI version 99"), std::string::npos)
      << future.status();
}

// Version 2: the plugin loads the page itself after before_load(), so the
// simulation's hooks must reach it through that callback alone; the
// variant carries the semantics and counter instruction it declares.
// A plugin linked with -Ofast changes the process's MXCSR (FTZ/DAZ) in a
// constructor while dlopen() loads it: refused with the reason and a hint,
// MXCSR put back, and the loader still usable (dlopen() returned: no lock
// was left held).
TEST(PluginLoader, RefusesAFastMathPluginAndLoadsTheNext) {
  uint32_t before = 0;
  asm volatile("stmxcsr %0" : "=m"(before));
  absl::StatusOr<const Variant*> fast =
      LoadPluginVariant(Runfile("examples/plugin/libfast_math_plugin.so"));
  uint32_t after = 0;
  asm volatile("stmxcsr %0" : "=m"(after));
  ASSERT_FALSE(fast.ok());
  EXPECT_NE(fast.status().message().find("floating-point control changed"),
            std::string::npos)
      << fast.status();
  EXPECT_NE(fast.status().message().find("-ffast-math"), std::string::npos)
      << fast.status();
  EXPECT_EQ(after & 0xffc0u, before & 0xffc0u);
  EXPECT_FALSE(LoaderPoisoned());
  absl::StatusOr<const Variant*> next =
      LoadPluginVariant(Runfile("examples/plugin/libentry_points_plugin_0.so"));
  EXPECT_TRUE(next.ok()) << next.status();
}

TEST(PluginLoader, RunsAVersion2PluginThroughBeforeLoad) {
  const std::string path = Runfile("examples/plugin/libexample_plugin_v2.so");
  absl::StatusOr<const Variant*> v = LoadPluginVariant(path);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ((*v)->name, "example-c-v2");
  EXPECT_EQ((*v)->semantics.counter, CounterSemantics::kMasked63);
  EXPECT_TRUE((*v)->semantics.overflow_protected);
  EXPECT_TRUE((*v)->semantics.coarse_from_coarse_nsec);
  EXPECT_EQ((*v)->counter_read, vdso::CounterRead::kOrdered);
  const PluginInfo* info = FindPluginInfo(*v);
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->abi_version, 2);
  EXPECT_EQ(info->era, "Linux 6.18");
  EXPECT_EQ(info->origin, "examples/plugin/example_plugin_v2.c");
  EXPECT_EQ(info->path, path);

  absl::StatusOr<sim::RunResult> r = sim::RunRandom(Racy(), **v);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->failed);
  EXPECT_GT(r->coverage.vdso_answers, 10000u);
  EXPECT_GT(r->coverage.raced, 0u);  // before_load() reached the scheduler.
  EXPECT_GT(r->stats[0].checked, 0u);
  std::printf("v2 example plugin: %llu calls, %llu raced a writer store\n",
              static_cast<unsigned long long>(r->coverage.calls),
              static_cast<unsigned long long>(r->coverage.raced));

  sim::Scenario one;
  one.run.strategy = sim::Strategy::kExhaustive;
  one.readers[0].clocks = {kClockMonotonic};
  absl::StatusOr<sim::ExploreResult> e = sim::Explore(one, **v);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->complete);
  EXPECT_GT(e->interleavings, 10u);
  EXPECT_EQ(e->failing, 0u);
}

TEST(PluginLoader, RefusesAVersion2RecordWithAFieldOutOfRange) {
  const struct {
    int file;
    const char* field;
  } kCases[] = {{1, "abi_version 1"},
                {2, "counter_semantics 7"},
                {3, "semantics_flags 0x10"},
                {4, "counter_read 9"},
                // The record's pointers are the plugin's: a wild one is its
                // crash, read contained, and garbage is refused, not read.
                {5,
                 "crashed (SIGSEGV at 0x10) in its entry point or reading "
                 "its record"},
                {6, "n_vdso_clocks 4294967295"},
                {7, "name: not UTF-8"},
                {8, "vdso_clocks[2] = 99: not a clock a vDSO page holds"},
                // Printed as they are by `variants` and reports: an escape
                // sequence would reach the user's terminal.
                {9, "summary: control character 0x1b at byte 19"}};
  for (const auto& c : kCases) {
    const std::string path = Runfile("examples/plugin/libbad_v2_plugin_" +
                                     std::to_string(c.file) + ".so");
    absl::StatusOr<const Variant*> v = LoadPluginVariant(path);
    ASSERT_FALSE(v.ok()) << c.field;
    const std::string msg(v.status().message());
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.field), std::string::npos) << msg;
    // Refused plugins are not registered.
    EXPECT_FALSE(FindVariant("broken-v2").ok());
  }
}

}  // namespace
}  // namespace vdsolab::variants
