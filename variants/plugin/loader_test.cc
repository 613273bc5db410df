// The plugin ABI end to end: the example plugin (examples/plugin) loads,
// runs in the simulation through the hooked access policy, and passes the
// same checks as the built-in reader it reimplements; a broken plugin file
// is refused with a message that names the problem.

#include "variants/plugin/loader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "sim/engine.h"
#include "sim/exhaustive.h"
#include "variants/registry.h"

namespace vdsolab::variants {
namespace {

std::string Runfile(const std::string& path) {
  const char* dir = std::getenv("TEST_SRCDIR");
  return std::string(dir != nullptr ? dir : ".") + "/vdsolab/" + path;
}

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
  EXPECT_NE(not_plugin.status().message().find("no vdsolab_plugin_v1"),
            std::string::npos)
      << not_plugin.status();

  absl::StatusOr<const Variant*> future =
      LoadPluginVariant(Runfile("examples/plugin/libbad_abi_plugin.so"));
  ASSERT_FALSE(future.ok());
  EXPECT_NE(future.status().message().find("ABI version 99"), std::string::npos)
      << future.status();
}

}  // namespace
}  // namespace vdsolab::variants
