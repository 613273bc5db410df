// File: tests/scenario_generators.h
//
// rapidcheck generators for whole simulation scenarios: machines (CPUs,
// counter starts near 2^32, 2^62, 2^63 and the wrap, skew, drift, steps,
// wobble, jitter, narrow widths), kernel settings, events (NTP, settime, NO_HZ
// idle, VM pauses past max_cycles, the 6.17+ aux clocks), readers (rates,
// migration) and timing (preemption, writer stalls). Shrinking works on the
// scenario itself, so a failure shrinks to a small scenario file.

#ifndef VDSOLAB_TESTS_SCENARIO_GENERATORS_H_
#define VDSOLAB_TESTS_SCENARIO_GENERATORS_H_

#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/timespec.h"
#include "sim/scenario.h"
#include "timekeeper/timex.h"

namespace vdsolab::testing {

inline rc::Gen<uint64_t> GenCounterStart64() {
  return rc::gen::weightedOneOf<uint64_t>({
      {3, rc::gen::inRange<uint64_t>(0, 1ull << 44)},
      {1, rc::gen::inRange<uint64_t>((1ull << 32) - (1ull << 30), 1ull << 32)},
      {1, rc::gen::inRange<uint64_t>((1ull << 62) - (1ull << 30), 1ull << 62)},
      {1, rc::gen::inRange<uint64_t>((1ull << 63) - (1ull << 30), 1ull << 63)},
      {1, rc::gen::inRange<uint64_t>(~0ull - (1ull << 30), ~0ull)},
  });
}

inline rc::Gen<sim::CpuCounterSpec> GenCpu(bool skewed) {
  return rc::gen::exec([skewed] {
    sim::CpuCounterSpec c;
    if (!skewed) return c;
    c.offset_cycles = *rc::gen::weightedOneOf<int64_t>({
        {2, rc::gen::just<int64_t>(0)},
        {3, rc::gen::inRange<int64_t>(-300000, 300000)},
    });
    c.drift_ppb = *rc::gen::weightedOneOf<int64_t>(
        {{3, rc::gen::just<int64_t>(0)},
         {1, rc::gen::inRange<int64_t>(-20000, 20000)}});
    if (*rc::gen::inRange(0, 4) == 0) {
      c.steps.push_back(
          sim::CounterStep{*rc::gen::inRange<uint64_t>(0, 30000000),
                           *rc::gen::inRange<int64_t>(-5000000, 5000000)});
    }
    if (*rc::gen::inRange(0, 5) == 0) {
      c.jitter_cycles = *rc::gen::inRange<uint64_t>(0, 200);
    }
    if (*rc::gen::inRange(0, 6) == 0) {
      c.wobble_cycles = *rc::gen::inRange<uint64_t>(1, 100000);
      c.wobble_period_ns = *rc::gen::inRange<uint64_t>(1000, 10000000);
    }
    return c;
  });
}

// MONOTONIC at boot (offs_boot's start): zero, small, or days.
inline rc::Gen<Timespec64> GenBootOffset() {
  return rc::gen::weightedOneOf<Timespec64>({
      {1, rc::gen::just(Timespec64{0, 0})},
      {2, rc::gen::construct<Timespec64>(
              rc::gen::inRange<int64_t>(0, 5),
              rc::gen::inRange<int64_t>(0, 1000000000))},
      {1, rc::gen::construct<Timespec64>(
              rc::gen::inRange<int64_t>(86400, 400 * 86400),
              rc::gen::inRange<int64_t>(0, 1000000000))},
  });
}

// adjtimex() frequency in scaled ppm: inside, exactly at (+/-500 ppm) and,
// through kAdjtimex, beyond the kernel's clamp.
inline rc::Gen<int64_t> GenFreq(int64_t limit) {
  return rc::gen::weightedOneOf<int64_t>({
      {3, rc::gen::inRange<int64_t>(-limit, limit + 1)},
      {2, rc::gen::element<int64_t>(-limit, limit)},
      {1, rc::gen::element<int64_t>(0, 1, -1)},
  });
}

// One event of any kind the simulation checks strictly, at any time in
// [0, duration): NTP frequency and tick at and inside their limits, and
// beyond them through raw adjtimex() (the kernel clamps the frequency and
// refuses the tick); clock_settime; ADJ_SETOFFSET signed both ways; ADJ_TAI;
// a leap second asked for (STA_INS, STA_DEL) and ADJ_STATUS that arms,
// clears or resets it; NO_HZ idle; VM pauses; suspend.
inline rc::Gen<sim::EventSpec> GenEvent(uint64_t duration_ns) {
  return rc::gen::exec([duration_ns] {
    sim::EventSpec e;
    e.at_ns = *rc::gen::inRange<uint64_t>(0, duration_ns);
    e.kind = *rc::gen::element(
        sim::EventKind::kAdjtimexFrequency, sim::EventKind::kAdjtimexTick,
        sim::EventKind::kSetTime, sim::EventKind::kIdle, sim::EventKind::kPause,
        sim::EventKind::kAdjtimex, sim::EventKind::kSetOffset,
        sim::EventKind::kSetTai, sim::EventKind::kSuspend,
        sim::EventKind::kLeap);
    e.leap = *rc::gen::weightedOneOf<std::string>(
        {{3, rc::gen::just<std::string>("insert")},
         {1, rc::gen::just<std::string>("delete")}});
    e.freq_scaled_ppm = *GenFreq(500ll << 16);
    e.tick_usec = *rc::gen::weightedOneOf<int64_t>(
        {{3, rc::gen::inRange<int64_t>(9000, 11001)},
         {1, rc::gen::element<int64_t>(9000, 11000)}});
    e.realtime = {*rc::gen::inRange<int64_t>(1000, 4000000000),
                  *rc::gen::inRange<int64_t>(0, 1000000000)};
    // Idle windows are short (readers keep running through them); a long
    // pause is the caller's choice.
    e.duration_ns = *rc::gen::inRange<uint64_t>(1, 50000000);
    if (e.kind == sim::EventKind::kAdjtimex) {
      const int what = *rc::gen::inRange(0, 3);
      if (what == 2) {
        // The status word whole: clears a leap asked for (0, UNSYNC),
        // asks for one, or turns the PLL on (off again by a later one).
        e.modes = timekeeper::kAdjStatus;
        e.status = *rc::gen::element<int32_t>(
            0, timekeeper::kStaUnsync, timekeeper::kStaIns, timekeeper::kStaDel,
            timekeeper::kStaPll, timekeeper::kStaPll | timekeeper::kStaIns);
      } else if (what == 1) {
        e.modes = timekeeper::kAdjFrequency;
        e.freq = *rc::gen::weightedOneOf<int64_t>(
            {{1, GenFreq(500ll << 16)},
             {2, rc::gen::element<int64_t>(-(2000ll << 16), -(501ll << 16),
                                           501ll << 16, 2000ll << 16)}});
      } else {
        e.modes = timekeeper::kAdjTick;
        e.tick_usec = *rc::gen::element<int64_t>(8999, 9000, 11000, 11001);
      }
    }
    e.offset_time = {*rc::gen::inRange<int64_t>(-5, 6),
                     *rc::gen::inRange<int64_t>(0, 1000000000)};
    e.tai = *rc::gen::inRange<int32_t>(0, timekeeper::kMaxTaiOffset + 1);
    if (e.kind == sim::EventKind::kSuspend) {
      e.duration_ns = *rc::gen::inRange<uint64_t>(1000000, 3000000000);
    }
    return e;
  });
}

// The edges of settime and the leap state a uniform draw almost never
// reaches, added to a scenario with events:
// - REALTIME at boot just above MONOTONIC (1 to 4 s), so that a negative
//   ADJ_SETOFFSET takes REALTIME below MONOTONIC (refused);
// - clock_settime() below MONOTONIC (refused: MONOTONIC never exceeds
//   its start + the run's length at the fastest tick, and never falls below
//   its start, so any target under the start is), expected to return
//   -EINVAL, and targets far above it,
//   expected to succeed: the run fails if the kernel answers otherwise;
// - a leap second asked for just before a second boundary (REALTIME at
//   boot x.999 s) and, after the tick that arms it, ADJ_STATUS clearing it:
//   the armed insertion's time (next_leap_ktime) then changes without a
//   tick or a vDSO update.
inline void AddSettimeAndLeapEdges(sim::Scenario* s) {
  const Timespec64& boot = s->kernel.boot_offset;
  if (*rc::gen::inRange(0, 5) == 0) {
    s->kernel.boot_realtime.tv_sec =
        boot.tv_sec + *rc::gen::inRange<int64_t>(1, 4);
  }
  // MONOTONIC at boot: timekeeping_init() drops a boot offset beyond the
  // wall time (REALTIME may not start below MONOTONIC).
  const int64_t mono0 =
      Timespec64Compare(s->kernel.boot_realtime, boot) < 0 ? 0 : boot.tv_sec;
  if (*rc::gen::inRange(0, 4) == 0) {
    s->kernel.boot_realtime.tv_nsec = 999000000;
    if (s->run.duration_ns < 24000000) s->run.duration_ns = 24000000;
    sim::EventSpec leap = *GenEvent(s->run.duration_ns);
    leap.kind = sim::EventKind::kLeap;
    leap.at_ns = *rc::gen::inRange<uint64_t>(0, 500000);
    sim::EventSpec clear = *GenEvent(s->run.duration_ns);
    clear.kind = sim::EventKind::kAdjtimex;
    clear.modes = timekeeper::kAdjStatus;
    clear.status = *rc::gen::element<int32_t>(0, timekeeper::kStaUnsync,
                                              timekeeper::kStaDel);
    // After HZ=100's first tick (10 ms), which runs second_overflow().
    clear.at_ns = *rc::gen::inRange<uint64_t>(12000000, s->run.duration_ns);
    s->events.push_back(leap);
    s->events.push_back(clear);
  }
  // The run's MONOTONIC can reach at most this many seconds (ticks 10%
  // long, NTP +500 ppm, a second of rounding).
  const int64_t mono_max =
      mono0 + 2 +
      static_cast<int64_t>(s->run.duration_ns / 1000000000 * 111 / 100 + 1);
  for (sim::EventSpec& e : s->events) {
    if (e.kind != sim::EventKind::kSetTime) continue;
    if (mono0 >= 1 && *rc::gen::inRange(0, 3) == 0) {
      e.realtime.tv_sec = *rc::gen::inRange<int64_t>(0, mono0);
    }
    if (e.realtime.tv_sec < mono0) {
      e.expect_ret = -kEinval;
    } else if (e.realtime.tv_sec > mono_max) {
      e.expect_ret = 0;
    }
  }
}

// The 6.17+ POSIX aux clocks (kernel.aux_clocks): enabled (early, so that
// readers find them on), set with clock_settime(), steered with
// clock_adjtime() (a frequency, an offset), disabled again, and read by the
// readers next to their kernel clocks. Mostly AUX+0 and AUX+3, so that
// operations meet the same clock; a disabled or never enabled one answers
// -ENODEV through the syscall.
inline void AddAuxClocks(sim::Scenario* s) {
  s->kernel.aux_clocks = true;
  const uint64_t duration = s->run.duration_ns;
  const auto gen_index = [] {
    return *rc::gen::weightedOneOf<int>(
        {{3, rc::gen::element(0, 3)}, {1, rc::gen::inRange(0, 8)}});
  };
  const int enabled = *rc::gen::inRange(1, 3);
  for (int i = 0; i < enabled; ++i) {
    sim::EventSpec e;
    e.kind = sim::EventKind::kAuxEnable;
    e.at_ns = *rc::gen::inRange<uint64_t>(0, duration / 4);
    e.aux = gen_index();
    s->events.push_back(e);
  }
  const int more = *rc::gen::inRange(0, 4);
  for (int i = 0; i < more; ++i) {
    sim::EventSpec e;
    e.at_ns = *rc::gen::inRange<uint64_t>(0, duration);
    e.aux = gen_index();
    switch (*rc::gen::inRange(0, 4)) {
      case 0:
        e.kind = sim::EventKind::kAuxSettime;
        e.realtime = {*rc::gen::inRange<int64_t>(0, 4000000000),
                      *rc::gen::inRange<int64_t>(0, 1000000000)};
        break;
      case 1:
        e.kind = sim::EventKind::kAdjtimex;
        e.clock = kClockAux + e.aux;
        e.modes = timekeeper::kAdjFrequency;
        e.freq = *GenFreq(500ll << 16);
        break;
      case 2:
        e.kind = sim::EventKind::kAdjtimex;
        e.clock = kClockAux + e.aux;
        e.modes = timekeeper::kAdjSetoffset | timekeeper::kAdjNano;
        e.time_sec = *rc::gen::inRange<int64_t>(-5, 6);
        e.time_usec = *rc::gen::inRange<int64_t>(0, 1000000000);
        break;
      default:
        e.kind = sim::EventKind::kAuxDisable;
        break;
    }
    s->events.push_back(e);
  }
  for (sim::ReaderSpec& r : s->readers) {
    if (*rc::gen::inRange(0, 3) == 0) continue;
    r.clocks.push_back(kClockAux + gen_index());
  }
}

// A KVM guest on kvm-clock (docs/scenarios.md): the machine's counter
// becomes a 64-bit TSC, KVM's calibration of it is exact or slightly off,
// and the hypervisor rewrites vCPU 0's pvclock page every period (from
// microseconds, so that rewrites land inside calls, to milliseconds, or
// never) and at pvclock_update events of every kind (a new master clock or
// the same values, the stable bit either way, a new TSC scale); in one
// case in four the guest switches to the TSC clocksource and back.
inline void AddKvmClock(sim::Scenario* s) {
  sim::MachineSpec& m = s->machine;
  m.clocksource = "kvm-clock";
  if (m.counter_hz < 100000000) m.counter_hz = 2600000000;  // Was HPET/PM.
  m.width_bits = 64;
  m.calibrated_hz = *rc::gen::oneOf(
      rc::gen::just<uint64_t>(0),
      rc::gen::inRange<uint64_t>(m.counter_hz - m.counter_hz / 1000,
                                 m.counter_hz + m.counter_hz / 1000));
  m.pvclock_period_ns = *rc::gen::oneOf(
      rc::gen::just<uint64_t>(0), rc::gen::inRange<uint64_t>(2000, 200000),
      rc::gen::inRange<uint64_t>(200000, 5000000));
  m.kvmclock_start_ns =
      *rc::gen::oneOf(rc::gen::just<uint64_t>(400000000),
                      rc::gen::inRange<uint64_t>(1000000, uint64_t{1} << 50));
  const uint64_t duration = s->run.duration_ns;
  const int rewrites = *rc::gen::inRange(0, 5);
  for (int i = 0; i < rewrites; ++i) {
    sim::EventSpec e;
    e.kind = sim::EventKind::kPvclockUpdate;
    e.at_ns = *rc::gen::inRange<uint64_t>(0, duration);
    e.pvclock_master = *rc::gen::inRange(0, 4) != 0;
    e.pvclock_stable = *rc::gen::inRange(0, 5) != 0;
    if (e.pvclock_master && *rc::gen::inRange(0, 4) == 0) {
      const uint64_t khz = m.counter_hz / 1000;
      e.tsc_khz =
          *rc::gen::inRange<uint64_t>(khz - khz / 1000, khz + khz / 1000);
    }
    s->events.push_back(e);
  }
  if (*rc::gen::inRange(0, 4) == 0) {
    sim::EventSpec to_tsc;
    to_tsc.kind = sim::EventKind::kClocksource;
    to_tsc.at_ns = *rc::gen::inRange<uint64_t>(0, duration);
    to_tsc.clocksource = "tsc";
    sim::EventSpec back = to_tsc;
    back.at_ns = *rc::gen::inRange<uint64_t>(to_tsc.at_ns, duration);
    back.clocksource = "kvm-clock";
    s->events.push_back(to_tsc);
    s->events.push_back(back);
  }
}

struct ScenarioShape {
  bool multi_cpu = false;     // Several CPUs, skewed, with migration.
  bool events = false;        // NTP, settime, idle, pause.
  bool races = true;          // Preemption and writer stalls.
  bool odd_counters = false;  // Non-TSC clocksources, narrow widths.
  // Every load and store reordered where no barrier forbids it, aux clocks
  // on where there are events, and calls long enough to race the writer.
  bool relaxed = false;
  // A KVM guest on kvm-clock (AddKvmClock()).
  bool kvm = false;
};

inline rc::Gen<sim::Scenario> GenScenario(ScenarioShape shape) {
  return rc::gen::exec([shape] {
    sim::Scenario s;
    s.name = "generated";
    s.run.seed = *rc::gen::inRange<uint64_t>(0, 1u << 30);
    s.run.duration_ns = *rc::gen::inRange<uint64_t>(2000000, 20000000);
    s.kernel.hz = *rc::gen::element(100, 250, 300, 1000);
    s.machine.counter_hz = *rc::gen::element<uint64_t>(
        2600000000, 3000000000, 2095998000, 1000000000, 3579545000);
    s.machine.counter_start = *GenCounterStart64();
    if (shape.odd_counters) {
      s.machine.clocksource =
          *rc::gen::element<std::string>("tsc", "hpet", "acpi_pm");
      if (s.machine.clocksource != "tsc") {
        s.machine.counter_hz =
            s.machine.clocksource == "hpet" ? 14318180 : 3579545;
      }
      s.machine.width_bits = *rc::gen::element(64, 56, 40, 32, 24);
      if (s.machine.width_bits < 64) {
        s.machine.counter_start &= (1ull << s.machine.width_bits) - 1;
      }
    }
    const int cpus = shape.multi_cpu ? *rc::gen::inRange(2, 5) : 1;
    s.machine.cpus.clear();
    // Half the multi-CPU machines keep their counters synchronised, so that
    // migration is checked strictly too.
    const bool skewed = shape.multi_cpu && *rc::gen::arbitrary<bool>();
    for (int i = 0; i < cpus; ++i) {
      s.machine.cpus.push_back(*GenCpu(skewed && i > 0));
    }
    s.kernel.timekeeping_cpu = *rc::gen::inRange(0, cpus);
    s.kernel.boot_realtime = {
        *rc::gen::inRange<int64_t>(0, 4000000000),
        *rc::gen::element<int64_t>(0, 999999999, 500000000, 999000000)};
    const uint64_t tick = 1000000000ull / static_cast<uint64_t>(s.kernel.hz);
    s.timing.tick_jitter_ns = *rc::gen::inRange<uint64_t>(0, tick / 4);
    if (shape.races) {
      s.timing.preempt_ppm = *rc::gen::inRange<uint32_t>(0, 100000);
      s.timing.preempt_max_ns = *rc::gen::inRange<uint64_t>(0, 3 * tick);
      s.timing.writer_stall_ppm = *rc::gen::inRange<uint32_t>(0, 200000);
      s.timing.writer_stall_max_ns = *rc::gen::inRange<uint64_t>(0, 50000);
    }
    if (shape.events) {
      s.kernel.boot_offset = *GenBootOffset();
      const int n = *rc::gen::inRange(1, 5);
      // At most one. An index: a pointer into s.events would dangle at the
      // next push_back.
      std::optional<size_t> long_pause;
      for (int i = 0; i < n; ++i) {
        sim::EventSpec e = *GenEvent(s.run.duration_ns);
        if (e.kind == sim::EventKind::kPause && !long_pause.has_value() &&
            *rc::gen::inRange(0, 3) == 0) {
          e.duration_ns = *rc::gen::inRange<uint64_t>(900ull * 1000000000,
                                                      1500ull * 1000000000);
          s.run.duration_ns += e.duration_ns;  // Time to read after it.
          s.events.push_back(e);
          long_pause = s.events.size() - 1;
          continue;
        }
        s.events.push_back(e);
      }
      if (long_pause.has_value() && *rc::gen::inRange(0, 2) == 0) {
        // Operations deep inside the pause and right after it, when the
        // first accumulation after max_cycles is due.
        const uint64_t at = s.events[*long_pause].at_ns;
        const uint64_t end = at + s.events[*long_pause].duration_ns;
        sim::EventSpec inside = *GenEvent(s.run.duration_ns);
        inside.kind = *rc::gen::element(sim::EventKind::kAdjtimexFrequency,
                                        sim::EventKind::kSetOffset,
                                        sim::EventKind::kSetTime);
        inside.at_ns = *rc::gen::inRange<uint64_t>(at, end);
        sim::EventSpec after = *GenEvent(s.run.duration_ns);
        after.kind = *rc::gen::element(sim::EventKind::kAdjtimexFrequency,
                                       sim::EventKind::kAdjtimexTick,
                                       sim::EventKind::kSetOffset);
        after.at_ns = std::min(end + *rc::gen::inRange<uint64_t>(0, 20000),
                               s.run.duration_ns - 1);
        s.events.push_back(inside);
        s.events.push_back(after);
      }
    }
    if (shape.events) AddSettimeAndLeapEdges(&s);
    const int readers = *rc::gen::inRange(1, 4);
    s.readers.clear();
    for (int i = 0; i < readers; ++i) {
      sim::ReaderSpec r;
      r.cpu = *rc::gen::inRange(0, cpus);
      r.clocks = *rc::gen::nonEmpty(rc::gen::container<std::vector<ClockId>>(
          rc::gen::element<ClockId>(0, 1, 4, 5, 6, 7, 11, 2, 8, -1)));
      r.period_ns = *rc::gen::inRange<uint64_t>(1000, 60000);
      r.period_jitter_ns = *rc::gen::inRange<uint64_t>(0, 5000);
      if (shape.multi_cpu) {
        r.migrate_ppm = *rc::gen::inRange<uint32_t>(0, 300000);
        r.migrate_midcall_ppm = *rc::gen::inRange<uint32_t>(0, 50000);
      }
      s.readers.push_back(r);
    }
    if (*rc::gen::inRange(0, 6) == 0) {
      s.faults.unordered_counter_read = true;
      s.faults.speculation_ns = *rc::gen::inRange<uint64_t>(0, 5000);
    }
    // Last, so that the draws above stay what they were without it.
    if (shape.events && (shape.relaxed || *rc::gen::inRange(0, 3) == 0)) {
      AddAuxClocks(&s);
    }
    if (shape.relaxed) {
      // Reordering needs stores landing mid-call: frequent calls, long
      // preemptions and a writer that stalls between its stores. Every
      // load reordered, or some: a load that is always reordered never sees
      // the newest state, and a missing barrier after a begin load (the
      // version or seq) tears only when that load sees it and a later one
      // does not.
      s.faults.reorder_ppm = *rc::gen::weightedOneOf<uint32_t>(
          {{1, rc::gen::just<uint32_t>(1000000)},
           {1, rc::gen::inRange<uint32_t>(100000, 900000)}});
      s.timing.preempt_ppm = *rc::gen::inRange<uint32_t>(50000, 300000);
      s.timing.preempt_max_ns = *rc::gen::inRange<uint64_t>(100, 5000);
      s.timing.writer_stall_ppm = *rc::gen::inRange<uint32_t>(50000, 300000);
      s.timing.writer_stall_max_ns = *rc::gen::inRange<uint64_t>(1000, 20000);
      for (sim::ReaderSpec& r : s.readers) {
        r.period_ns = *rc::gen::inRange<uint64_t>(200, 3000);
      }
      // And every reader on an aux clock that is enabled, so that aux
      // records are read while they are written.
      for (const sim::EventSpec& e : s.events) {
        if (e.kind != sim::EventKind::kAuxEnable) continue;
        for (sim::ReaderSpec& r : s.readers) {
          r.clocks.push_back(kClockAux + e.aux);
        }
        break;
      }
    } else if (*rc::gen::inRange(0, 3) == 0) {
      // Relaxed ordering in one case in three: loads and stores that no
      // barrier separates reordered, in some or all of the chances.
      s.faults.reorder_ppm = *rc::gen::weightedOneOf<uint32_t>(
          {{2, rc::gen::just<uint32_t>(1000000)},
           {1, rc::gen::inRange<uint32_t>(1, 1000000)}});
    }
    // Last, so that the other shapes' draws stay what they were.
    if (shape.kvm) AddKvmClock(&s);
    return s;
  });
}

// A generated scenario for comparing one of the engine's fast paths (the
// inline load path, quiet calls) with its hooks: races from writer stalls
// and store costs; preemption off in half the cases and mid-call
// migration off for half the readers, since either turns a fast path off;
// at most 4 ms simulated (two runs per case).
inline rc::Gen<sim::Scenario> GenFastPathScenario() {
  return rc::gen::exec([] {
    sim::Scenario s = *GenScenario({.multi_cpu = *rc::gen::arbitrary<bool>(),
                                    .events = *rc::gen::arbitrary<bool>(),
                                    .races = true,
                                    .odd_counters = true});
    if (*rc::gen::arbitrary<bool>()) s.timing.preempt_ppm = 0;
    for (sim::ReaderSpec& r : s.readers) {
      if (*rc::gen::arbitrary<bool>()) r.migrate_midcall_ppm = 0;
    }
    s.timing.store_ns = *rc::gen::element<uint64_t>(0, 1, 20, 500);
    s.run.duration_ns = std::min<uint64_t>(s.run.duration_ns, 4000000);
    // A KVM guest in one case in four: the fast paths resolve kvm-clock
    // from the TSC as the hooks do.
    if (*rc::gen::inRange(0, 4) == 0) AddKvmClock(&s);
    return s;
  });
}

}  // namespace vdsolab::testing

#endif  // VDSOLAB_TESTS_SCENARIO_GENERATORS_H_
