// Patched kernel trees: each real defect the patch library reintroduces
// applies to the Debian 6.1 and 6.12 trees, builds, and is caught — by the
// exhaustive explorer with a minimal failing interleaving (a seq retry
// dropped, the base time read outside the seq loop), by reading a
// counter behind cycle_last (the negative-motion clamp removed), and by
// two readers' causality (rdtsc_ordered() replaced by rdtsc()), and by the
// probes of gettimeofday(), time() and clock_getres(). The unpatched trees
// pass the same checks, so each failure is the patch's.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "common/clockid.h"
#include "common/math64.h"
#include "ktree/internal/fs.h"
#include "ktree/testing/defect_patches.h"
#include "ktree/testing/test_trees.h"
#include "sim/engine.h"
#include "sim/exhaustive.h"
#include "timekeeper/clocksource.h"
#include "variants/plugin/call_guard.h"
#include "variants/registry.h"

namespace vdsolab::ktree {
namespace {

using testing::Defect;

struct Tree {
  const char* tarball;
  const char* builtin;
};
constexpr Tree kTrees[] = {{testing::kTarball61, "6.1"},
                           {testing::kTarball612, "6.10"}};

std::string PatchFor(const std::string& tarball, Defect d) {
  absl::StatusOr<std::string> root = testing::TreeRoot(tarball);
  EXPECT_TRUE(root.ok()) << root.status();
  const std::string dir = testing::TestDir(
      "patches-" +
      std::string(testing::kTarball61 == tarball ? "6.1" : "6.12"));
  absl::StatusOr<std::string> p = testing::WriteDefectPatch(*root, d, dir);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : "";
}

// One MONOTONIC call raced by one update, every interleaving.
sim::ExploreResult ExploreOneCall(const variants::Variant& v) {
  sim::Scenario one;
  one.run.strategy = sim::Strategy::kExhaustive;
  one.readers[0].clocks = {kClockMonotonic};
  absl::StatusOr<sim::ExploreResult> e = sim::Explore(one, v);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? *e : sim::ExploreResult{};
}

// A tree built clean and with one defect.
struct CleanAndPatched {
  const variants::Variant* clean = nullptr;
  const variants::Variant* bad = nullptr;
  BuiltVariant clean_built, bad_built;
};

CleanAndPatched BuildBoth(const std::string& tarball, Defect d) {
  CleanAndPatched b;
  b.clean = testing::BuildAndLoad(tarball, {}, &b.clean_built);
  b.bad = testing::BuildAndLoad(tarball, {PatchFor(tarball, d)}, &b.bad_built);
  EXPECT_NE(b.clean, nullptr);
  EXPECT_NE(b.bad, nullptr);
  return b;
}

// `s` run by both builds: the clean one must pass. The patched run's
// result, or nullopt (the failure recorded) if a build or a run failed.
std::optional<sim::RunResult> RunBoth(const sim::Scenario& s,
                                      const CleanAndPatched& b) {
  if (b.clean == nullptr || b.bad == nullptr) return std::nullopt;
  absl::StatusOr<sim::RunResult> ok = sim::RunRandom(s, *b.clean);
  absl::StatusOr<sim::RunResult> ko = sim::RunRandom(s, *b.bad);
  EXPECT_TRUE(ok.ok() && ko.ok()) << (ok.ok() ? ko.status() : ok.status());
  if (!ok.ok() || !ko.ok()) return std::nullopt;
  EXPECT_FALSE(ok->failed) << b.clean->name;
  return *std::move(ko);
}

TEST(TreeDefects, EachPatchAppliesAndBuildsOnBothTrees) {
  for (const Tree& t : kTrees) {
    for (Defect d : testing::AllDefects()) {
      const std::string patch = PatchFor(t.tarball, d);
      absl::StatusOr<std::string> text = internal::ReadFile(patch);
      ASSERT_TRUE(text.ok());
      EXPECT_EQ(text->rfind("--- a/", 0), 0u) << *text;
      absl::StatusOr<BuiltVariant> b = testing::Build(t.tarball, {patch});
      ASSERT_TRUE(b.ok()) << b.status() << "\n" << BuildLogOf(b.status());
      EXPECT_NE(b->name.find(std::string("+") + testing::DefectName(d)),
                std::string::npos)
          << b->name;
      EXPECT_EQ(b->layout, t.builtin);
      EXPECT_NE(b->provenance.find("as patched by"), std::string::npos);
      EXPECT_NE(b->origin.find("sha256:"), std::string::npos);
      std::printf("%s: %s\n", b->name.c_str(), b->origin.c_str());
    }
  }
}

TEST(TreeDefects, DroppedSeqRetryAndEarlyBaseReadAreCaughtWithAMinimalReplay) {
  for (const Tree& t : kTrees) {
    const variants::Variant* clean = testing::BuildAndLoad(t.tarball);
    ASSERT_NE(clean, nullptr);
    const sim::ExploreResult ok = ExploreOneCall(*clean);
    EXPECT_TRUE(ok.complete);
    EXPECT_GT(ok.interleavings, 10u);
    EXPECT_EQ(ok.failing, 0u) << clean->name;
    // The built-in reader explores as many interleavings when the compiled
    // code makes the same loads (6.1); 6.12's gcc loads shift before mult.
    const sim::ExploreResult builtin =
        ExploreOneCall(**variants::FindVariant(t.builtin));
    std::printf("%s: %llu interleavings, 0 failing (built-in %s: %llu)\n",
                clean->name.data(),
                static_cast<unsigned long long>(ok.interleavings), t.builtin,
                static_cast<unsigned long long>(builtin.interleavings));
    for (Defect d : {Defect::kNoSeqRetry, Defect::kBaseBeforeSeqLoop}) {
      const variants::Variant* bad =
          testing::BuildAndLoad(t.tarball, {PatchFor(t.tarball, d)});
      ASSERT_NE(bad, nullptr);
      const sim::ExploreResult e = ExploreOneCall(*bad);
      EXPECT_TRUE(e.complete);
      EXPECT_GT(e.failing, 0u) << bad->name;
      ASSERT_TRUE(e.minimal.has_value()) << bad->name;
      EXPECT_FALSE(e.minimal_violations.empty());
      std::printf(
          "%s: %llu of %llu interleavings fail; minimal replay has %u "
          "mid-call store landings\n",
          bad->name.data(), static_cast<unsigned long long>(e.failing),
          static_cast<unsigned long long>(e.interleavings), e.minimal_splits);
    }
  }
}

// A counter behind cycle_last: the clean trees answer the base time (as
// the built-in readers do), the patched ones something else.
TEST(TreeDefects, RemovedNegativeMotionClampMisreadsACounterBehindCycleLast) {
  // The patched 6.12 call below runs about a second of
  // __iter_div_u64_rem() by design; on a loaded machine (the suite's other
  // tests on two cores) the default 1 s wall-time bound stopped it as a
  // spin. This test wants its answer.
  variants::SetCallTimeLimit(60);
  for (const Tree& t : kTrees) {
    const variants::Variant* clean = testing::BuildAndLoad(t.tarball);
    const variants::Variant* bad = testing::BuildAndLoad(
        t.tarball, {PatchFor(t.tarball, Defect::kNoNegativeMotionClamp)});
    ASSERT_NE(clean, nullptr);
    ASSERT_NE(bad, nullptr);
    const variants::Variant* builtin = *variants::FindVariant(t.builtin);
    testing::PublishedPage pp(builtin);
    // A fast TSC keeps the 6.12 patched call short: its huge delta takes
    // __iter_div_u64_rem() ns/1e9 iterations (~1.5e9 here, as the kernel).
    absl::StatusOr<timekeeper::Clocksource> cs =
        timekeeper::MakeTscClocksource(6000000);
    ASSERT_TRUE(cs.ok());
    pp.Start(*cs, 250, 1ull << 40, Timespec64{1700000000, 0}, Timespec64{5, 0});
    pp.tk().Advance(timekeeper::AdvanceMode::kTick,
                    (1ull << 40) + pp.tk().timekeeper().cycle_interval);
    const uint64_t behind = pp.tk().timekeeper().tkr_mono.cycle_last - 1000;
    auto read = [&](const variants::Variant& v) {
      testing::FixedCounterHooks h(&pp.tk(), behind);
      std::unique_ptr<variants::SimReader> r = v.make_sim_reader();
      return pp.Read(*r, kClockMonotonic, h);
    };
    const std::optional<ClockResult> want = read(*builtin);
    const std::optional<ClockResult> good = read(*clean);
    const std::optional<ClockResult> got = read(*bad);
    ASSERT_TRUE(want && good && got);
    EXPECT_EQ(*good, *want) << clean->name;
    EXPECT_NE(*got, *want) << bad->name;
    std::printf("%s at cycle_last - 1000: %s (clean: %s)\n", bad->name.data(),
                FormatClockResult(*got).c_str(),
                FormatClockResult(*good).c_str());
  }
}

// In the simulation too (6.1, where the wrapped product stays small): a
// reader on a CPU whose TSC is behind the timekeeping CPU's.
TEST(TreeDefects, RemovedClampFailsASkewedRunOn61) {
  sim::Scenario s;
  s.run.duration_ns = 50000000;
  s.machine.cpus = {sim::CpuCounterSpec{}, sim::CpuCounterSpec{}};
  s.machine.cpus[1].offset_cycles = -104000;
  s.readers[0].cpu = 1;
  const CleanAndPatched b =
      BuildBoth(testing::kTarball61, Defect::kNoNegativeMotionClamp);
  const std::optional<sim::RunResult> ko = RunBoth(s, b);
  ASSERT_TRUE(ko.has_value());
  EXPECT_TRUE(ko->failed);
  EXPECT_FALSE(ko->violations.empty());
  std::printf("skewed run: clean passes; patched: %llu calls, %zu violations\n",
              static_cast<unsigned long long>(ko->coverage.calls),
              ko->violations.size());
}

// A patch that reads the TSC with rdtsc() instead of rdtsc_ordered():
// the glue's counter thunk for it is the unordered one, and the variant's
// line says so. And a run fails it: two readers on two CPUs, where the
// CPU may run one reader's counter read before the loads that precede its
// call (the one that saw the other reader's call end), so a later call
// returns less than an earlier one (causal). The clean tree passes.
TEST(TreeDefects, AnUnorderedCounterReadIsNamedAndFailsCausality) {
  sim::Scenario s;
  s.run.duration_ns = 20000000;
  s.machine.cpus = {sim::CpuCounterSpec{}, sim::CpuCounterSpec{}};
  s.readers = {sim::ReaderSpec{}, sim::ReaderSpec{}};
  s.readers[1].cpu = 1;
  for (sim::ReaderSpec& r : s.readers) {
    r.clocks = {kClockMonotonic};
    r.period_ns = 1000;
  }
  for (const Tree& t : kTrees) {
    const CleanAndPatched b =
        BuildBoth(t.tarball, Defect::kUnorderedCounterRead);
    ASSERT_NE(b.clean, nullptr);
    ASSERT_NE(b.bad, nullptr);
    EXPECT_EQ(b.clean_built.plain_reads, 0);
    // One read in the source, inlined at each of its callers' sites.
    EXPECT_GT(b.bad_built.plain_reads, 0);
    EXPECT_EQ(b.bad_built.ordered_reads + b.bad_built.plain_reads,
              b.clean_built.ordered_reads);
    EXPECT_EQ(b.clean->summary.find("unordered"), std::string::npos)
        << b.clean->summary;
    EXPECT_NE(b.bad->summary.find("bare rdtsc (unordered)"), std::string::npos)
        << b.bad->summary;
    const std::optional<sim::RunResult> ko = RunBoth(s, b);
    ASSERT_TRUE(ko.has_value());
    const sim::PropertyStats& causal =
        ko->stats[static_cast<size_t>(sim::Property::kCausal) - 1];
    EXPECT_GT(causal.defects, 0u);
    std::printf("%s: %s; %llu causal defects in %llu calls\n",
                b.bad->name.data(), b.bad->summary.data(),
                static_cast<unsigned long long>(causal.defects),
                static_cast<unsigned long long>(ko->coverage.calls));
  }
}

// A clock id check that compares the signed id (no (u32) cast): negative
// ids pass it and read outside the clock tables. A reader calling them
// between valid ones (as scenarios/invalid-clock-ids.toml does) fails the
// patched trees (an answer where the syscall says -EINVAL, or a crash) and
// passes the clean ones.
TEST(TreeDefects, ASignedClockIdCheckFailsOnNegativeIds) {
  sim::Scenario s;
  s.run.duration_ns = 5000000;
  s.readers[0].clocks = {kClockMonotonic, -31, -1,
                         INT32_MIN,       16,  kClockRealtime};
  s.readers[0].period_ns = 5000;
  for (const Tree& t : kTrees) {
    const CleanAndPatched b = BuildBoth(t.tarball, Defect::kSignedClockId);
    const std::optional<sim::RunResult> ko = RunBoth(s, b);
    ASSERT_TRUE(ko.has_value());
    EXPECT_TRUE(ko->failed);
    const uint64_t defects =
        ko->stats[static_cast<size_t>(sim::Property::kExact) - 1].defects +
        ko->stats[static_cast<size_t>(sim::Property::kCrash) - 1].defects;
    EXPECT_GT(defects, 0u);
    std::printf("%s: %llu exact or crash defects in %llu calls\n",
                b.bad->name.data(), static_cast<unsigned long long>(defects),
                static_cast<unsigned long long>(ko->coverage.calls));
  }
}

// Patches to the other entry points (gettimeofday(), time(),
// clock_getres()) fail a short random run, with a violation naming the
// entry point; the clean trees pass it, with the probes' answers counted
// (sim/entry_points.h). One reader is in a time namespace, so the probes
// read through its view too.
TEST(TreeDefects, EachOtherEntryPointPatchFailsARunNamingItsEntryPoint) {
  sim::Scenario s;
  s.run.duration_ns = 20000000;
  s.kernel.timens_monotonic = Timespec64{3600, 250000000};
  s.readers = {sim::ReaderSpec{}, sim::ReaderSpec{}};
  s.readers[1].timens = true;
  for (sim::ReaderSpec& r : s.readers) r.period_ns = 10000;
  for (const Tree& t : kTrees) {
    for (Defect d : testing::OtherEntryPointDefects()) {
      const CleanAndPatched b = BuildBoth(t.tarball, d);
      ASSERT_NE(b.clean, nullptr);
      const std::optional<sim::RunResult> ko = RunBoth(s, b);
      ASSERT_TRUE(ko.has_value());
      EXPECT_TRUE(ko->failed) << b.bad->name;
      // A store through NULL crashes the call made with NULL; the
      // entry point is not probed again, in either view.
      const bool null_arg = d == Defect::kTimeNull ||
                            d == Defect::kGetresNull ||
                            d == Defect::kGettimeofdayTvNull;
      const char* entry = d == Defect::kGettimeofdayUsec ? "gettimeofday()"
                          : d == Defect::kTimeMonotonic  ? "time()"
                          : d == Defect::kTimeNull       ? "time(NULL)"
                          : d == Defect::kGetresNull     ? ", NULL)"
                          : d == Defect::kGettimeofdayTvNull
                              ? "gettimeofday(NULL, tz)"
                              : "clock_getres(";
      const sim::Property property =
          null_arg ? sim::Property::kCrash : sim::Property::kExact;
      // The first wrong answer in each view is kept: the initial one's and
      // the time namespace's.
      int named = 0;
      bool in_namespace = false;
      for (const sim::Violation& v : ko->violations) {
        if (v.property != property || v.why.find(entry) == std::string::npos) {
          continue;
        }
        ++named;
        in_namespace =
            in_namespace ||
            v.detail.find("in the time namespace's view") != std::string::npos;
      }
      EXPECT_EQ(named, null_arg ? 1 : 2)
          << b.bad->name << ": violations naming " << entry;
      if (!null_arg) {
        EXPECT_TRUE(in_namespace) << b.bad->name;
      }
      const sim::PropertyStats& exact =
          ko->stats[static_cast<size_t>(sim::Property::kExact) - 1];
      // Every call is checked once; the probes add theirs.
      EXPECT_GT(exact.checked, ko->coverage.calls);
      std::printf(
          "%s: %llu exact defects; %llu answers checked in %llu "
          "calls\n",
          b.bad->name.data(), static_cast<unsigned long long>(exact.defects),
          static_cast<unsigned long long>(exact.checked),
          static_cast<unsigned long long>(ko->coverage.calls));
    }
  }
}

// Code that reaches the namespace data outside a namespace (the tree's
// timens__vdso_data, the glue's shadow) dies as the kernel's SIGBUS does,
// naming the page: the shadow's zeros were read as a time ("vDSO 0").
TEST(TreeDefects, NamespaceDataOutsideANamespaceIsACrash) {
  sim::Scenario s;
  s.run.duration_ns = 20000000;
  s.readers[0].period_ns = 10000;
  for (const Tree& t : kTrees) {
    const CleanAndPatched b =
        BuildBoth(t.tarball, Defect::kTimeTimensTestInverted);
    ASSERT_NE(b.clean, nullptr);
    const std::optional<sim::RunResult> ko = RunBoth(s, b);
    ASSERT_TRUE(ko.has_value());
    EXPECT_TRUE(ko->failed) << b.bad->name;
    bool named = false;
    for (const sim::Violation& v : ko->violations) {
      if (v.property == sim::Property::kCrash &&
          v.why.find("time()") != std::string::npos &&
          v.why.find("the time namespace page") != std::string::npos) {
        named = true;
      }
    }
    EXPECT_TRUE(named) << b.bad->name;
  }
}

// A fallback the era's reader does not make: with the PVCLOCK test
// inverted, kvm-clock is never read from the pvclock page and every hres
// call goes to the syscall. Every answer is right; property fast_path
// fails each call made while the stable bit was set. The clean tree,
// whose fallbacks all fall in the unstable window, passes.
TEST(TreeDefects, AnInvertedPvclockTestLosesTheFastPathOnKvmClock) {
  sim::Scenario s;
  s.machine.clocksource = "kvm-clock";
  s.machine.pvclock_period_ns = 2000000;
  sim::EventSpec unstable;
  unstable.kind = sim::EventKind::kPvclockUpdate;
  unstable.at_ns = 8000000;
  unstable.pvclock_stable = false;
  sim::EventSpec stable = unstable;
  stable.at_ns = 12000000;
  stable.pvclock_stable = true;
  s.events = {unstable, stable};
  s.run.duration_ns = 20000000;
  s.readers[0].clocks = {kClockMonotonic, kClockRealtime, kClockMonotonicRaw};
  s.readers[0].period_ns = 10000;
  for (const Tree& t : kTrees) {
    const CleanAndPatched b =
        BuildBoth(t.tarball, Defect::kPvclockModeInverted);
    ASSERT_NE(b.clean, nullptr);
    const std::optional<sim::RunResult> ko = RunBoth(s, b);
    ASSERT_TRUE(ko.has_value());
    EXPECT_TRUE(ko->failed) << b.bad->name;
    const sim::PropertyStats& fast =
        ko->stats[static_cast<int>(sim::Property::kFastPath) - 1];
    // About 16 of the 20 ms are stable: most of the ~2000 calls.
    EXPECT_GT(fast.defects, 1000u) << b.bad->name;
    EXPECT_LT(fast.defects, fast.checked) << b.bad->name;
    EXPECT_EQ(ko->coverage.pvclock_reads, 0u) << b.bad->name;
  }
}

}  // namespace
}  // namespace vdsolab::ktree
