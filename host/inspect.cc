#include "host/inspect.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/bytes.h"
#include "common/clockid.h"
#include "common/escape.h"
#include "common/math64.h"
#include "timekeeper/clocksource.h"
#include "vdso/datapage.h"

namespace vdsolab::host {
namespace {

const char* ModeName(int32_t mode) {
  switch (mode) {
    case timekeeper::kVdsoClockmodeNone:
      return "NONE";
    case timekeeper::kVdsoClockmodeTsc:
      return "TSC";
    case timekeeper::kVdsoClockmodePvclock:
      return "PVCLOCK";
    case timekeeper::kVdsoClockmodeHvclock:
      return "HVCLOCK";
    case timekeeper::kVdsoClockmodeTimens:
      return "TIMENS";
    default:
      return "unknown";
  }
}

// mult / 2^shift as a decimal with 12 fraction digits. A shift past 63 is
// no clocksource's (the page is garbled or not what the layout says).
std::string NsPerCycle(uint32_t mult, uint32_t shift) {
  if (shift > 63) return absl::StrFormat("? (shift %d is out of range)", shift);
  const unsigned __int128 scaled =
      (static_cast<unsigned __int128>(mult) * 1000000000000ull) >> shift;
  return absl::StrFormat("%d.%012d",
                         static_cast<uint64_t>(scaled / 1000000000000ull),
                         static_cast<uint64_t>(scaled % 1000000000000ull));
}

// 2^shift * 1e9 / mult, rounded: the counter frequency mult/shift implies.
uint64_t ImpliedHz(uint32_t mult, uint32_t shift) {
  if (mult == 0 || shift > 63) return 0;  // 0: none (see NsPerCycle).
  const unsigned __int128 num =
      (static_cast<unsigned __int128>(1) << shift) * 1000000000u;
  return static_cast<uint64_t>((num + mult / 2) / mult);
}

struct Base {
  int record;
  ClockId clock;
  bool shifted;
};
// The bases update_vsyscall() fills.
constexpr Base kBases[] = {
    {0, kClockRealtime, true},        {0, kClockMonotonic, true},
    {0, kClockBoottime, true},        {0, kClockTai, true},
    {0, kClockRealtimeCoarse, false}, {0, kClockMonotonicCoarse, false},
    {1, kClockMonotonicRaw, true},
};

// "348.993706400" and the sub-ns fraction of a shifted base, in 1/1000 ns.
std::pair<std::string, uint64_t> BaseTime(const std::vector<uint8_t>& p,
                                          const Base& b, uint32_t shift) {
  shift &= 63;  // As x86's shr takes a garbled count (common/math64.h).
  const uint32_t vc = vdso::ClockDataOffset(b.record);
  const uint64_t sec = Load64(p, vc + vdso::VcBasetimeSec(b.clock));
  const uint64_t nsec = Load64(p, vc + vdso::VcBasetimeNsec(b.clock));
  const uint64_t ns = b.shifted ? nsec >> shift : nsec;
  const uint64_t frac =
      b.shifted
          ? static_cast<uint64_t>(
                (static_cast<unsigned __int128>(nsec & ((1ull << shift) - 1)) *
                 1000) >>
                shift)
          : 0;
  return {absl::StrFormat("%d.%09d", sec, ns), frac};
}

uint64_t ShiftedTotal(const std::vector<uint8_t>& p, int record, ClockId clock,
                      uint32_t shift) {
  shift &= 63;  // As x86's shr takes a garbled count (common/math64.h).
  const uint32_t vc = vdso::ClockDataOffset(record);
  // sec * 1e9 << shift + nsec, modulo 2^64 (differences stay exact).
  return (Load64(p, vc + vdso::VcBasetimeSec(clock)) * kNsecPerSec << shift) +
         Load64(p, vc + vdso::VcBasetimeNsec(clock));
}

}  // namespace

std::string DescribeSnapshotText(const LiveSnapshot& snap,
                                 const KernelVersion& kernel) {
  const auto& p = snap.time_page;
  std::string o;
  absl::StrAppendFormat(&o,
                        "vvar time data page of Linux %s (x86-64, struct "
                        "vdso_time_data, %s layout)\n",
                        kernel.release,
                        TailOffset(kernel) == vdso::kTzMinuteswest
                            ? "6.17+ with aux clocks"
                            : "6.15/6.16");
  for (int record : {vdso::kCsHresCoarse, vdso::kCsRaw}) {
    const uint32_t vc = vdso::ClockDataOffset(record);
    const uint32_t mult = Load32(p, vc + vdso::kVcMult);
    const uint32_t shift = Load32(p, vc + vdso::kVcShift);
    const int32_t mode =
        static_cast<int32_t>(Load32(p, vc + vdso::kVcClockMode));
    absl::StrAppendFormat(&o,
                          "\nclock_data[%d] (%s) at offset %d\n"
                          "  seq          %d\n"
                          "  clock_mode   %d (%s)\n"
                          "  cycle_last   %d\n"
                          "  max_cycles   %d\n"
                          "  mask         %#x\n"
                          "  mult         %d\n"
                          "  shift        %d\n"
                          "  ns/cycle     %s (counter at %d Hz)\n",
                          record, record == 0 ? "CS_HRES_COARSE" : "CS_RAW", vc,
                          Load32(p, vc + vdso::kVcSeq), mode, ModeName(mode),
                          Load64(p, vc + vdso::kVcCycleLast),
                          Load64(p, vc + vdso::kVcMaxCycles),
                          Load64(p, vc + vdso::kVcMask), mult, shift,
                          NsPerCycle(mult, shift), ImpliedHz(mult, shift));
    for (const Base& b : kBases) {
      if (b.record != record) continue;
      auto [time, frac] = BaseTime(p, b, shift);
      absl::StrAppendFormat(&o, "  basetime[%-22s] %s", ClockName(b.clock),
                            time);
      if (b.shifted) {
        absl::StrAppendFormat(&o, " s + %d/1000 ns (shifted)", frac);
      } else {
        absl::StrAppendFormat(&o, " s (plain ns)");
      }
      o += "\n";
    }
  }
  const uint32_t tail = TailOffset(kernel);
  absl::StrAppendFormat(
      &o, "\ntz_minuteswest %d, tz_dsttime %d, hrtimer_res %d ns (at %d)\n",
      static_cast<int32_t>(Load32(p, tail)),
      static_cast<int32_t>(Load32(p, tail + 4)), Load32(p, tail + 8), tail);
  if (!snap.pvclock_page.empty()) {
    const auto& v = snap.pvclock_page;
    absl::StrAppendFormat(
        &o,
        "\npvclock page (vCPU 0's pvclock_vcpu_time_info)\n"
        "  version            %d\n"
        "  tsc_timestamp      %d\n"
        "  system_time        %d ns\n"
        "  tsc_to_system_mul  %d\n"
        "  tsc_shift          %d\n"
        "  flags              %#x%s\n",
        Load32(v, vdso::kPvtiVersion), Load64(v, vdso::kPvtiTscTimestamp),
        Load64(v, vdso::kPvtiSystemTime), Load32(v, vdso::kPvtiMul),
        static_cast<int8_t>(v[vdso::kPvtiShift]), v[vdso::kPvtiFlags],
        (v[vdso::kPvtiFlags] & vdso::kPvclockTscStableBit) != 0
            ? " (TSC stable)"
            : "");
  }
  return o;
}

std::string DescribeSnapshotJson(const LiveSnapshot& snap,
                                 const KernelVersion& kernel) {
  const auto& p = snap.time_page;
  std::vector<std::string> records;
  for (int record : {vdso::kCsHresCoarse, vdso::kCsRaw}) {
    const uint32_t vc = vdso::ClockDataOffset(record);
    const uint32_t mult = Load32(p, vc + vdso::kVcMult);
    const uint32_t shift = Load32(p, vc + vdso::kVcShift);
    const int32_t mode =
        static_cast<int32_t>(Load32(p, vc + vdso::kVcClockMode));
    std::vector<std::string> bases;
    for (const Base& b : kBases) {
      if (b.record != record) continue;
      auto [time, frac] = BaseTime(p, b, shift);
      bases.push_back(absl::StrFormat(
          "\"%s\": {\"sec\": %d, \"nsec_raw\": %d, \"time\": \"%s\", "
          "\"sub_ns_thousandths\": %d, \"shifted\": %s}",
          ClockName(b.clock), Load64(p, vc + vdso::VcBasetimeSec(b.clock)),
          Load64(p, vc + vdso::VcBasetimeNsec(b.clock)), time, frac,
          b.shifted ? "true" : "false"));
    }
    records.push_back(absl::StrFormat(
        "{\"index\": %d, \"offset\": %d, \"seq\": %d, \"clock_mode\": %d, "
        "\"clock_mode_name\": \"%s\", \"cycle_last\": %d, \"max_cycles\": %d, "
        "\"mask\": %d, \"mult\": %d, \"shift\": %d, \"ns_per_cycle\": \"%s\", "
        "\"implied_hz\": %d, \"basetime\": {%s}}",
        record, vc, Load32(p, vc + vdso::kVcSeq), mode, ModeName(mode),
        Load64(p, vc + vdso::kVcCycleLast), Load64(p, vc + vdso::kVcMaxCycles),
        Load64(p, vc + vdso::kVcMask), mult, shift, NsPerCycle(mult, shift),
        ImpliedHz(mult, shift), absl::StrJoin(bases, ", ")));
  }
  const uint32_t tail = TailOffset(kernel);
  std::string pv = "null";
  if (!snap.pvclock_page.empty()) {
    const auto& v = snap.pvclock_page;
    pv = absl::StrFormat(
        "{\"version\": %d, \"tsc_timestamp\": %d, \"system_time\": %d, "
        "\"tsc_to_system_mul\": %d, \"tsc_shift\": %d, \"flags\": %d}",
        Load32(v, vdso::kPvtiVersion), Load64(v, vdso::kPvtiTscTimestamp),
        Load64(v, vdso::kPvtiSystemTime), Load32(v, vdso::kPvtiMul),
        static_cast<int8_t>(v[vdso::kPvtiShift]), v[vdso::kPvtiFlags]);
  }
  return absl::StrFormat(
      "{\"kernel\": %s, \"layout\": \"%s\", \"clock_data\": [%s], "
      "\"tz_minuteswest\": %d, \"tz_dsttime\": %d, \"hrtimer_res\": %d, "
      "\"tail_offset\": %d, \"pvclock\": %s}",
      JsonQuote(kernel.release),
      tail == vdso::kTzMinuteswest ? "6.17+" : "6.15",
      absl::StrJoin(records, ", "), static_cast<int32_t>(Load32(p, tail)),
      static_cast<int32_t>(Load32(p, tail + 4)), Load32(p, tail + 8), tail, pv);
}

UpdateAnalysis AnalyzeUpdates(const std::vector<LiveSnapshot>& samples,
                              int hz_hint) {
  UpdateAnalysis a;
  a.samples = static_cast<int>(samples.size());
  if (samples.empty()) return a;
  const uint32_t hres = vdso::ClockDataOffset(vdso::kCsHresCoarse);
  const uint32_t raw = vdso::ClockDataOffset(vdso::kCsRaw);
  a.raw_mult = Load32(samples[0].time_page, raw + vdso::kVcMult);
  a.shift = Load32(samples[0].time_page, raw + vdso::kVcShift);
  // Distinct page states, in order.
  std::vector<const LiveSnapshot*> states;
  for (const LiveSnapshot& s : samples) {
    if (Load32(s.time_page, hres + vdso::kVcMult) != a.raw_mult) {
      a.ntp_steering = true;
    }
    if (states.empty() ||
        Load32(s.time_page, hres) != Load32(states.back()->time_page, hres)) {
      states.push_back(&s);
    }
  }
  a.updates_seen = static_cast<int>(states.size()) - 1;
  std::vector<uint64_t> steps;
  for (size_t i = 1; i < states.size(); ++i) {
    const auto& x = states[i - 1]->time_page;
    const auto& y = states[i]->time_page;
    if (Load32(x, hres + vdso::kVcMult) != Load32(y, hres + vdso::kVcMult)) {
      a.mult_moved = true;
    }
    const uint64_t step = Load64(y, hres + vdso::kVcCycleLast) -
                          Load64(x, hres + vdso::kVcCycleLast);
    if (step != 0) steps.push_back(step);
  }
  // No steps, or no clocksource's shift (a garbled page): nothing to infer.
  if (steps.empty() || a.shift > 63) return a;
  a.min_step_cycles = *std::min_element(steps.begin(), steps.end());
  a.gcd_step_cycles = 0;
  for (uint64_t s : steps) a.gcd_step_cycles = std::gcd(a.gcd_step_cycles, s);
  std::vector<uint64_t> periods;
  for (uint64_t s : steps) {
    periods.push_back(static_cast<uint64_t>(
        (static_cast<unsigned __int128>(s) * a.raw_mult) >> a.shift));
  }
  std::sort(periods.begin(), periods.end());
  a.median_period_ns = periods[periods.size() / 2];
  // The shortest step is one tick, or a few (NO_HZ): the kernel's own HZ
  // must divide it; without a hint, the HZ whose tick it is.
  const uint64_t min_ns = static_cast<uint64_t>(
      (static_cast<unsigned __int128>(a.min_step_cycles) * a.raw_mult) >>
      a.shift);
  const auto fits = [&](int hz, bool one_tick) {
    const uint64_t tick = kNsecPerSec / static_cast<uint64_t>(hz);
    const uint64_t k = (min_ns + tick / 2) / tick;
    if (k == 0 || (one_tick && k != 1)) return false;
    const uint64_t diff =
        min_ns > k * tick ? min_ns - k * tick : k * tick - min_ns;
    return diff < tick / 100;
  };
  // The kernel's own HZ (from clock_getres) is authoritative: steps that do
  // not fit it are reported as such, not explained away by another HZ.
  if (hz_hint > 0) {
    a.hz = hz_hint;
  } else {
    for (bool one_tick : {true, false}) {
      for (int hz : {100, 250, 300, 1000}) {
        if (a.hz == 0 && fits(hz, one_tick)) a.hz = hz;
      }
    }
  }
  if (a.hz == 0) return a;
  // tk_setup_internals(): cycles and shifted raw ns per NTP interval.
  const uint64_t ntpinterval = (kNsecPerSec / static_cast<uint64_t>(a.hz))
                               << a.shift;
  uint64_t ci = (ntpinterval + a.raw_mult / 2) / a.raw_mult;
  if (ci == 0) ci = 1;
  a.predicted_cycle_interval = ci;
  a.predicted_raw_interval = ci * a.raw_mult;
  for (size_t i = 1; i < states.size(); ++i) {
    const auto& x = states[i - 1]->time_page;
    const auto& y = states[i]->time_page;
    const uint64_t step = Load64(y, hres + vdso::kVcCycleLast) -
                          Load64(x, hres + vdso::kVcCycleLast);
    if (Load32(y, raw + vdso::kVcMult) != a.raw_mult ||
        Load32(y, raw + vdso::kVcShift) != a.shift ||
        Load32(x, raw + vdso::kVcMult) != a.raw_mult ||
        Load32(x, raw + vdso::kVcShift) != a.shift) {
      // change_clocksource() rescales the raw base: no identity to check.
      ++a.clocksource_changes;
      continue;
    }
    if (step == 0 || step % ci != 0) {
      // A live host's NTP daemon steps or slews the clock now and then:
      // forward_now() moves cycle_last to "now", off the tick grid, and
      // advances RAW by exactly step * mult, as accumulation does.
      ++a.off_tick_updates;
      if (ShiftedTotal(y, 1, kClockMonotonicRaw, a.shift) -
              ShiftedTotal(x, 1, kClockMonotonicRaw, a.shift) ==
          step * a.raw_mult) {
        ++a.off_tick_raw_exact;
      }
      continue;
    }
    ++a.steps_whole_intervals;
    const uint64_t k = step / ci;
    if (ShiftedTotal(y, 1, kClockMonotonicRaw, a.shift) -
            ShiftedTotal(x, 1, kClockMonotonicRaw, a.shift) ==
        k * a.predicted_raw_interval) {
      ++a.raw_increments_exact;
    }
    const uint32_t mult = Load32(x, hres + vdso::kVcMult);
    if (mult == Load32(y, hres + vdso::kVcMult)) {
      ++a.mono_pairs_same_mult;
      if (ShiftedTotal(y, 0, kClockMonotonic, a.shift) -
              ShiftedTotal(x, 0, kClockMonotonic, a.shift) ==
          k * ci * mult) {
        ++a.mono_increments_exact;
      }
    }
  }
  return a;
}

bool PredictionHolds(const UpdateAnalysis& a) {
  // Off-tick updates are the exception: if they are not a minority, the
  // predicted cycle_interval (or HZ) is what is wrong.
  return a.hz != 0 && a.steps_whole_intervals > 0 &&
         a.off_tick_updates < a.steps_whole_intervals &&
         a.steps_whole_intervals + a.off_tick_updates + a.clocksource_changes ==
             a.updates_seen &&
         a.raw_increments_exact == a.steps_whole_intervals &&
         a.mono_increments_exact == a.mono_pairs_same_mult &&
         a.off_tick_raw_exact == a.off_tick_updates;
}

std::string FormatUpdateAnalysis(const UpdateAnalysis& a) {
  std::string o = absl::StrFormat("\n%d samples, %d updates seen\n", a.samples,
                                  a.updates_seen);
  if (a.updates_seen == 0) {
    return o + "no update seen: sample for longer (--samples)\n";
  }
  absl::StrAppendFormat(
      &o, "cycle_last steps: smallest %d, gcd %d; median update period %d ns\n",
      a.min_step_cycles, a.gcd_step_cycles, a.median_period_ns);
  if (a.hz == 0) {
    return o + "HZ: no CONFIG_HZ value fits the smallest step\n";
  }
  absl::StrAppendFormat(
      &o,
      "HZ %d; tk_setup_internals(mult %d, shift %d, HZ %d) predicts "
      "cycle_interval %d, raw_interval %d (shifted ns)\n"
      "steps that are whole cycle_intervals: %d of %d\n"
      "MONOTONIC_RAW advanced exactly k * raw_interval: %d of %d\n"
      "MONOTONIC advanced exactly k * cycle_interval * mult (same mult): %d "
      "of %d\n"
      "off-tick updates (timekeeping_forward_now: settime, adjtimex): %d, "
      "MONOTONIC_RAW advanced exactly step * mult: %d of %d\n"
      "clocksource changes (not compared): %d\n"
      "NTP steering: %s; mult moved during sampling: %s\n",
      a.hz, a.raw_mult, a.shift, a.hz, a.predicted_cycle_interval,
      a.predicted_raw_interval, a.steps_whole_intervals, a.updates_seen,
      a.raw_increments_exact, a.steps_whole_intervals, a.mono_increments_exact,
      a.mono_pairs_same_mult, a.off_tick_updates, a.off_tick_raw_exact,
      a.off_tick_updates, a.clocksource_changes,
      a.ntp_steering ? "yes (hres mult differs from raw mult)" : "no",
      a.mult_moved ? "yes" : "no");
  absl::StrAppendFormat(
      &o, "tk_setup_internals prediction: %s\n",
      PredictionHolds(a) ? "holds" : "DOES NOT HOLD (see above)");
  return o;
}

std::string FormatUpdateAnalysisJson(const UpdateAnalysis& a) {
  return absl::StrFormat(
      "{\"samples\": %d, \"updates_seen\": %d, \"min_step_cycles\": %d, "
      "\"gcd_step_cycles\": %d, \"median_period_ns\": %d, \"hz\": %d, "
      "\"predicted_cycle_interval\": %d, \"predicted_raw_interval\": %d, "
      "\"steps_whole_intervals\": %d, \"raw_increments_exact\": %d, "
      "\"mono_increments_exact\": %d, \"mono_pairs_same_mult\": %d, "
      "\"off_tick_updates\": %d, \"off_tick_raw_exact\": %d, "
      "\"clocksource_changes\": %d, "
      "\"ntp_steering\": %s, \"mult_moved\": %s}",
      a.samples, a.updates_seen, a.min_step_cycles, a.gcd_step_cycles,
      a.median_period_ns, a.hz, a.predicted_cycle_interval,
      a.predicted_raw_interval, a.steps_whole_intervals, a.raw_increments_exact,
      a.mono_increments_exact, a.mono_pairs_same_mult, a.off_tick_updates,
      a.off_tick_raw_exact, a.clocksource_changes,
      a.ntp_steering ? "true" : "false", a.mult_moved ? "true" : "false");
}

}  // namespace vdsolab::host
