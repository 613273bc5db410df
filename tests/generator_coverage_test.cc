// Coverage of the scenario generators (tests/scenario_generators.h): draws
// a fixed, seeded sample of each shape the property suite runs, runs each
// through the simulation, prints a coverage report (how often each field
// value, regime and edge was hit) and fails if any listed one never was.
// A generator that stops reaching an input domain (an event kind, a limit,
// a counter width, a wrap point) turns this test red, not the suite blind.

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "sim/engine.h"
#include "sim/scenario.h"
#include "tests/scenario_generators.h"
#include "timekeeper/timex.h"
#include "variants/registry.h"

namespace vdsolab::sim {
namespace {

constexpr uint64_t kSeed = 20261130;
constexpr int kPerShape = 60;

// Every field value, regime and edge the suite must reach.
const std::vector<std::string>& Required() {
  static const auto* r =
      new std::vector<std::string>{"event adjtimex_frequency",
                                   "event adjtimex_tick",
                                   "event settime",
                                   "event idle",
                                   "event pause",
                                   "event adjtimex",
                                   "event set_offset",
                                   "event set_tai",
                                   "event suspend",
                                   "event leap",
                                   "event aux_enable",
                                   "event aux_disable",
                                   "event aux_settime",
                                   "adjtimex on an aux clock",
                                   "reader of an aux clock",
                                   "adjtimex status",
                                   "leap then status cleared after a tick",
                                   "REALTIME 1-4 s above MONOTONIC at boot",
                                   "settime below MONOTONIC",
                                   "settime expected to succeed",
                                   "freq at +500 ppm",
                                   "freq at -500 ppm",
                                   "freq beyond the clamp",
                                   "tick at 9000",
                                   "tick at 11000",
                                   "tick refused",
                                   "offset negative",
                                   "offset positive",
                                   "pause past max_cycles",
                                   "event inside a pause",
                                   "event right after a long pause",
                                   "boot_offset zero",
                                   "boot_offset days",
                                   "width 64",
                                   "width 56",
                                   "width 40",
                                   "width 32",
                                   "width 24",
                                   "clocksource tsc",
                                   "clocksource hpet",
                                   "clocksource acpi_pm",
                                   "start near 2^32",
                                   "start near 2^62",
                                   "start near 2^63",
                                   "start near 2^64",
                                   "several CPUs",
                                   "skewed CPU",
                                   "clocksource kvm-clock",
                                   "event pvclock_update",
                                   "pvclock rewrite keeping its values",
                                   "pvclock stable bit cleared",
                                   "pvclock new TSC scale",
                                   "pvclock period of microseconds",
                                   "kvm-clock to the TSC and back",
                                   "kvm-clock on a mis-calibrated TSC",
                                   "run: negative motion",
                                   "run: beyond max_cycles",
                                   "run: counter wrapped",
                                   "run: retried",
                                   "run: raced a writer",
                                   "run: syscall fallback",
                                   "run: migrated",
                                   "run: pace checked",
                                   "run: settime refused",
                                   "run: set_offset refused",
                                   "run: armed leap cleared by adjtimex",
                                   "run: aux clock set",
                                   "run: aux clock steered",
                                   "run: kvm-clock through the pvclock page",
                                   "run: raced a pvclock rewrite",
                                   "run: timekeeper checked"};
  return *r;
}

void Tally(const Scenario& s, std::map<std::string, int>* hits) {
  auto hit = [hits](const std::string& what) { ++(*hits)[what]; };
  const EventSpec* long_pause = nullptr;
  for (const EventSpec& e : s.events) {
    hit(std::string("event ") + EventKindName(e.kind));
    if (e.kind == EventKind::kAdjtimexFrequency) {
      if (e.freq_scaled_ppm == (500ll << 16)) hit("freq at +500 ppm");
      if (e.freq_scaled_ppm == -(500ll << 16)) hit("freq at -500 ppm");
    }
    if (e.kind == EventKind::kAdjtimexTick) {
      if (e.tick_usec == 9000) hit("tick at 9000");
      if (e.tick_usec == 11000) hit("tick at 11000");
    }
    if (e.kind == EventKind::kAdjtimex) {
      if ((e.modes & timekeeper::kAdjFrequency) != 0 &&
          (e.freq > (500ll << 16) || e.freq < -(500ll << 16))) {
        hit("freq beyond the clamp");
      }
      if ((e.modes & timekeeper::kAdjTick) != 0 &&
          (e.tick_usec < 9000 || e.tick_usec > 11000)) {
        hit("tick refused");
      }
    }
    if (e.kind == EventKind::kSetOffset) {
      hit(e.offset_time.tv_sec < 0 ? "offset negative" : "offset positive");
    }
    if (e.kind == EventKind::kAdjtimex &&
        (e.modes & timekeeper::kAdjStatus) != 0) {
      hit("adjtimex status");
    }
    if (e.kind == EventKind::kAdjtimex && e.clock >= kClockAux &&
        e.clock <= kClockAuxLast) {
      hit("adjtimex on an aux clock");
    }
    if (e.kind == EventKind::kSetTime) {
      if (e.expect_ret == -kEinval) hit("settime below MONOTONIC");
      if (e.expect_ret == 0) hit("settime expected to succeed");
    }
    if (e.kind == EventKind::kLeap) {
      for (const EventSpec& c : s.events) {
        if (c.kind == EventKind::kAdjtimex &&
            c.modes == timekeeper::kAdjStatus &&
            (c.status & timekeeper::kStaIns) == 0 && c.at_ns >= 12000000 &&
            e.at_ns < 1000000) {
          hit("leap then status cleared after a tick");
        }
      }
    }
    if (e.kind == EventKind::kPause && e.duration_ns >= 900000000000ull) {
      hit("pause past max_cycles");
      long_pause = &e;
    }
  }
  if (long_pause != nullptr) {
    const uint64_t end = long_pause->at_ns + long_pause->duration_ns;
    for (const EventSpec& e : s.events) {
      if (&e == long_pause) continue;
      if (e.at_ns > long_pause->at_ns && e.at_ns < end) {
        hit("event inside a pause");
      }
      if (e.at_ns >= end && e.at_ns <= end + 20000) {
        hit("event right after a long pause");
      }
    }
  }
  if (s.kernel.boot_offset.tv_sec == 0 && s.kernel.boot_offset.tv_nsec == 0) {
    hit("boot_offset zero");
  }
  if (s.kernel.boot_offset.tv_sec >= 86400) hit("boot_offset days");
  if (!s.events.empty() &&
      s.kernel.boot_realtime.tv_sec > s.kernel.boot_offset.tv_sec &&
      s.kernel.boot_realtime.tv_sec <= s.kernel.boot_offset.tv_sec + 4) {
    hit("REALTIME 1-4 s above MONOTONIC at boot");
  }
  hit("width " + std::to_string(s.machine.width_bits));
  hit("clocksource " + s.machine.clocksource);
  const uint64_t mask =
      s.machine.width_bits == 64 ? ~0ull : (1ull << s.machine.width_bits) - 1;
  const uint64_t start = s.machine.counter_start & mask;
  for (int bit : {32, 62, 63, 64}) {
    const unsigned __int128 edge = static_cast<unsigned __int128>(1) << bit;
    if (start + (static_cast<unsigned __int128>(1) << 30) >= edge &&
        start <= edge && s.machine.width_bits == 64) {
      hit("start near 2^" + std::to_string(bit));
    }
  }
  if (s.machine.cpus.size() > 1) hit("several CPUs");
  if (s.machine.clocksource == "kvm-clock") {
    if (s.machine.pvclock_period_ns != 0 &&
        s.machine.pvclock_period_ns <= 200000) {
      hit("pvclock period of microseconds");
    }
    if (s.machine.calibrated_hz != 0 &&
        s.machine.calibrated_hz != s.machine.counter_hz) {
      hit("kvm-clock on a mis-calibrated TSC");
    }
    for (const EventSpec& e : s.events) {
      if (e.kind == EventKind::kPvclockUpdate) {
        if (!e.pvclock_master) hit("pvclock rewrite keeping its values");
        if (!e.pvclock_stable) hit("pvclock stable bit cleared");
        if (e.tsc_khz != 0) hit("pvclock new TSC scale");
      }
      if (e.kind == EventKind::kClocksource && e.clocksource == "kvm-clock") {
        hit("kvm-clock to the TSC and back");
      }
    }
  }
  for (const ReaderSpec& r : s.readers) {
    for (ClockId c : r.clocks) {
      if (c >= kClockAux && c <= kClockAuxLast) {
        hit("reader of an aux clock");
        break;
      }
    }
  }
  for (const CpuCounterSpec& c : s.machine.cpus) {
    if (c.offset_cycles != 0 || c.drift_ppb != 0 || !c.steps.empty()) {
      hit("skewed CPU");
    }
  }
}

TEST(GeneratorCoverage, SuiteReachesEveryFieldRegimeAndEdge) {
  auto variant = variants::FindVariant("upstream");
  ASSERT_TRUE(variant.ok());
  std::map<std::string, int> hits;
  rc::Random random(kSeed);
  int runs = 0;
  for (const testing::ScenarioShape shape :
       {testing::ScenarioShape{false, false, true, false},
        testing::ScenarioShape{true, false, true, false},
        testing::ScenarioShape{false, true, true, false},
        testing::ScenarioShape{true, true, true, true},
        testing::ScenarioShape{.multi_cpu = true,
        .events = true,
        .races = true,
        .odd_counters = false,
        .relaxed = false,
        .kvm = true}}) {
    const rc::Gen<Scenario> gen = testing::GenScenario(shape);
    for (int i = 0; i < kPerShape; ++i) {
      const Scenario s = gen(random.split(), rc::kNominalSize).value();
      if (!ValidateScenario(s).ok()) continue;
      Tally(s, &hits);
      absl::StatusOr<RunResult> r = RunRandom(s, **variant);
      ASSERT_TRUE(r.ok()) << r.status();
      ++runs;
      const Coverage& c = r->coverage;
      if (c.negative_motion > 0) ++hits["run: negative motion"];
      if (c.beyond_max_cycles > 0) ++hits["run: beyond max_cycles"];
      if (c.counter_wrapped > 0) ++hits["run: counter wrapped"];
      if (c.retries > 0) ++hits["run: retried"];
      if (c.raced > 0) ++hits["run: raced a writer"];
      if (c.fallbacks > 0) ++hits["run: syscall fallback"];
      if (c.pvclock_reads > 0)
        ++hits["run: kvm-clock through the pvclock page"];
      if (c.pvclock_raced > 0) ++hits["run: raced a pvclock rewrite"];
      if (c.migrations + c.midcall_migrations > 0) ++hits["run: migrated"];
      if (r->stats[static_cast<int>(Property::kRawRate) - 1].checked > 0) {
        ++hits["run: pace checked"];
      }
      // The refused syscalls and the leap state change the timekeeper
      // consistency checks look at; none may have a finding here.
      for (const EventOutcome& o : r->outcomes) {
        const EventSpec& e = s.events[o.event];
        if (e.kind == EventKind::kSetTime && o.ret == -kEinval) {
          ++hits["run: settime refused"];
        }
        if (e.kind == EventKind::kSetOffset && o.ret == -kEinval) {
          ++hits["run: set_offset refused"];
        }
        if (e.kind == EventKind::kAdjtimex &&
            e.modes == timekeeper::kAdjStatus &&
            (e.status & timekeeper::kStaIns) == 0 &&
            o.ret == timekeeper::kTimeIns) {
          ++hits["run: armed leap cleared by adjtimex"];
        }
        // An aux clock the run enabled, then set or steered (0 and the
        // clock state, not -ENODEV).
        if (e.kind == EventKind::kAuxSettime && o.ret == 0) {
          ++hits["run: aux clock set"];
        }
        if (e.kind == EventKind::kAdjtimex && e.clock >= kClockAux &&
            e.clock <= kClockAuxLast && o.ret >= 0) {
          ++hits["run: aux clock steered"];
        }
        EXPECT_TRUE(o.mismatches.empty()) << o.what << ": " << o.mismatches[0];
      }
      EXPECT_TRUE(r->timekeeper_findings.empty()) << r->timekeeper_findings[0];
      if (r->updates > 0) ++hits["run: timekeeper checked"];
    }
  }
  std::printf("generator coverage over %d runs (seed %llu):\n", runs,
              static_cast<unsigned long long>(kSeed));
  for (const std::string& what : Required()) {
    std::printf("  %-34s %d\n", what.c_str(), hits[what]);
  }
  for (const std::string& what : Required()) {
    EXPECT_GT(hits[what], 0) << "the generators never reach: " << what;
  }
}

}  // namespace
}  // namespace vdsolab::sim
