#include "sim/scenario_toml.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/limits.h"

namespace vdsolab::sim {
namespace {

TEST(ParseDurationNs, AcceptsUnitsAndExactFractions) {
  EXPECT_EQ(*ParseDurationNs("250us"), 250000u);
  EXPECT_EQ(*ParseDurationNs("1.5s"), 1500000000u);
  EXPECT_EQ(*ParseDurationNs("2m"), 120000000000u);
  EXPECT_EQ(*ParseDurationNs("3ms"), 3000000u);
  // A string without its unit is refused, not read as nanoseconds (the
  // file's integers are): "5" meant 5 ns, a run with no calls that passed.
  EXPECT_FALSE(ParseDurationNs("17").ok());
  EXPECT_TRUE(ParseScenario("[run]\nduration = 17000\n", "ok.toml").ok());
  EXPECT_FALSE(ParseScenario("[run]\nduration = \"17\"\n", "bad.toml").ok());
  EXPECT_EQ(*ParseDurationNs("0.000000001s"), 1u);
  EXPECT_FALSE(ParseDurationNs("1.5ns").ok());  // Not whole nanoseconds.
  EXPECT_FALSE(ParseDurationNs("-1s").ok());
  EXPECT_FALSE(ParseDurationNs("1 s").ok());
  EXPECT_FALSE(ParseDurationNs("s").ok());
  EXPECT_FALSE(ParseDurationNs("1.s").ok());
  EXPECT_FALSE(ParseDurationNs("40d").ok());
  EXPECT_FALSE(ParseDurationNs("31000000s").ok());  // Over 30 days.
}

TEST(FormatDurationNs, PicksTheLargestExactUnit) {
  EXPECT_EQ(FormatDurationNs(0), "0ns");
  EXPECT_EQ(FormatDurationNs(1500000000), "1500ms");
  EXPECT_EQ(FormatDurationNs(120000000000), "2m");
  EXPECT_EQ(FormatDurationNs(7), "7ns");
}

Scenario Rich() {
  Scenario s;
  s.name = "rich";
  s.description = "with \"quotes\" and a \\ backslash";
  s.machine.cpus = {CpuCounterSpec{}, CpuCounterSpec{}};
  s.machine.cpus[1] = {-5000, 250,   {{1000000, -77}, {2000000, 9}},
                       100,   40000, 3};
  s.machine.counter_start = ~0ull - 12345;  // Needs the string form.
  s.kernel.boot_realtime = {1764460800, 123456789};
  s.kernel.timekeeping_cpu = 1;
  s.timing.preempt_ppm = 1234;
  s.timing.preempt_max_ns = 5000;
  EventSpec freq;
  freq.kind = EventKind::kAdjtimexFrequency;
  freq.at_ns = 1000;
  freq.freq_scaled_ppm = -(12ll << 16) - 5;  // Not a whole ppm.
  EventSpec set;
  set.kind = EventKind::kSetTime;
  set.at_ns = 2000;
  set.realtime = {1800000000, 5};
  EventSpec pause;
  pause.kind = EventKind::kPause;
  pause.at_ns = 3000;
  pause.duration_ns = 60000000000;
  s.events = {freq, set, pause};
  s.readers = {ReaderSpec{}, ReaderSpec{}};
  s.readers[1].id = 7;
  s.readers[1].cpu = 1;
  s.readers[1].clocks = {kClockTai, kClockMonotonicCoarse, -1};
  s.readers[1].migrate_midcall_ppm = 10;
  s.readers[1].own_clocks = false;
  s.faults.unordered_counter_read = true;
  s.checks.causal = false;
  s.run.duration_ns = 4000000;
  s.replay.present = true;
  s.replay.reader = 7;
  s.replay.call = 99;
  s.replay.property = "torn";
  s.replay.decisions = {0, 2, 1};
  return s;
}

TEST(ScenarioToml, RoundTripsEveryField) {
  const Scenario s = Rich();
  ASSERT_TRUE(ValidateScenario(s).ok()) << ValidateScenario(s);
  const std::string text = ScenarioToToml(s);
  absl::StatusOr<Scenario> back = ParseScenario(text, "rich.toml");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  // Reader 0 had id -1 (its index); the file spells the id out.
  Scenario want = s;
  want.readers[0].id = 0;
  EXPECT_TRUE(*back == want) << text << "\n---\n" << ScenarioToToml(*back);
  EXPECT_EQ(ScenarioToToml(*back), text);
}

TEST(ScenarioToml, DefaultsFillAnEmptyFile) {
  absl::StatusOr<Scenario> s = ParseScenario("", "empty.toml");
  ASSERT_TRUE(s.ok()) << s.status();
  Scenario defaults;
  EXPECT_TRUE(*s == defaults);
}

// Every built-in scenario (scenarios/, in the test's runfiles) reads back
// from what ScenarioToToml() writes, and writes the same text again.
TEST(ScenarioToml, EveryBuiltInScenarioRoundTrips) {
  std::vector<std::string> files;
  if (DIR* dir = opendir("scenarios")) {
    while (const dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (absl::EndsWith(name, ".toml")) files.push_back("scenarios/" + name);
    }
    closedir(dir);
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 9u) << "the built-in scenarios are data of sim_test";
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const absl::StatusOr<Scenario> s = LoadScenarioFile(file);
    ASSERT_TRUE(s.ok()) << s.status();
    const std::string text = ScenarioToToml(*s);
    const absl::StatusOr<Scenario> back = ParseScenario(text, file);
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
    Scenario want = *s;  // The file spells out every reader's id.
    for (size_t i = 0; i < want.readers.size(); ++i) {
      want.readers[i].id = ReaderId(*s, i);
    }
    EXPECT_TRUE(*back == want) << text;
    EXPECT_EQ(ScenarioToToml(*back), text);
  }
}

void ExpectError(const std::string& text, const std::string& fragment) {
  absl::StatusOr<Scenario> s = ParseScenario(text, "bad.toml");
  ASSERT_FALSE(s.ok()) << text;
  EXPECT_TRUE(absl::StrContains(s.status().message(), fragment))
      << "message: " << s.status().message() << "\nwanted: " << fragment;
}

TEST(ScenarioToml, ClockIdsAreNamesOrNumbers) {
  absl::StatusOr<Scenario> by_number = ParseScenario(
      "[[reader]]\nclocks = [1, -1, 2147483647, -2147483648]\n", "n.toml");
  ASSERT_TRUE(by_number.ok()) << by_number.status();
  absl::StatusOr<Scenario> by_name = ParseScenario(
      "[[reader]]\nclocks = [\"MONOTONIC\", \"-1\", \"2147483647\", "
      "\"-2147483648\"]\n",
      "s.toml");
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  EXPECT_EQ(by_number->readers[0].clocks, by_name->readers[0].clocks);
  EXPECT_EQ(by_number->readers[0].clocks[0], kClockMonotonic);
}

TEST(ScenarioToml, ErrorsNameTheProblem) {
  ExpectError("name = \"x\"\nnmae = 1\n", "unknown key \"nmae\"");
  ExpectError("[kernel]\nhz = \"fast\"\n", "kernel.hz: want an integer");
  ExpectError("[kernel]\nhz = 7\n", "kernel.hz: 7 is outside 10 .. 10000");
  ExpectError("[timing]\nload = \"3 parsecs\"\n", "timing.load");
  ExpectError("[[reader]]\nclocks = [\"MONOTONICK\"]\n",
              "unknown clock \"MONOTONICK\"");
  ExpectError("[[reader]]\nclocks = [99999999999]\n",
              "clock id 99999999999 is not a 32-bit integer");
  ExpectError("[[reader]]\nclocks = [1.5]\n",
              "want clock names (\"MONOTONIC\") or ids (1)");
  ExpectError(
      "[[event]]\nkind = \"adjtimex_frequency\"\n"
      "freq_ppm = 500.0000001\n",
      "500.0000001 ppm is outside");
  ExpectError("[[reader]]\ncpu = 3\n", "reader[0].cpu = 3");
  ExpectError("[[event]]\nkind = \"reboot\"\n", "event[0].kind");
  ExpectError("[[event]]\nkind = \"adjtimex_frequency\"\nfreq_ppm = 900\n",
              "900 ppm");
  // The position is the offending key's, not its table's header.
  ExpectError("[[event]]\nkind = \"settime\"\nat = \"5s\"\n",
              "bad.toml:3:6: event[0].at = 5000000000 ns (settime): not "
              "inside run.duration");
  ExpectError("[[reader]]\nid = 1\n[[reader]]\nid = 1\n",
              "bad.toml:4:6: reader[1].id = 1: reader[0] has it too");
  ExpectError("[run]\nstrategy = \"clever\"\n", "run.strategy");
  ExpectError("[run]\nreader = \"\"\n", "run.reader");
  ExpectError("[machine\n", "bad.toml:1");
  ExpectError("[machine]\ncounter_start = -5\n", "machine.counter_start");
  ExpectError("[kernel]\nboot_realtime = \"12.5.6\"\n", "kernel.boot_realtime");
  ExpectError("[[event]]\nat = \"1ms\"\n", "event[0].kind: missing");
}

TEST(ScenarioToml, ErrorsNameTheFileTheLineAndTheKey) {
  ExpectError("name = \"x\"\n\n[kernel]\nhz = \"fast\"\n",
              "bad.toml:4:6: kernel.hz: want an integer");
  ExpectError("name = \"x\"\nnmae = 1\n", "bad.toml:2:1: unknown key \"nmae\"");
  ExpectError("[[machine.cpu]]\nsteps = [{ at = \"1s\", cycles = 1.5 }]\n",
              "bad.toml:2:32: machine.cpu[0].steps[0].cycles: want an integer");
  ExpectError("[run]\nstrategy = \"clever\"\n",
              "bad.toml:2:12: run.strategy: \"clever\": want \"random\" or "
              "\"exhaustive\"");
}

// A range check across keys names the key that broke it, as the file
// spells it (not the model's field name, not a list of keys, not the
// table): the error's position is then that key's line, not its table's
// header. `want` is "bad.toml:LINE:" and the key.
void ExpectErrorAtLine(const std::string& text, int line,
                       const std::string& key) {
  ExpectError(text, absl::StrCat("bad.toml:", line, ":"));
  ExpectError(text, absl::StrCat(": ", key));
}

TEST(ScenarioToml, CrossKeyErrorsPointAtTheKeyThatBrokeThem) {
  const std::string fast_ticks = "[kernel]\nhz = 1000\n[timing]\n";
  ExpectErrorAtLine(fast_ticks + "tick_jitter = \"2ms\"\n", 4,
                    "timing.tick_jitter = 2000000 ns");
  ExpectErrorAtLine(fast_ticks + "load = \"1ns\"\nsyscall = \"2ms\"\n", 5,
                    "timing.syscall = 2000000 ns");
  ExpectErrorAtLine(fast_ticks + "store = \"2ms\"\nload = \"1ns\"\n", 4,
                    "timing.store = 2000000 ns");
  ExpectErrorAtLine("[timing]\npreempt_ppm = 5\npreempt_max = \"11s\"\n", 3,
                    "timing.preempt_max = 11000000000 ns");
  ExpectErrorAtLine("[timing]\nwriter_stall_max = \"11s\"\n", 2,
                    "timing.writer_stall_max");
  ExpectErrorAtLine(
      "[machine]\ncounter_hz = 1000000\npvclock_period = "
      "\"1ms\"\n",
      3, "machine.pvclock_period: only for");
  ExpectErrorAtLine("[machine]\nkvmclock_start = \"1ms\"\n", 2,
                    "machine.kvmclock_start: only for");
  ExpectErrorAtLine(
      "[[machine.cpu]]\nwobble_cycles = 5\nwobble_period = "
      "\"1ns\"\n",
      3, "machine.cpu[0].wobble_period must be");
  ExpectErrorAtLine(
      "[[machine.cpu]]\n[[machine.cpu]]\njitter_cycles = "
      "2199023255553\n",
      3, "machine.cpu[1].jitter_cycles");
  // One table too many: the first past the limit.
  std::string cpus;
  for (int i = 0; i < 65; ++i) cpus += "[[machine.cpu]]\n";
  ExpectErrorAtLine(cpus, 65, "machine.cpu[64]: 65 CPUs, want 1 .. 64");
  std::string readers;
  for (int i = 0; i < 65; ++i) readers += "[[reader]]\nperiod = \"1ms\"\n";
  ExpectErrorAtLine(readers, 129, "reader[64]: 65 readers, want 1 .. 64");
}

// replay.decisions were narrowed to int before any check: 2^32 read as 0,
// 2^63-1 as -1. Each is checked as written, and negative ones are refused
// whatever the strategy.
TEST(ScenarioToml, ReplayDecisionsAreCheckedBeforeNarrowing) {
  const std::string head = "[replay]\nproperty = \"torn\"\n";
  ExpectError(head + "decisions = [0, 4294967296]\n",
              "bad.toml:3:17: replay.decisions[1]: 4294967296 is outside 0 .. "
              "2147483647");
  ExpectError(head + "decisions = [9223372036854775807]\n",
              "replay.decisions[0]: 9223372036854775807 is outside");
  ExpectError(head + "decisions = [2147483648]\n",
              "replay.decisions[0]: 2147483648 is outside");
  ExpectError(head + "decisions = [-5]\n",
              "replay.decisions[0]: -5 is outside 0 .. 2147483647");
  const absl::StatusOr<Scenario> ok =
      ParseScenario(head + "decisions = [0, 2147483647]\n", "ok.toml");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->replay.decisions, (std::vector<int>{0, 2147483647}));
}

// A [replay] without `property` replayed "NOT REPRODUCED", exit 0.
TEST(ScenarioToml, ReplayNeedsItsProperty) {
  ExpectError("[replay]\nreader = 0\ncall = 197\n",
              "bad.toml:1:1: replay.property: missing");
}

// Found by fuzz/scenario_fuzzer: a duration formatted in ns with more than
// 12 digits (a replay file's) was rejected when read back.
TEST(ParseDurationNs, ReadsBackEveryFormattedDuration) {
  for (uint64_t ns : {uint64_t{46666666666664}, kMaxSimulatedNs, uint64_t{1},
                      uint64_t{999999999999}, uint64_t{1000000000001}}) {
    const absl::StatusOr<uint64_t> back = ParseDurationNs(FormatDurationNs(ns));
    ASSERT_TRUE(back.ok()) << FormatDurationNs(ns) << ": " << back.status();
    EXPECT_EQ(*back, ns);
  }
  EXPECT_FALSE(ParseDurationNs(absl::StrFormat("%dns", kMaxSimulatedNs + 1))
                   .ok());  // Past the limit.
  EXPECT_FALSE(ParseDurationNs("99999999999999999999ns").ok());
}

// Found by fuzz/scenario_fuzzer under UBSan: toml++ 3.3.0 reaches
// __builtin_unreachable testing U+00A1..U+0499 or U+FB26..U+FEFE for
// whitespace. Outside strings they are errors; inside, text.
TEST(ScenarioToml, NonAsciiIsAnErrorOutsideStringsAndTextInside) {
  for (const char* bad :
       {"\xc3\x9e", "name = \"a\"\nx = \xc3\xa9\n", "[machine] \xd2\x80\n",
        "nsn= 000d\"200++++\xef\xb3\xbf+", "\"\"\"\\\n\\\n\xef\xbb\xb7"}) {
    const absl::StatusOr<Scenario> s = ParseScenario(bad, "u.toml");
    EXPECT_FALSE(s.ok()) << bad;
  }
  const absl::StatusOr<Scenario> good = ParseScenario(
      "# caf\xc3\xa9\nname = \"caf\xc3\xa9 \\\" \xc3\x9e \xef\xbb\xb7\"\n"
      "description = \"\"\"\xc3\xa9\n\"\xc3\xa9\"\"\"\"\n"
      "[machine] # \xc3\xa9\n",
      "u.toml");
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->name, "caf\xc3\xa9 \" \xc3\x9e \xef\xbb\xb7");
  EXPECT_EQ(good->description,
            "\xc3\xa9\n\"\xc3\xa9\"");  // One closing " is content.
}

// Found by fuzz/scenario_fuzzer: control characters in a string were
// written back unescaped, which TOML forbids.
TEST(ScenarioToml, StringsWithControlCharactersRoundTrip) {
  Scenario s;
  s.description = std::string("a\x01b\x1f\"c\\d\te\x7f\n");
  const absl::StatusOr<Scenario> back =
      ParseScenario(ScenarioToToml(s), "back.toml");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << ScenarioToToml(s);
  EXPECT_EQ(back->description, s.description);
}

// Found by fuzz:scenario_fuzz_test: another kind's parameter was accepted
// and dropped when the scenario was written back.
TEST(ScenarioToml, AnEventTakesOnlyItsKindsParameter) {
  const absl::StatusOr<Scenario> s = ParseScenario(
      "[[event]]\nkind = \"adjtimex_tick\"\nat = \"1ms\"\nfreq_ppm = 5\n",
      "ev.toml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("does not apply"), std::string::npos)
      << s.status();
}

// Found by fuzz:scenario_fuzz_test: toml++ 3.3.0 aborts on an internal
// assertion for a table header that cannot start with a key.
TEST(ScenarioToml, ATableHeaderWithoutAKeyIsAnErrorNotACrash) {
  for (const char* text : {"[{machine.cpu]]\n", "[[=]]\n", "[ {a}]\n"}) {
    const absl::StatusOr<Scenario> s = ParseScenario(text, "bad.toml");
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.status().message().find("bad.toml"), std::string::npos)
        << s.status();
  }
}

}  // namespace
}  // namespace vdsolab::sim
