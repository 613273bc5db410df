// The default job (sim::RunOracleCheck) stops after three calls the
// watchdog stopped, as `run` does: a kernel tree whose patch spins on
// every call (a division loop by zero) cost the call bound per read, and
// the default job's 100,000 reads took hours. The report says why it
// stopped, and fails.

#include <gtest/gtest.h>

#include <string>

#include "sim/oracle_run.h"
#include "tests/broken_readers.h"
#include "variants/upstream.h"

namespace vdsolab::sim {
namespace {

TEST(OracleRunSpin, StopsAfterThreeStoppedCallsAndSaysWhy) {
  OracleRunConfig config;
  absl::StatusOr<OracleRunReport> r =
      RunOracleCheck(config, testing::MonotonicStoppedByTheWatchdogVariant());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->ok());
  EXPECT_NE(r->stop_reason.find("3 calls spun, blocked or ran past a quarter"),
            std::string::npos)
      << r->stop_reason;
  uint64_t mismatches = 0;
  for (const ClockStats& s : r->clocks) mismatches += s.mismatches;
  EXPECT_EQ(mismatches, 3u);
  // Stopped at the third: far fewer reads than the whole job makes.
  absl::StatusOr<OracleRunReport> whole =
      RunOracleCheck(config, variants::UpstreamVariant());
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_TRUE(whole->stop_reason.empty());
  EXPECT_LT(r->reads * 10, whole->reads);
  EXPECT_NE(FormatOracleRunReport(*r).find("stopped early: 3 calls"),
            std::string::npos);
}

}  // namespace
}  // namespace vdsolab::sim
