// The timekeeper events and kernel keys of scenario files: every new field
// round-trips through ScenarioToToml(), mode and status bits read as names
// or numbers, and what the kernel refuses at any time is refused by name.

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "sim/scenario_toml.h"
#include "timekeeper/timex.h"

namespace vdsolab::sim {
namespace {

namespace tk = timekeeper;

Scenario WithEvents() {
  Scenario s;
  s.name = "events";
  s.kernel.era = "6.18";
  s.kernel.defects = {"ntp_offset_readback_u32"};
  s.kernel.aux_clocks = true;
  s.kernel.tsc_nonstop = true;
  s.kernel.persistent_clock = false;
  EventSpec adj;
  adj.kind = EventKind::kAdjtimex;
  adj.at_ns = 1000;
  adj.modes = tk::kAdjOffset | tk::kAdjStatus | tk::kAdjNano;
  adj.offset = -77;
  adj.freq = 123;
  adj.maxerror = -1;
  adj.esterror = 5;
  adj.status = tk::kStaPll | tk::kStaIns;
  adj.constant = 9;
  adj.time_sec = -3;
  adj.time_usec = 999;
  adj.tick_usec = 10001;
  adj.clock = kClockAux + 2;
  adj.expect_ret = -22;
  adj.expect_readback = {"offset=-77", "tai=0"};
  EventSpec raw_modes = adj;
  raw_modes.modes = 0x0200;  // No name: written as a number.
  raw_modes.status = 0x10000;
  raw_modes.clock = kClockRealtime;
  raw_modes.expect_ret = kNoExpectedRet;
  raw_modes.expect_readback = {};
  EventSpec tai;
  tai.kind = EventKind::kSetTai;
  tai.at_ns = 2000;
  tai.tai = 37;
  EventSpec off;
  off.kind = EventKind::kSetOffset;
  off.at_ns = 3000;
  off.offset_time = {-3, 250000000};  // -2.75 s
  EventSpec leap;
  leap.kind = EventKind::kLeap;
  leap.at_ns = 4000;
  leap.leap = "delete";
  EventSpec suspend;
  suspend.kind = EventKind::kSuspend;
  suspend.at_ns = 5000;
  suspend.duration_ns = 7000;
  EventSpec cs;
  cs.kind = EventKind::kClocksource;
  cs.at_ns = 900000;
  cs.clocksource = "acpi_pm";
  EventSpec aux_on;
  aux_on.kind = EventKind::kAuxEnable;
  aux_on.at_ns = 910000;
  aux_on.aux = 2;
  EventSpec aux_set;
  aux_set.kind = EventKind::kAuxSettime;
  aux_set.at_ns = 920000;
  aux_set.aux = 2;
  aux_set.realtime = {1000, 1};
  EventSpec aux_off;
  aux_off.kind = EventKind::kAuxDisable;
  aux_off.at_ns = 930000;
  aux_off.aux = 2;
  s.events = {adj,     raw_modes, tai,    off,     leap,
              suspend, cs,        aux_on, aux_set, aux_off};
  s.readers[0].id = 0;  // Written resolved.
  s.readers[0].clocks = {kClockAux + 2, kClockMonotonic};
  s.run.duration_ns = 1000000;
  return s;
}

TEST(ScenarioEvents, EveryNewFieldRoundTrips) {
  const Scenario s = WithEvents();
  ASSERT_TRUE(ValidateScenario(s).ok()) << ValidateScenario(s).message();
  const std::string text = ScenarioToToml(s);
  EXPECT_TRUE(absl::StrContains(text,
                                "modes = [\"OFFSET\", \"STATUS\", "
                                "\"NANO\"]"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "offset_time = \"-2.750000000\""));
  EXPECT_TRUE(absl::StrContains(text, "clock = \"AUX+2\""));
  absl::StatusOr<Scenario> back = ParseScenario(text, "events.toml");
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << text;
  ASSERT_EQ(back->events.size(), s.events.size());
  for (size_t i = 0; i < s.events.size(); ++i) {
    EXPECT_EQ(back->events[i], s.events[i]) << "event " << i << "\n" << text;
  }
  EXPECT_EQ(back->kernel, s.kernel);
  EXPECT_EQ(back->machine, s.machine);
  EXPECT_EQ(back->readers, s.readers);
  EXPECT_EQ(back->run, s.run);
  EXPECT_EQ(back->timing, s.timing);
  EXPECT_EQ(*back, s) << text;
}

TEST(ScenarioEvents, DefaultsAreNotWritten) {
  const std::string text = ScenarioToToml(Scenario{});
  for (const char* key : {"era", "defects", "aux_clocks", "tsc_nonstop",
                          "persistent_clock", "expect_ret"}) {
    EXPECT_FALSE(absl::StrContains(text, key)) << key;
  }
}

TEST(ScenarioEvents, ModesAndStatusTakeNumbersToo) {
  absl::StatusOr<Scenario> s = ParseScenario(
      "[[event]]\nkind = \"adjtimex\"\nmodes = 16\nstatus = 8193\n", "n.toml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->events[0].modes, tk::kAdjStatus);
  EXPECT_EQ(s->events[0].status, tk::kStaPll | tk::kStaNano);
  absl::StatusOr<Scenario> bad = ParseScenario(
      "[[event]]\nkind = \"adjtimex\"\nmodes = [\"FREQ\"]\n", "b.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(
      absl::StrContains(bad.status().message(), "unknown name \"FREQ\""))
      << bad.status().message();
}

TEST(ScenarioEvents, WhatTheKernelRefusesIsRefusedByName) {
  struct Case {
    std::string toml;
    std::string message;
  };
  const Case cases[] = {
      {"[kernel]\nera = \"4.19\"\n", "unknown kernel era \"4.19\""},
      {"[kernel]\ndefects = [\"nope\"]\n", "unknown defect \"nope\""},
      {"[kernel]\nera = \"6.15\"\naux_clocks = true\n",
       "the aux clocks came with 6.17"},
      {"[[event]]\nkind = \"set_tai\"\ntai = 100001\n",
       "the kernel ignores ADJ_TAI outside 0 .. 100000"},
      {"[[event]]\nkind = \"leap\"\nleap = \"sideways\"\n",
       "want \"insert\" or \"delete\""},
      {"[[event]]\nkind = \"suspend\"\n", "event[0].duration"},
      {"[[event]]\nkind = \"clocksource\"\nclocksource = \"kvm-clock\"\n",
       "want \"tsc\", \"hpet\" or \"acpi_pm\""},
      {"[kernel]\naux_clocks = true\n[[event]]\nkind = \"aux_enable\"\naux = "
       "8\n",
       "event[0].aux = 8: want 0 .. 7"},
      {"[[event]]\nkind = \"adjtimex\"\nclock = \"MONOTONIC\"\n",
       "takes REALTIME or an aux clock"},
      {"[[event]]\nkind = \"adjtimex\"\nexpect_readback = [\"freq\"]\n",
       "want \"FIELD=INTEGER\""},
      {"[machine]\nclocksource = \"hpet\"\n[[event]]\nkind = "
       "\"clocksource\"\nclocksource = \"tsc\"\n",
       "need machine.clocksource = \"tsc\""},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Scenario> s = ParseScenario(c.toml, "bad.toml");
    absl::Status st = s.ok() ? ValidateScenario(*s) : s.status();
    ASSERT_FALSE(st.ok()) << c.toml;
    EXPECT_TRUE(absl::StrContains(st.message(), c.message))
        << c.toml << "\n  -> " << st.message();
  }
}

TEST(ScenarioEvents, AnEventTakesOnlyItsKindsParameters) {
  absl::StatusOr<Scenario> s = ParseScenario(
      "[[event]]\nkind = \"set_tai\"\nmodes = [\"TAI\"]\n", "x.toml");
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace vdsolab::sim
