// A misbehaving compiled vDSO is contained: the running image with ud2
// right after clock_gettime's counter read crashes every call that reads
// the counter, and with jmp . there every such call spins; each is a
// finding of the run (crash, livelock) with a replay that shows it again,
// the calls that do not reach the broken instruction are still checked,
// and vdsolab goes on (the child process is started anew).

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "hostvdso/host_variant.h"
#include "hostvdso/internal/image_process.h"
#include "hostvdso/testing/test_images.h"
#include "sim/run.h"
#include "variants/plugin/call_guard.h"

namespace vdsolab::hostvdso {
namespace {

// One reader alternating MONOTONIC (the hres path: broken) and
// MONOTONIC_COARSE (no counter read: fine), a few dozen calls.
sim::Scenario Short() {
  sim::Scenario s;
  s.name = "short";
  s.run.duration_ns = 20000000;
  s.readers = {sim::ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonicCoarse, kClockMonotonic};
  s.readers[0].period_ns = 1000000;
  return s;
}

struct Case {
  const char* how;  // dump_vdso's argument.
  sim::Property property;
  const char* why;
};

class HostContainment : public ::testing::TestWithParam<Case> {};

TEST_P(HostContainment, IsAFindingWithAReplay) {
  const Case& c = GetParam();
  VDSOLAB_HOST_VARIANT_OR_SKIP(running);
  variants::SetCallTimeLimit(0.2);
  const std::string path = testing::TestTmp() + "/broken-" + c.how + ".so";
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const std::string dump = std::string(srcdir != nullptr ? srcdir : ".") +
                           "/vdsolab/hostvdso/dump_vdso";
  ASSERT_EQ(std::system((dump + " " + path + " " + c.how).c_str()), 0);
  absl::StatusOr<const variants::Variant*> v = LoadHostVariant(path);
  ASSERT_TRUE(v.ok()) << v.status();
  const HostImageInfo* info = FindHostImageInfo(*v);
  ASSERT_NE(info, nullptr);
  EXPECT_NE(info->probe_fault.find(c.why), std::string::npos)
      << info->probe_fault;
  const uint64_t spawned = internal::Stats().spawned;
  sim::Scenario s = Short();
  s.run.reader = std::string((*v)->name);
  absl::StatusOr<sim::Outcome> out = sim::Run(s, **v);
  ASSERT_TRUE(out.ok()) << out.status();
  std::fputs(sim::FormatOutcome(s, *out).c_str(), stdout);
  EXPECT_TRUE(out->failed);
  EXPECT_GT(out->stats[static_cast<size_t>(c.property) - 1].defects, 0u);
  // The coarse calls between them were answered from the page and held.
  const sim::PropertyStats& exact =
      out->stats[static_cast<size_t>(sim::Property::kExact) - 1];
  EXPECT_GT(exact.checked, 0u);
  EXPECT_EQ(exact.defects, 0u);
  // Each broken call ended its process; later calls had a new one.
  EXPECT_GT(internal::Stats().spawned, spawned + 1);
  ASSERT_FALSE(out->replays.empty());
  const sim::FailureReplay& first = out->replays.front();
  EXPECT_EQ(first.failure.property, c.property);
  EXPECT_NE(first.failure.why.find(c.why), std::string::npos)
      << first.failure.why;
  ASSERT_TRUE(first.scenario.has_value()) << first.error;
  absl::StatusOr<sim::ReplayOutcome> replay = sim::Replay(*first.scenario, **v);
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_TRUE(replay->reproduced) << replay->text;
  // The running kernel's own image passes the same replay.
  absl::StatusOr<sim::ReplayOutcome> fixed =
      sim::Replay(*first.scenario, *running);
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_FALSE(fixed->reproduced) << fixed->text;
}

INSTANTIATE_TEST_SUITE_P(
    Images, HostContainment,
    ::testing::Values(Case{"ud2", sim::Property::kCrash, "crashed (SIGILL"},
                      Case{"spin", sim::Property::kLivelock, "spun for 0."}),
    [](const ::testing::TestParamInfo<Case>& param) {
      return std::string(param.param.how);
    });

}  // namespace
}  // namespace vdsolab::hostvdso
