#include "sim/oracle_run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "sim/entry_points_test_reader.h"
#include "variants/era_oracle.h"
#include "variants/registry.h"
#include "variants/upstream.h"

namespace vdsolab::sim {
namespace {

const variants::Variant& Upstream() { return variants::UpstreamVariant(); }
using testing::Break;
using testing::WithEntryPoints;

OracleRunConfig Short() {
  OracleRunConfig config;
  config.duration_ns = 2000000000;  // 2 s keeps the test small.
  config.reads_per_tick = 20;
  return config;
}

TEST(OracleRun, DefaultMachineMatchesEverywhere) {
  auto report = RunOracleCheck(Short(), Upstream());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << FormatOracleRunReport(*report);
  // 499 ticks and one adjtimex() cut 2 s into 501 stretches of 20 reads.
  EXPECT_EQ(report->reads, 501u * 20u);
  // The run exercised both paths: vDSO-served and syscall-served reads.
  uint64_t served = 0, fallbacks = 0;
  for (const ClockStats& s : report->clocks) {
    served += s.reads - s.fallbacks;
    fallbacks += s.fallbacks;
  }
  EXPECT_GT(served, 0u);
  EXPECT_GT(fallbacks, 0u);
  // NTP moved mult away from the clocksource's.
  EXPECT_GT(report->final_mult, report->mult);
}

// A reader's other entry points are rows of their own, sampled like the
// clocks and read against the model's system calls: a correct one passes;
// one broken in one entry point fails on that row alone (for the coarse
// resolution, on the reads of the coarse ids).
TEST(OracleRun, SamplesTheOtherEntryPoints) {
  auto good = RunOracleCheck(Short(), WithEntryPoints<Break::kNone>());
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_TRUE(good->ok()) << FormatOracleRunReport(*good);
  int rows = 0;
  for (const ClockStats& s : good->clocks) {
    if (s.entry_point.empty()) continue;
    ++rows;
    EXPECT_GT(s.reads, 0u) << s.name;
    EXPECT_EQ(s.mismatches, 0u) << s.name;
    if (s.entry_point == "clock_getres()") {
      EXPECT_GT(s.fallbacks, 0u);  // All but the coarse ids.
      EXPECT_GT(s.errors, 0u);     // The invalid ids' -EINVAL.
    } else {
      EXPECT_EQ(s.fallbacks, 0u) << s.name;
    }
  }
  EXPECT_EQ(rows, 3);
  struct Case {
    const variants::Variant& variant;
    std::string row;
    bool every_read;
  };
  for (const Case& c :
       {Case{WithEntryPoints<Break::kLateTime>(), "time()", true},
        // One read in three is gettimeofday(NULL, &tz): no time to be
        // wrong.
        Case{WithEntryPoints<Break::kUsecShift>(), "gettimeofday()", false},
        Case{WithEntryPoints<Break::kCoarseRes>(), "clock_getres()", false},
        // Every other read passes NULL.
        Case{WithEntryPoints<Break::kNullRes>(), "clock_getres()", false}}) {
    auto bad = RunOracleCheck(Short(), c.variant);
    ASSERT_TRUE(bad.ok()) << bad.status();
    EXPECT_FALSE(bad->ok()) << c.row;
    for (const ClockStats& s : bad->clocks) {
      if (s.entry_point != c.row) {
        EXPECT_EQ(s.mismatches, 0u) << c.row << ": " << s.name;
      } else if (c.every_read) {
        EXPECT_EQ(s.mismatches, s.reads) << s.name;
      } else {
        EXPECT_GT(s.mismatches, 0u) << s.name;
        EXPECT_LT(s.mismatches, s.reads) << s.name;
      }
    }
    EXPECT_NE(FormatOracleRunReport(*bad).find(
                  "FAIL: " + c.row.substr(0, c.row.size() - 1)),
              std::string::npos)
        << c.row;
  }
}

TEST(OracleRun, SameSeedSameReportOtherSeedOtherReport) {
  auto a = RunOracleCheck(Short(), Upstream());
  auto b = RunOracleCheck(Short(), Upstream());
  OracleRunConfig other = Short();
  other.seed = 2;
  auto c = RunOracleCheck(other, Upstream());
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(FormatOracleRunReport(*a), FormatOracleRunReport(*b));
  EXPECT_NE(FormatOracleRunReport(*a), FormatOracleRunReport(*c));
}

// With REALTIME booted on a whole second and a +500 ppm adjtimex() 1 ms
// later, timekeeping_adjust() borrows a second from xtime_sec while
// coarse_nsec stays: the coarse clocks step back by one second, and the run
// must say so (docs/findings.md).
TEST(OracleRun, ReportsTheCoarseClockStepBack) {
  OracleRunConfig config = Short();
  config.boot_wall = Timespec64{1764460800, 0};
  config.ntp_at_ns = 1000000;
  config.ntp_freq = 500 << 16;
  auto report = RunOracleCheck(config, Upstream());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok());
  for (const ClockStats& s : report->clocks) {
    EXPECT_EQ(s.mismatches, 0u) << ClockName(s.clock);
    const bool coarse =
        s.clock == kClockRealtimeCoarse || s.clock == kClockMonotonicCoarse;
    EXPECT_EQ(s.backwards > 0, coarse) << ClockName(s.clock);
  }
  EXPECT_NE(FormatOracleRunReport(*report).find("went backwards"),
            std::string::npos);
}

// The same step back is the 6.15+ kernel's documented behaviour: the run
// names it so, and --accept=known lets it pass (the README's example).
// Built from the model's own state (xtime_sec moved with no accumulation),
// not from the size of the step, so a step back of one second for any
// other reason still fails.
TEST(OracleRun, NamesTheCoarseStepBackAsKnownAndAcceptsIt) {
  OracleRunConfig config = Short();
  config.boot_wall = Timespec64{1764460800, 0};
  config.ntp_at_ns = 1000000;
  config.ntp_freq = 500 << 16;
  auto strict = RunOracleCheck(config, Upstream());
  ASSERT_TRUE(strict.ok()) << strict.status();
  uint64_t backwards = 0;
  for (const ClockStats& s : strict->clocks) {
    EXPECT_EQ(s.known, s.backwards) << ClockName(s.clock);
    backwards += s.backwards;
  }
  ASSERT_GT(backwards, 0u);
  EXPECT_FALSE(strict->ok());
  EXPECT_TRUE(strict->ok_accepting(true));
  EXPECT_NE(FormatOracleRunReport(*strict).find(
                variants::EraOracle::kCoarseOffBySecondWhy),
            std::string::npos);

  config.accept_known = true;
  auto accepted = RunOracleCheck(config, Upstream());
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_TRUE(accepted->failures.empty());
  EXPECT_EQ(accepted->accepted.size(), std::min<size_t>(backwards, 5));
}

TEST(OracleRun, RejectsBadConfigurationsByName) {
  OracleRunConfig config = Short();
  config.hz = 0;
  EXPECT_NE(RunOracleCheck(config, Upstream()).status().message().find("HZ 0"),
            std::string::npos);
  config = Short();
  config.tsc_hz = 12;
  EXPECT_NE(RunOracleCheck(config, Upstream())
                .status()
                .message()
                .find("TSC frequency"),
            std::string::npos);
  config = Short();
  config.ntp_freq = 600 << 16;
  EXPECT_NE(
      RunOracleCheck(config, Upstream()).status().message().find("600.000 ppm"),
      std::string::npos);
  config = Short();
  config.duration_ns = 86400ull * 1000000000 * 2;
  EXPECT_FALSE(RunOracleCheck(config, Upstream()).ok());
  config = Short();
  config.reads_per_tick = 1000000;
  config.duration_ns = 3600ull * 1000000000;
  EXPECT_NE(RunOracleCheck(config, Upstream()).status().message().find("reads"),
            std::string::npos);
}

// The default job checks the variant it is given, not always upstream:
// every read of the eras and the 4.16 vDSO matches; before 6.15 the coarse
// clocks step back after the adjtimex() (said to be the era's); the
// TRACE_CLOCK RFC's -EINVAL for clocks the kernel has is caught.
TEST(OracleRun, ChecksTheVariantItIsGiven) {
  for (const char* name : {"6.15", "6.1", "6.10", "x86-4.16", "sverdlin-v2"}) {
    auto v = variants::FindVariant(name);
    ASSERT_TRUE(v.ok()) << name;
    auto report = RunOracleCheck(Short(), **v);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->variant, name);
    const bool pre615 = !(*v)->semantics.coarse_from_coarse_nsec;
    EXPECT_EQ(report->ok(), !pre615) << FormatOracleRunReport(*report);
    for (const ClockStats& s : report->clocks) {
      EXPECT_EQ(s.mismatches, 0u) << name << " " << s.name;
      const bool coarse =
          s.clock == kClockRealtimeCoarse || s.clock == kClockMonotonicCoarse;
      if (!coarse) {
        EXPECT_EQ(s.backwards, 0u) << name << " " << s.name;
      }
    }
    for (const std::string& f : report->failures) {
      EXPECT_NE(f.find("[known: era behaviour: before 6.15"), std::string::npos)
          << f;
    }
  }
  auto trace = variants::FindVariant("trace-clock");
  ASSERT_TRUE(trace.ok());
  auto report = RunOracleCheck(Short(), **trace);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok());
  uint64_t raw_mismatches = 0;
  bool sampled_trace_clock = false;
  for (const ClockStats& s : report->clocks) {
    if (s.clock == kClockMonotonicRaw) raw_mismatches = s.mismatches;
    sampled_trace_clock |= s.name == "CLOCK_TRACE" && s.reads > 0;
  }
  EXPECT_GT(raw_mismatches, 0u);
  EXPECT_TRUE(sampled_trace_clock);
}

// A clock the variant counts among its vDSO clocks whose every read went
// to the syscall fails, though every answer matched: its fast path is
// lost. x86-4.16 sends MONOTONIC_RAW to the syscall, as its era did: said
// to answer it from the page, it fails on that row alone.
TEST(OracleRun, AVdsoClockAnsweredOnlyByTheSyscallFails) {
  auto old = variants::FindVariant("x86-4.16");
  ASSERT_TRUE(old.ok());
  OracleRunConfig config = Short();
  config.accept_known = true;
  auto report = RunOracleCheck(config, **old);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << FormatOracleRunReport(*report);
  variants::Variant claims_raw = **old;
  claims_raw.vdso_clocks.push_back(kClockMonotonicRaw);
  report = RunOracleCheck(config, claims_raw);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok());
  for (const ClockStats& s : report->clocks) {
    EXPECT_EQ(s.mismatches, 0u) << s.name;
    EXPECT_EQ(s.page_path_lost, s.clock == kClockMonotonicRaw) << s.name;
  }
  ASSERT_FALSE(report->failures.empty());
  EXPECT_NE(
      report->failures.back().find("CLOCK_MONOTONIC_RAW: every one of its"),
      std::string::npos)
      << report->failures.back();
}

// The upstream reader, but every third CLOCK_MONOTONIC call goes to the
// syscall: each answer right, the fast path lost a third of the time.
class EveryThirdFallsBack final : public variants::SimReader {
 public:
  std::optional<ClockResult> Call(vdso::HookedAccess& access,
                                  const uint8_t* page, ClockId clock) override {
    if (clock == kClockMonotonic && ++calls_ % 3 == 0) {
      return access.Fallback(clock);
    }
    return upstream_->Call(access, page, clock);
  }

 private:
  std::unique_ptr<variants::SimReader> upstream_ =
      variants::UpstreamVariant().make_sim_reader();
  uint64_t calls_ = 0;
};

// One read of a served clock that went to the syscall fails the check: on
// the oracle check's TSC machine no era falls back.
TEST(OracleRun, AVdsoClockSometimesAnsweredByTheSyscallFails) {
  variants::Variant v = variants::UpstreamVariant();
  v.name = "test-every-third-monotonic-falls-back";
  v.make_sim_reader = [] {
    return std::unique_ptr<variants::SimReader>(
        std::make_unique<EveryThirdFallsBack>());
  };
  v.native_loop = nullptr;
  auto report = RunOracleCheck(Short(), v);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok());
  bool monotonic = false;
  for (const ClockStats& s : report->clocks) {
    EXPECT_EQ(s.mismatches, 0u) << s.name;
    EXPECT_EQ(s.page_path_lost, s.clock == kClockMonotonic) << s.name;
    if (s.clock != kClockMonotonic) continue;
    monotonic = true;
    EXPECT_GT(s.fallbacks, 0u);
    EXPECT_LT(s.fallbacks, s.reads);
  }
  EXPECT_TRUE(monotonic);
  ASSERT_FALSE(report->failures.empty());
  EXPECT_NE(report->failures.back().find("CLOCK_MONOTONIC: "),
            std::string::npos)
      << report->failures.back();
  EXPECT_NE(report->failures.back().find(" of its "), std::string::npos)
      << report->failures.back();
}

}  // namespace
}  // namespace vdsolab::sim
