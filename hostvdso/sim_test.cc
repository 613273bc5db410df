// The compiled vDSO in the simulation: every interleaving of one
// clock_gettime(CLOCK_MONOTONIC) with one timekeeper update is explored to
// the end with no failing interleaving, and a racing random run (readers
// preempted at random loads, a writer that stalls mid-update) passes with
// races and retries covered, like the built-in reader of its layout.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "hostvdso/host_variant.h"
#include "hostvdso/testing/test_images.h"
#include "sim/exhaustive.h"
#include "sim/run.h"
#include "sim/scenario_toml.h"
#include "variants/registry.h"

namespace vdsolab::hostvdso {
namespace {

sim::Scenario Load(const std::string& name) {
  const char* dir = std::getenv("TEST_SRCDIR");
  absl::StatusOr<sim::Scenario> s = sim::LoadScenarioFile(
      std::string(dir != nullptr ? dir : ".") + "/vdsolab/scenarios/" + name);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : sim::Scenario{};
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

const variants::Variant& BuiltIn(const variants::Variant* host) {
  return **variants::FindVariant(FindHostImageInfo(host)->era);
}

TEST(HostSim, EveryInterleavingOfOneMonotonicCallWithOneUpdatePasses) {
  VDSOLAB_HOST_VARIANT_OR_SKIP(host);
  sim::Scenario s = Load("exhaustive-monotonic.toml");
  s.run.exhaustive_updates = 1;
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<sim::ExploreResult> got = sim::Explore(s, *host);
  const double host_s = Seconds(start);
  ASSERT_TRUE(got.ok()) << got.status();
  start = std::chrono::steady_clock::now();
  absl::StatusOr<sim::ExploreResult> want = sim::Explore(s, BuiltIn(host));
  const double builtin_s = Seconds(start);
  ASSERT_TRUE(want.ok()) << want.status();
  std::printf(
      "one MONOTONIC call vs one update (%u stores): host %llu "
      "interleavings, %llu failing, %.2f s (%.0f/s); built-in %s %llu, "
      "%llu failing, %.3f s\n",
      got->stores, static_cast<unsigned long long>(got->interleavings),
      static_cast<unsigned long long>(got->failing), host_s,
      static_cast<double>(got->interleavings) / host_s,
      std::string(BuiltIn(host).name).c_str(),
      static_cast<unsigned long long>(want->interleavings),
      static_cast<unsigned long long>(want->failing), builtin_s);
  EXPECT_TRUE(got->complete);
  EXPECT_EQ(got->failing, 0u);
  EXPECT_TRUE(got->stop_reason.empty()) << got->stop_reason;
  // The image's loads race the update's stores: many interleavings.
  EXPECT_GT(got->interleavings, 20u);
  EXPECT_TRUE(want->complete);
}

TEST(HostSim, ARacingRandomRunPassesWithRacesAndRetries) {
  VDSOLAB_HOST_VARIANT_OR_SKIP(host);
  sim::Scenario s = Load("preempted-readers.toml");
  // 300 ms: about 1,300 calls (preemptions of up to 6 ms space them).
  s.run.duration_ns = 300000000;
  s.run.reader = std::string(host->name);
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<sim::Outcome> got = sim::Run(s, *host);
  const double host_s = Seconds(start);
  ASSERT_TRUE(got.ok()) << got.status();
  start = std::chrono::steady_clock::now();
  absl::StatusOr<sim::Outcome> want = sim::Run(s, BuiltIn(host));
  const double builtin_s = Seconds(start);
  ASSERT_TRUE(want.ok()) << want.status();
  std::fputs(sim::FormatOutcome(s, *got).c_str(), stdout);
  const sim::Coverage& c = got->random->coverage;
  const sim::Coverage& b = want->random->coverage;
  std::printf(
      "host: %llu calls in %.2f s (%.0f calls/s), raced %llu, retried %llu, "
      "preempted %llu; built-in: %llu calls in %.3f s (%.0f calls/s), "
      "raced %llu, retried %llu\n",
      static_cast<unsigned long long>(c.calls), host_s,
      static_cast<double>(c.calls) / host_s,
      static_cast<unsigned long long>(c.raced),
      static_cast<unsigned long long>(c.retries),
      static_cast<unsigned long long>(c.preemptions),
      static_cast<unsigned long long>(b.calls), builtin_s,
      static_cast<double>(b.calls) / builtin_s,
      static_cast<unsigned long long>(b.raced),
      static_cast<unsigned long long>(b.retries));
  EXPECT_FALSE(got->failed);
  EXPECT_TRUE(got->complete);
  EXPECT_GT(c.calls, 1000u);
  EXPECT_GT(c.raced, 0u);
  EXPECT_GT(c.retries, 0u);
  EXPECT_GT(c.preemptions, 0u);
  EXPECT_EQ(c.crashes, 0u);
  EXPECT_EQ(c.livelocks, 0u);
}

// With a livelock budget of 2 the simulation abandons calls that spin or
// retry more: the child leaves the image from its fault handler
// (siglongjmp) where the parent's retry points say no, and exactly the
// calls the built-in reader abandons are abandoned.
TEST(HostSim, ALivelockBudgetAbandonsTheCallsTheBuiltInReaderAbandons) {
  VDSOLAB_HOST_VARIANT_OR_SKIP(host);
  sim::Scenario s = Load("preempted-readers.toml");
  s.run.duration_ns = 300000000;
  s.checks.livelock_budget = 2;
  s.run.reader = std::string(host->name);
  absl::StatusOr<sim::Outcome> got = sim::Run(s, *host);
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<sim::Outcome> want = sim::Run(s, BuiltIn(host));
  ASSERT_TRUE(want.ok()) << want.status();
  const sim::Coverage& c = got->random->coverage;
  const sim::Coverage& b = want->random->coverage;
  std::printf(
      "livelock budget 2: host abandoned %llu of %llu calls, built-in "
      "%llu of %llu\n",
      static_cast<unsigned long long>(c.livelocks),
      static_cast<unsigned long long>(c.calls),
      static_cast<unsigned long long>(b.livelocks),
      static_cast<unsigned long long>(b.calls));
  EXPECT_GT(c.livelocks, 0u);
  EXPECT_EQ(c.livelocks, b.livelocks);
  EXPECT_EQ(c.calls, b.calls);
  EXPECT_EQ(c.crashes, 0u);
}

}  // namespace
}  // namespace vdsolab::hostvdso
