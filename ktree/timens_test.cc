// Kernel-tree variants with readers in a time namespace: the tree's own
// do_hres_timens() and do_coarse_timens() run on the namespace's page in
// the tree's layout and reach the time page as the tree does (6.1 and
// 6.12: the timens__vdso_data symbol, which the glue forwards to the time
// page). The clean trees pass a racing run in which namespace calls race
// updates and retry, and every interleaving of a namespace call with two
// updates; a tree patched to drop the namespace's nanoseconds fails the
// run, one patched to drop do_hres_timens()'s seq retry fails
// interleavings, one patched to drop vdso_read_begin()'s smp_rmb() (only
// the namespace paths call it) fails a run under relaxed ordering, and
// each passes without namespace readers (only the namespace path is
// wrong).

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "common/clockid.h"
#include "ktree/testing/defect_patches.h"
#include "ktree/testing/test_trees.h"
#include "sim/engine.h"
#include "sim/exhaustive.h"
#include "sim/properties.h"
#include "variants/variant.h"

namespace vdsolab::ktree {
namespace {

using testing::Defect;

constexpr const char* kTarballs[] = {testing::kTarball61, testing::kTarball612};

// Two readers in a namespace whose offsets carry nanoseconds (and a
// negative MONOTONIC second count), one outside it, against a writer that
// stalls mid-update; readers preempted mid-call, so that updates start
// inside a call's seq section, not only before it.
sim::Scenario InNamespace() {
  sim::Scenario s;
  s.run.duration_ns = 200000000;
  s.run.seed = 5;
  s.kernel.boot_offset = {50, 0};
  s.kernel.timens_monotonic = {-49, 250000000};
  s.kernel.timens_boottime = {3600, 999999999};
  s.readers = {sim::ReaderSpec{}, sim::ReaderSpec{}, sim::ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonic,    kClockBoottime,
                         kClockMonotonicRaw, kClockRealtime,
                         kClockTai,          kClockMonotonicCoarse};
  s.readers[0].timens = true;
  s.readers[1].clocks = {kClockMonotonic, kClockBoottime};
  s.readers[1].period_ns = 3000;
  s.readers[1].timens = true;
  s.readers[2].clocks = {kClockMonotonic};
  s.timing.store_ns = 40;
  s.timing.writer_stall_ppm = 20000;
  s.timing.writer_stall_max_ns = 5000;
  s.timing.preempt_ppm = 5000;
  s.timing.preempt_max_ns = 20000;
  return s;
}

// InNamespace() under relaxed ordering (the rate of
// scenarios/relaxed-ordering-timens.toml): loads no barrier orders see
// earlier page states.
sim::Scenario InNamespaceRelaxed() {
  sim::Scenario s = InNamespace();
  s.faults.reorder_ppm = 600000;
  s.run.duration_ns = 100000000;
  return s;
}

// Every interleaving of one namespace MONOTONIC call with the pending
// updates.
sim::ExploreResult ExploreOneNamespaceCall(const variants::Variant& v) {
  sim::Scenario one;
  one.run.strategy = sim::Strategy::kExhaustive;
  one.kernel.boot_offset = {50, 0};
  one.kernel.timens_monotonic = {-49, 250000000};
  one.readers[0].clocks = {kClockMonotonic};
  one.readers[0].timens = true;
  absl::StatusOr<sim::ExploreResult> e = sim::Explore(one, v);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? *e : sim::ExploreResult{};
}

uint64_t Defects(const sim::RunResult& r, sim::Property p) {
  return r.stats[static_cast<int>(p) - 1].defects;
}

void Print(const std::string& what, const sim::RunResult& r) {
  std::printf(
      "%-40s calls %llu, in the namespace %llu, raced %llu, retried %llu, "
      "failed %d\n",
      what.c_str(), static_cast<unsigned long long>(r.coverage.calls),
      static_cast<unsigned long long>(r.coverage.timens_calls),
      static_cast<unsigned long long>(r.coverage.raced),
      static_cast<unsigned long long>(r.coverage.retries), r.failed ? 1 : 0);
}

TEST(TreeInNamespace, CleanTreesAnswerTheSyscallPlusTheOffsets) {
  for (const char* tarball : kTarballs) {
    const variants::Variant* tree = testing::BuildAndLoad(tarball);
    ASSERT_NE(tree, nullptr);
    EXPECT_TRUE(tree->timens) << tree->name;
    absl::StatusOr<sim::RunResult> r = sim::RunRandom(InNamespace(), *tree);
    ASSERT_TRUE(r.ok()) << r.status();
    Print(std::string(tree->name), *r);
    EXPECT_FALSE(r->failed);
    EXPECT_TRUE(r->violations.empty());
    EXPECT_GT(r->coverage.timens_calls, 10000u);
    EXPECT_LT(r->coverage.timens_calls, r->coverage.calls);
    EXPECT_GT(r->coverage.raced, 0u);
    EXPECT_GT(r->coverage.retries, 0u);
    EXPECT_GT(r->stats[static_cast<int>(sim::Property::kExact) - 1].checked,
              10000u);
    const sim::ExploreResult e = ExploreOneNamespaceCall(*tree);
    EXPECT_TRUE(e.complete);
    EXPECT_GT(e.interleavings, 10u);
    EXPECT_EQ(e.failing, 0u) << tree->name;
    std::printf("%s: %llu interleavings of a namespace call, 0 failing\n",
                tree->name.data(),
                static_cast<unsigned long long>(e.interleavings));
    // Every barrier its seq protocols need is there.
    absl::StatusOr<sim::RunResult> relaxed =
        sim::RunRandom(InNamespaceRelaxed(), *tree);
    ASSERT_TRUE(relaxed.ok()) << relaxed.status();
    Print(std::string(tree->name) + " (relaxed)", *relaxed);
    EXPECT_FALSE(relaxed->failed) << tree->name;
    EXPECT_GT(relaxed->coverage.reordered_loads, 100u);
  }
}

TEST(TreeInNamespace, DefectsInDoHresTimensAreCaught) {
  for (const char* tarball : kTarballs) {
    absl::StatusOr<std::string> root = testing::TreeRoot(tarball);
    ASSERT_TRUE(root.ok()) << root.status();
    for (Defect d : testing::TimensDefects()) {
      absl::StatusOr<std::string> patch = testing::WriteDefectPatch(
          *root, d,
          testing::TestDir(std::string("timens-") +
                           (tarball == testing::kTarball61 ? "6.1" : "6.12")));
      ASSERT_TRUE(patch.ok()) << patch.status();
      const variants::Variant* bad = testing::BuildAndLoad(tarball, {*patch});
      ASSERT_NE(bad, nullptr);
      if (d == Defect::kTimensNoNsecOffset) {
        absl::StatusOr<sim::RunResult> r = sim::RunRandom(InNamespace(), *bad);
        ASSERT_TRUE(r.ok()) << r.status();
        Print(std::string(bad->name), *r);
        EXPECT_TRUE(r->failed) << bad->name;
        // Every namespace MONOTONIC call is 0.25 s short: exact, named.
        EXPECT_GT(Defects(*r, sim::Property::kExact), 0u);
        bool named = false;
        for (const sim::Violation& v : r->violations) {
          named = named || absl::StrContains(v.detail, "MONOTONIC");
        }
        EXPECT_TRUE(named) << bad->name;
      } else if (d == Defect::kTimensReadBeginNoRmb) {
        // Only a reordered load tells: the exploration runs in program
        // order, so a relaxed run.
        absl::StatusOr<sim::RunResult> r =
            sim::RunRandom(InNamespaceRelaxed(), *bad);
        ASSERT_TRUE(r.ok()) << r.status();
        Print(std::string(bad->name) + " (relaxed)", *r);
        EXPECT_TRUE(r->failed) << bad->name;
      } else {
        // One pass: an update landing inside it gives a torn answer. A
        // random run rarely lands one there; exploration finds each.
        const sim::ExploreResult e = ExploreOneNamespaceCall(*bad);
        EXPECT_TRUE(e.complete);
        EXPECT_GT(e.failing, 0u) << bad->name;
        EXPECT_TRUE(e.minimal.has_value()) << bad->name;
        std::printf("%s: %llu of %llu interleavings fail\n", bad->name.data(),
                    static_cast<unsigned long long>(e.failing),
                    static_cast<unsigned long long>(e.interleavings));
      }
      // Outside the namespace the patched tree is the clean one.
      sim::Scenario outside = InNamespace();
      for (sim::ReaderSpec& reader : outside.readers) reader.timens = false;
      absl::StatusOr<sim::RunResult> o = sim::RunRandom(outside, *bad);
      ASSERT_TRUE(o.ok()) << o.status();
      EXPECT_FALSE(o->failed) << bad->name;
    }
  }
}

}  // namespace
}  // namespace vdsolab::ktree
