// Kernel-tree variants in the simulation, against the built-in reader of
// their era: a racing run (slow, stalling writer stores, preempted
// readers) passes with the same coverage — the glue turns the tree's seq
// re-reads into may_retry() calls where the built-in reader makes them, so
// even the retry counts agree — and a livelock budget the
// writer's stalls exceed abandons calls inside the kernel code (the glue's
// longjmp) as it abandons the built-in reader's.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "common/clockid.h"
#include "ktree/testing/defect_patches.h"
#include "ktree/testing/test_trees.h"
#include "sim/engine.h"
#include "sim/run_report.h"
#include "variants/registry.h"

namespace vdsolab::ktree {
namespace {

sim::Scenario Racy() {
  sim::Scenario s;
  s.run.duration_ns = 300000000;
  s.run.seed = 11;
  s.readers = {sim::ReaderSpec{}, sim::ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonic,       kClockRealtime,
                         kClockMonotonicRaw,    kClockBoottime,
                         kClockRealtimeCoarse,  kClockTai,
                         kClockMonotonicCoarse, kClockProcessCputimeId};
  s.readers[1].period_ns = 3000;
  s.timing.store_ns = 40;
  s.timing.writer_stall_ppm = 20000;
  s.timing.writer_stall_max_ns = 5000;
  s.timing.preempt_ppm = 5000;
  s.timing.preempt_max_ns = 20000;
  return s;
}

void Print(const char* what, const sim::RunResult& r) {
  std::printf(
      "%-22s calls %llu, from page %llu, raced %llu, retried %llu, "
      "livelocks %llu, failed %d\n",
      what, static_cast<unsigned long long>(r.coverage.calls),
      static_cast<unsigned long long>(r.coverage.vdso_answers),
      static_cast<unsigned long long>(r.coverage.raced),
      static_cast<unsigned long long>(r.coverage.retries),
      static_cast<unsigned long long>(r.coverage.livelocks), r.failed ? 1 : 0);
}

struct Pair {
  const char* tarball;
  const char* builtin;
};
constexpr Pair kPairs[] = {{testing::kTarball61, "6.1"},
                           {testing::kTarball612, "6.10"}};

TEST(TreeInSimulation, RacingRunPassesLikeTheBuiltInReader) {
  for (const Pair& p : kPairs) {
    const variants::Variant* tree = testing::BuildAndLoad(p.tarball);
    ASSERT_NE(tree, nullptr);
    const variants::Variant* builtin = *variants::FindVariant(p.builtin);
    const auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<sim::RunResult> t = sim::RunRandom(Racy(), *tree);
    const auto t1 = std::chrono::steady_clock::now();
    absl::StatusOr<sim::RunResult> b = sim::RunRandom(Racy(), *builtin);
    const auto t2 = std::chrono::steady_clock::now();
    ASSERT_TRUE(t.ok() && b.ok());
    Print(std::string(tree->name).c_str(), *t);
    Print(p.builtin, *b);
    std::printf("  run time: tree %.0f ms, built-in %.0f ms\n",
                std::chrono::duration<double, std::milli>(t1 - t0).count(),
                std::chrono::duration<double, std::milli>(t2 - t1).count());
    EXPECT_FALSE(t->failed);
    EXPECT_GT(t->coverage.raced, 0u);
    EXPECT_GT(t->coverage.retries, 0u);  // The glue's may_retry() calls.
    // The same run: the random strategy's draws do not depend on which
    // field a load reads, so the differing load order of 6.12's compiled
    // code (shift before mult) does not show here.
    EXPECT_EQ(t->coverage.calls, b->coverage.calls);
    EXPECT_EQ(t->coverage.vdso_answers, b->coverage.vdso_answers);
    EXPECT_EQ(t->coverage.raced, b->coverage.raced);
    EXPECT_EQ(t->coverage.retries, b->coverage.retries);
  }
}

TEST(TreeInSimulation, LivelockBudgetAbandonsCallsInsideKernelCode) {
  sim::Scenario s = Racy();
  s.timing.writer_stall_ppm = 200000;
  s.timing.writer_stall_max_ns = 200000;
  s.checks.livelock_budget = 2;
  for (const Pair& p : kPairs) {
    const variants::Variant* tree = testing::BuildAndLoad(p.tarball);
    ASSERT_NE(tree, nullptr);
    const variants::Variant* builtin = *variants::FindVariant(p.builtin);
    absl::StatusOr<sim::RunResult> t = sim::RunRandom(s, *tree);
    absl::StatusOr<sim::RunResult> b = sim::RunRandom(s, *builtin);
    ASSERT_TRUE(t.ok() && b.ok());
    Print(std::string(tree->name).c_str(), *t);
    Print(p.builtin, *b);
    EXPECT_GT(t->coverage.livelocks, 0u);
    EXPECT_GT(b->coverage.livelocks, 0u);
    EXPECT_EQ(t->coverage.livelocks, b->coverage.livelocks);
    // Abandoned calls leave nothing behind: the run goes on answering.
    EXPECT_GT(t->coverage.vdso_answers, t->coverage.livelocks);
  }
}

// A tree's code is tried quietly (vdso::QuietAccess through the plugin
// callbacks: it keeps no state between calls), and an attempt it steps out
// of runs again through the hooks: the same report as a run without quiet
// calls, on both trees and on a tree patched to skip the seq retry (whose
// calls that race an update answer from a torn state), with stores landing
// mid-call and no preemption (which would turn quiet calls off).
TEST(TreeInSimulation, QuietCallsChangeNothing) {
  sim::Scenario s = Racy();
  s.timing.preempt_ppm = 0;
  s.run.duration_ns = 100000000;
  s.readers[1].period_ns = 300;
  std::vector<const variants::Variant*> trees;
  for (const Pair& p : kPairs)
    trees.push_back(testing::BuildAndLoad(p.tarball));
  absl::StatusOr<std::string> root = testing::TreeRoot(testing::kTarball612);
  ASSERT_TRUE(root.ok()) << root.status();
  absl::StatusOr<std::string> patch = testing::WriteDefectPatch(
      *root, testing::Defect::kNoSeqRetry, testing::TestDir("quiet"));
  ASSERT_TRUE(patch.ok()) << patch.status();
  trees.push_back(testing::BuildAndLoad(testing::kTarball612, {*patch}));
  for (const variants::Variant* tree : trees) {
    ASSERT_NE(tree, nullptr);
    sim::RandomOptions hooked;
    hooked.quiet_calls = false;
    absl::StatusOr<sim::RunResult> q = sim::RunRandom(s, *tree);
    absl::StatusOr<sim::RunResult> h = sim::RunRandom(s, *tree, hooked);
    ASSERT_TRUE(q.ok() && h.ok());
    Print(std::string(tree->name).c_str(), *q);
    std::printf("  quiet calls %llu of %llu\n",
                static_cast<unsigned long long>(q->quiet_calls),
                static_cast<unsigned long long>(q->coverage.calls));
    EXPECT_GT(q->quiet_calls, 0u) << tree->name;
    EXPECT_LT(q->quiet_calls, q->coverage.calls) << tree->name;
    EXPECT_GT(q->coverage.raced, 0u) << tree->name;
    EXPECT_EQ(h->quiet_calls, 0u);
    EXPECT_EQ(sim::FormatRunReport(s, *q), sim::FormatRunReport(s, *h))
        << tree->name;
  }
}

}  // namespace
}  // namespace vdsolab::ktree
