// The exhaustive strategy's partial-order reduction and its two-call
// shapes: with the reduction, fewer executions find the same outcomes as
// plain enumeration (the same property checks failing the same way, the
// same plain count), and the two-call shapes catch a reader whose second
// call can return less than its first while clearing the upstream reader.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <tuple>

#include "sim/exhaustive.h"
#include "sim/run.h"
#include "sim/run_report.h"
#include "sim/scenario.h"
#include "sim/scenario_toml.h"
#include "tests/broken_readers.h"
#include "variants/upstream.h"

namespace vdsolab::sim {
namespace {

Scenario Shape(ExhaustiveShape shape, Reduction reduction, int updates) {
  Scenario s;
  s.name = "exhaustive-por";
  s.run.strategy = Strategy::kExhaustive;
  s.run.duration_ns = 1000000000;
  s.run.exhaustive_at_ns = 100000000;
  s.run.exhaustive_updates = updates;
  s.run.exhaustive_shape = shape;
  s.run.exhaustive_reduction = reduction;
  s.readers = {ReaderSpec{}, ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonic};
  s.readers[1].clocks = {kClockMonotonic};
  s.readers[1].cpu = 1;
  s.machine.cpus.assign(2, CpuCounterSpec{});
  return s;
}

// What a run found, independent of how many executions found it: per
// property, whether it was checked, and whether it failed with each verdict.
using Found = std::set<std::tuple<int, std::string>>;
Found Outcomes(const ExploreResult& r) {
  Found f;
  for (int i = 0; i < kNumProperties; ++i) {
    const PropertyStats& p = r.stats[static_cast<size_t>(i)];
    if (p.checked > 0) f.insert({i + 1, "checked"});
    if (p.defects > 0) f.insert({i + 1, "defect"});
    if (p.known_kernel > 0) f.insert({i + 1, "known"});
    if (p.preconditions > 0) f.insert({i + 1, "precondition"});
  }
  return f;
}

struct Timed {
  ExploreResult r;
  double ms = 0;
};
Timed ExploreTimed(const Scenario& s, const variants::Variant& v) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = Explore(s, v);
  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_TRUE(r.ok()) << r.status();
  return {r.ok() ? *r : ExploreResult{},
          std::chrono::duration<double, std::milli>(t1 - t0).count()};
}

const char* ShapeTag(ExhaustiveShape s) { return ExhaustiveShapeName(s); }

TEST(ExhaustivePor, FewerExecutionsSameOutcomesAsPlainEnumeration) {
  struct Case {
    ExhaustiveShape shape;
    int updates;
  };
  for (const variants::Variant* v :
       {&variants::UpstreamVariant(), &testing::NoSeqRetryVariant()}) {
    for (Case c : {Case{ExhaustiveShape::kOneCall, 1},
                   Case{ExhaustiveShape::kOneCall, 2},
                   Case{ExhaustiveShape::kTwoCalls, 1},
                   Case{ExhaustiveShape::kTwoCalls, 2},
                   Case{ExhaustiveShape::kTwoReaders, 1}}) {
      SCOPED_TRACE(std::string(v->name) + " " + ShapeTag(c.shape) + " " +
                   std::to_string(c.updates));
      const Timed plain =
          ExploreTimed(Shape(c.shape, Reduction::kNone, c.updates), *v);
      const Timed por =
          ExploreTimed(Shape(c.shape, Reduction::kPor, c.updates), *v);
      std::printf(
          "%s %s, %d update(s): plain %llu (%.1f ms, %llu failing), por %llu "
          "+ %llu cut (%.1f ms, %llu failing), por's plain count %llu\n",
          std::string(v->name).c_str(), ShapeTag(c.shape), c.updates,
          static_cast<unsigned long long>(plain.r.interleavings), plain.ms,
          static_cast<unsigned long long>(plain.r.failing),
          static_cast<unsigned long long>(por.r.interleavings),
          static_cast<unsigned long long>(por.r.cut), por.ms,
          static_cast<unsigned long long>(por.r.failing),
          static_cast<unsigned long long>(por.r.plain_interleavings));
      ASSERT_TRUE(plain.r.complete);
      ASSERT_TRUE(por.r.complete);
      EXPECT_LT(por.r.interleavings + por.r.cut, plain.r.interleavings);
      EXPECT_EQ(por.r.plain_interleavings, plain.r.interleavings);
      EXPECT_EQ(plain.r.plain_interleavings, plain.r.interleavings);
      EXPECT_EQ(Outcomes(por.r), Outcomes(plain.r));
      EXPECT_EQ(por.r.minimal.has_value(), plain.r.minimal.has_value());
    }
  }
}

// A known non-monotonic reader: without the seq retry, a call racing an
// update can return a torn value ahead of the next call's. Both two-call
// shapes must find that (with and without reduction); the upstream reader
// is clean in both.
TEST(ExhaustivePor, TwoCallsCatchANonMonotonicReaderAndClearUpstream) {
  for (ExhaustiveShape shape :
       {ExhaustiveShape::kTwoCalls, ExhaustiveShape::kTwoReaders}) {
    const Property across = shape == ExhaustiveShape::kTwoCalls
                                ? Property::kMonotonic
                                : Property::kCausal;
    for (Reduction reduction : {Reduction::kNone, Reduction::kPor}) {
      SCOPED_TRACE(std::string(ShapeTag(shape)) + " " +
                   ReductionName(reduction));
      const Scenario s = Shape(shape, reduction, 1);
      const Timed broken = ExploreTimed(s, testing::NoSeqRetryVariant());
      ASSERT_TRUE(broken.r.complete);
      EXPECT_GT(broken.r.stats[static_cast<size_t>(across) - 1].defects, 0u)
          << FormatExploreReport(s, broken.r);
      ASSERT_TRUE(broken.r.minimal_first_call.has_value());
      const Timed clean = ExploreTimed(s, variants::UpstreamVariant());
      ASSERT_TRUE(clean.r.complete);
      EXPECT_EQ(clean.r.failing, 0u) << FormatExploreReport(s, clean.r);
      EXPECT_GT(clean.r.stats[static_cast<size_t>(across) - 1].checked, 0u);
    }
  }
}

// The minimal failing interleaving of a two-call run replays both calls.
TEST(ExhaustivePor, TwoCallReplayReproduces) {
  const Scenario s =
      Shape(ExhaustiveShape::kTwoCalls, Reduction::kPor, /*updates=*/1);
  auto out = sim::Run(s, testing::NoSeqRetryVariant());
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->failed);
  ASSERT_EQ(out->replays.size(), 1u);
  ASSERT_TRUE(out->replays[0].scenario.has_value());
  auto again = Replay(*out->replays[0].scenario, testing::NoSeqRetryVariant());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->reproduced) << again->text;
  EXPECT_NE(again->text.find("first call"), std::string::npos) << again->text;
  auto fixed = Replay(*out->replays[0].scenario, variants::UpstreamVariant());
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_FALSE(fixed->reproduced) << fixed->text;
}

// The built-in two-call scenarios: they read back from their own TOML,
// and pass on the upstream reader, each well within a second on an idle
// machine (the bound here leaves room for a loaded one).
TEST(ExhaustivePor, BuiltInScenariosPassOnUpstream) {
  for (const char* file : {"scenarios/exhaustive/exhaustive-two-calls.toml",
                           "scenarios/exhaustive/exhaustive-two-cpus.toml"}) {
    SCOPED_TRACE(file);
    absl::StatusOr<Scenario> s = LoadScenarioFile(file);
    ASSERT_TRUE(s.ok()) << s.status();
    const std::string text = ScenarioToToml(*s);
    absl::StatusOr<Scenario> back = ParseScenario(text, file);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(ScenarioToToml(*back), text);
    EXPECT_NE(text.find("exhaustive_reduction = \"por\""), std::string::npos);
    const auto t0 = std::chrono::steady_clock::now();
    auto out = sim::Run(*s, variants::UpstreamVariant());
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - t0)
                          .count();
    ASSERT_TRUE(out.ok()) << out.status();
    const std::string report = FormatOutcome(*s, *out);
    std::printf("%s: %.0f ms\n%s\n", file, ms, report.c_str());
    EXPECT_FALSE(out->failed) << report;
    EXPECT_TRUE(out->complete);
    EXPECT_LT(ms, 10000.0);
  }
}

}  // namespace
}  // namespace vdsolab::sim
