// File: fuzz/scenario_fuzzer.cc
//
// Scenario and replay files, and the durations the command line takes:
// any text gives a scenario or an error that says what is wrong, never a
// crash; and a scenario that parses is written back (ScenarioToToml) to
// text that parses to the same scenario.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/scenario.h"
#include "sim/scenario_toml.h"

namespace {

void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "scenario_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vdsolab::sim;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<Scenario> s = ParseScenario(text, "fuzz.toml");
  if (s.ok()) {
    const std::string again = ScenarioToToml(*s);
    // ScenarioToToml writes each reader's resolved id (its index when the
    // file left it out), so that a replay shrunk to fewer readers keeps
    // their randomness: compare with the ids resolved.
    Scenario resolved = *s;
    for (size_t i = 0; i < resolved.readers.size(); ++i) {
      resolved.readers[i].id = ReaderId(*s, i);
    }
    const absl::StatusOr<Scenario> t = ParseScenario(again, "again.toml");
    if (!t.ok()) {
      Fail("a parsed scenario, written back, does not parse",
           std::string(t.status().message()) + "\n" + again);
    }
    if (!(*t == resolved)) {
      const Scenario* const r = &resolved;
      std::string which;
      if (t->name != r->name || t->description != r->description) {
        which += " name/description";
      }
      if (!(t->machine == r->machine)) which += " [machine]";
      if (!(t->kernel == r->kernel)) which += " [kernel]";
      if (!(t->timing == r->timing)) which += " [timing]";
      if (!(t->events == r->events)) which += " [[event]]";
      if (!(t->readers == r->readers)) which += " [[reader]]";
      if (!(t->faults == r->faults)) which += " [faults]";
      if (!(t->checks == r->checks)) which += " [checks]";
      if (!(t->run == r->run)) which += " [run]";
      if (!(t->replay == r->replay)) which += " [replay]";
      Fail("a scenario does not survive a round trip; differs in:",
           which + "\n" + again);
    }
  } else if (s.status().message().empty()) {
    Fail("a rejected scenario with no message", text);
  }
  // The command line's durations (--duration, --ntp_at, ...).
  if (const absl::StatusOr<uint64_t> d = ParseDurationNs(text); d.ok()) {
    const absl::StatusOr<uint64_t> back = ParseDurationNs(FormatDurationNs(*d));
    if (!back.ok() || *back != *d) {
      Fail("a duration does not survive a round trip", FormatDurationNs(*d));
    }
  }
  (void)ParseSecondsFraction(text);
  return 0;
}
