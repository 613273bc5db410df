// The run and replay formats (sim/formats.h), parsed back as a consumer
// would: the JSON with a JSON parser, the TAP line by line, the SVG with an
// XML parser (its marks counted against the call's steps), the Chrome
// trace as JSON with one event per step.

#include "sim/formats.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <sstream>
#include <string>

#include "sim/run.h"
#include "sim/scenario_toml.h"
#include "testing/runfile.h"
#include "tests/broken_readers.h"
#include "variants/upstream.h"

namespace vdsolab::sim {
namespace {

Scenario OneCall() {
  Scenario s;
  s.name = "one-call";
  s.run.strategy = Strategy::kExhaustive;
  s.run.exhaustive_at_ns = 100000000;
  s.readers = {ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonic};
  s.run.reader = "no-seq-retry";
  return s;
}

int Count(const TraceStep::Kind kind, const CallRecord& c) {
  int n = 0;
  for (const TraceStep& t : c.trace) n += t.kind == kind;
  return n;
}

class Formats : public ::testing::Test {
 protected:
  void SetUp() override {
    const variants::Variant& broken = testing::NoSeqRetryVariant();
    absl::StatusOr<Outcome> out = sim::Run(OneCall(), broken);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_TRUE(out->failed);
    outcome_ = *out;
    ASSERT_FALSE(outcome_.replays.empty());
    replay_scenario_ = *outcome_.replays[0].scenario;
    absl::StatusOr<ReplayOutcome> r = Replay(replay_scenario_, broken);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->reproduced);
    ASSERT_TRUE(r->call.has_value());
    replay_ = *r;
  }
  Outcome outcome_;
  Scenario replay_scenario_;
  ReplayOutcome replay_;
};

TEST_F(Formats, OutcomeJsonParsesWithEveryProperty) {
  const nlohmann::json j =
      nlohmann::json::parse(OutcomeJson(OneCall(), outcome_, "x.toml").Text());
  EXPECT_EQ(j["scenario"], "one-call");
  EXPECT_EQ(j["strategy"], "exhaustive");
  EXPECT_TRUE(j["failed"]);
  EXPECT_EQ(j["properties"].size(), static_cast<size_t>(kNumProperties));
  EXPECT_GT(j["properties"]["torn"]["defects"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["exhaustive"]["interleavings"].get<uint64_t>(),
            outcome_.exhaustive->interleavings);
  EXPECT_EQ(j["exhaustive"]["minimal"].size(),
            outcome_.exhaustive->minimal->size());
  EXPECT_EQ(j["replay"]["command"], "vdsolab replay x.toml");
}

TEST_F(Formats, TapHasOneTestPointPerProperty) {
  std::istringstream tap(OutcomeTap(OneCall(), outcome_, false));
  std::string line;
  std::getline(tap, line);
  EXPECT_EQ(line, "TAP version 13");
  int points = 0;
  bool plan = false;
  while (std::getline(tap, line)) {
    plan |= line == "1.." + std::to_string(kNumProperties);
    const bool ok = line.rfind("ok ", 0) == 0;
    const bool not_ok = line.rfind("not ok ", 0) == 0;
    if (!ok && !not_ok) continue;
    ++points;
    // "not ok" exactly where the run found defects in that property.
    const size_t i = static_cast<size_t>(points - 1);
    EXPECT_EQ(not_ok, outcome_.stats[i].defects != 0) << line;
    EXPECT_NE(line.find(PropertyName(static_cast<Property>(points))),
              std::string::npos)
        << line;
  }
  EXPECT_TRUE(plan);
  EXPECT_EQ(points, kNumProperties);
}

TEST_F(Formats, ReplayJsonHasTheCallStepByStep) {
  const nlohmann::json j = nlohmann::json::parse(
      ReplayJson(replay_scenario_, testing::NoSeqRetryVariant(), replay_)
          .Text());
  EXPECT_EQ(j["verdict"], "reproduced");
  EXPECT_EQ(j["call"]["steps"].size(), replay_.call->trace.size());
  int stores = 0;
  for (const auto& step : j["call"]["steps"]) stores += step["kind"] == "store";
  EXPECT_EQ(stores, Count(TraceStep::Kind::kStore, *replay_.call));
  EXPECT_GT(stores, 0);
}

TEST_F(Formats, SvgDrawsEveryStepOnItsLane) {
  const std::string svg = ReplaySvg(replay_scenario_, replay_);
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_string(svg.c_str());
  ASSERT_TRUE(parsed) << parsed.description() << "\n" << svg;
  const pugi::xml_node root = doc.child("svg");
  ASSERT_TRUE(root);
  int loads = 0, counters = 0, stores = 0, odd = 0;
  for (const pugi::xml_node& n : root.children()) {
    const std::string cls = n.attribute("class").value();
    loads += cls == "load";
    counters += cls == "counter";
    stores += cls == "store";
    odd += cls == "odd-seq";
  }
  const CallRecord& c = *replay_.call;
  EXPECT_EQ(loads, Count(TraceStep::Kind::kLoad, c));
  EXPECT_EQ(counters, Count(TraceStep::Kind::kCounter, c));
  EXPECT_EQ(stores, Count(TraceStep::Kind::kStore, c));
  EXPECT_GE(odd, 1);  // The update's seq went odd during the call.
}

TEST_F(Formats, ChromeTraceHasTheCallAndOneEventPerStep) {
  const nlohmann::json j =
      nlohmann::json::parse(ReplayChromeTrace(replay_scenario_, replay_));
  int complete = 0, instants = 0;
  for (const auto& e : j["traceEvents"]) {
    complete += e["ph"] == "X";
    instants += e["ph"] == "i";
  }
  EXPECT_EQ(complete, 1);
  EXPECT_EQ(instants, static_cast<int>(replay_.call->trace.size()));
}

// A run that fails outside the properties (here only on a syscall event's
// read-back, the ntp-input history scenario's three mismatches) says so in
// every format: TAP has a `not ok` point for it after the properties' (a
// consumer would otherwise see nine `ok`s and a non-zero exit), the JSON
// lists the mismatched events.
TEST(FormatsOfOtherFailures, ASyscallEventMismatchIsANotOkPointAndInTheJson) {
  absl::StatusOr<Scenario> s = LoadScenarioFile(
      vdsolab::testing::Runfile("scenarios/history/ntp-input-2024.toml"));
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<Outcome> out = sim::Run(*s, variants::UpstreamVariant());
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->failed);
  for (const PropertyStats& st : out->stats) ASSERT_EQ(st.defects, 0u);

  std::istringstream tap(OutcomeTap(*s, *out, /*accept_known=*/false));
  std::string line;
  int points = 0, not_ok = 0;
  std::string plan, last;
  while (std::getline(tap, line)) {
    if (line.rfind("1..", 0) == 0) plan = line;
    if (line.rfind("ok ", 0) == 0 || line.rfind("not ok ", 0) == 0) {
      ++points;
      last = line;
      not_ok += line.rfind("not ok ", 0) == 0;
    }
  }
  EXPECT_EQ(plan, "1.." + std::to_string(points));
  EXPECT_EQ(points, kNumProperties + 1);
  EXPECT_EQ(not_ok, 1);
  EXPECT_EQ(last.rfind("not ok " + std::to_string(kNumProperties + 1) +
                           " - syscall events",
                       0),
            0u)
      << last;

  const nlohmann::json j =
      nlohmann::json::parse(OutcomeJson(*s, *out, "").Text());
  ASSERT_TRUE(j.contains("syscall_event_mismatches")) << j.dump(1);
  const auto& events = j["syscall_event_mismatches"];
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0]["event"], 0);
  EXPECT_FALSE(events[0]["mismatches"].empty());
}

}  // namespace
}  // namespace vdsolab::sim
