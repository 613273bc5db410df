// timekeeping_inject_sleeptime64() (the RTC driver's sleep injection after
// a resume that found no sleep time; timekeeping_resume() injects through
// the same __timekeeping_inject_sleeptime()) against its definition, with
// the sleep drawn at the edges of what the kernel takes:
//
// - __timekeeping_inject_sleeptime() takes a delta only if
//   timespec64_valid_strict() holds (include/linux/time64.h: tv_sec >= 0,
//   0 <= tv_nsec < NSEC_PER_SEC, and (u64)tv_sec < KTIME_SEC_MAX, so that
//   it converts to ktime_t); otherwise it only warns.
// - A delta taken moves REALTIME forward by exactly the delta at the
//   counter of the injection (tk_xtime_add()), BOOTTIME by the same
//   (tk_update_sleep_time(); checked where the delta converts to ktime_t
//   without saturating the boot offset), and leaves MONOTONIC and
//   MONOTONIC_RAW where they were (tk_set_wall_to_mono() takes the delta
//   back out). A delta refused moves nothing.
//
// And timekeeping_resume() as a whole: whatever it measured (the counter
// of a clocksource that runs in suspend, or the persistent clock's
// difference from the suspend time; no persistent clock, or one that did
// not advance, measures nothing), it moves REALTIME, BOOTTIME and TAI by
// exactly the sleep it returns and MONOTONIC and RAW not at all, from
// their readings at the suspend counter to those at the resume counter;
// and right after it the coarse clocks read what REALTIME and MONOTONIC
// read at the resume counter (timekeeping_forward_now() at suspend and
// tk_xtime_add() of a sleep refresh them; the resume counter is the new
// cycle_last).
//
// The expectation is computed here from those definitions, not from the
// model's helpers.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/timespec.h"
#include "tests/generators.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeping.h"

namespace vdsolab {
namespace {

constexpr int64_t kNsec = 1000000000;

// tv_sec: small, ordinary sleeps, and the edges of the valid range (0 and
// KTIME_SEC_MAX) with a few seconds either side.
rc::Gen<int64_t> GenSleepSec() {
  return rc::gen::oneOf(
      rc::gen::inRange<int64_t>(-3, 4), rc::gen::inRange<int64_t>(0, 1 << 20),
      rc::gen::map(rc::gen::inRange<int64_t>(-3, 4),
                   [](int64_t d) { return kKtimeSecMax + d; }),
      rc::gen::element<int64_t>(INT64_MIN, INT64_MAX));
}

// tv_nsec: inside [0, NSEC_PER_SEC) and just outside it.
rc::Gen<int64_t> GenSleepNsec() {
  return rc::gen::oneOf(rc::gen::element<int64_t>(-1, 0, 1, kNsec - 1, kNsec),
                        rc::gen::inRange<int64_t>(0, kNsec));
}

ClockResult Read(const timekeeper::Timekeeping& tk, ClockId clock,
                 uint64_t counter) {
  timekeeper::SyscallContext ctx;
  ctx.cycles = counter;
  return timekeeper::SysClockGettime(tk, clock, ctx);
}

// A timespec in ns, exactly.
__int128 Ns(const Timespec64& ts) {
  return static_cast<__int128>(ts.tv_sec) * kNsec + ts.tv_nsec;
}

RC_GTEST_PROP(SleepInjection, TakesExactlyTheStrictlyValidDeltas, ()) {
  absl::StatusOr<timekeeper::Clocksource> tsc =
      timekeeper::MakeTscClocksource(*testing::GenTscKhz());
  RC_ASSERT(tsc.ok());
  timekeeper::Timekeeping tk(*tsc, *testing::GenHz(), nullptr);
  const uint64_t c0 = *testing::GenCounterStart() & tsc->mask;
  tk.Init(c0,
          Timespec64{*rc::gen::inRange<int64_t>(0, 1ll << 34),
                     *rc::gen::inRange<int64_t>(0, kNsec)},
          Timespec64{*rc::gen::inRange<int64_t>(0, 100000),
                     *rc::gen::inRange<int64_t>(0, kNsec)});
  const uint64_t ci = tk.timekeeper().cycle_interval;
  uint64_t now = c0;
  const int ticks = *rc::gen::inRange(0, 5);
  for (int i = 0; i < ticks; ++i) {
    now = (now + ci + *rc::gen::inRange<uint64_t>(0, ci)) & tsc->mask;
    tk.Advance(timekeeper::AdvanceMode::kTick, now);
  }
  now = (now + *rc::gen::inRange<uint64_t>(0, ci)) & tsc->mask;

  const Timespec64 delta{*GenSleepSec().as("sleep tv_sec"),
                         *GenSleepNsec().as("sleep tv_nsec")};
  const bool valid =
      delta.tv_sec >= 0 && delta.tv_nsec >= 0 && delta.tv_nsec < kNsec &&
      static_cast<uint64_t>(delta.tv_sec) < static_cast<uint64_t>(kKtimeSecMax);
  const ClockId clocks[] = {kClockRealtime, kClockMonotonic, kClockBoottime,
                            kClockMonotonicRaw};
  ClockResult before[4];
  for (int i = 0; i < 4; ++i) {
    before[i] = Read(tk, clocks[i], now);
    RC_ASSERT(before[i].ret == 0);
  }
  tk.InjectSleeptime64(delta, now);
  ClockResult after[4];
  for (int i = 0; i < 4; ++i) {
    after[i] = Read(tk, clocks[i], now);
    RC_ASSERT(after[i].ret == 0);
  }

  const __int128 moved = valid ? Ns(delta) : 0;
  // BOOTTIME goes through ktime_t (s64 ns): compared while the boot offset
  // plus the sleep stays below KTIME_MAX.
  const bool boot_in_range =
      Ns(after[2].ts) < static_cast<__int128>(kKtimeMax) &&
      Ns(delta) < kKtimeMax / 2;
  RC_CLASSIFY(valid, "taken");
  RC_CLASSIFY(!valid, "refused");
  RC_CLASSIFY(
      delta.tv_sec >= kKtimeSecMax - 3 && delta.tv_sec <= kKtimeSecMax + 3,
      "tv_sec at KTIME_SEC_MAX");
  RC_CLASSIFY(valid && !boot_in_range,
              "BOOTTIME past ktime range: not compared");
  for (int i = 0; i < 4; ++i) {
    const bool moves =
        clocks[i] == kClockRealtime || clocks[i] == kClockBoottime;
    if (clocks[i] == kClockBoottime && valid && !boot_in_range) continue;
    const __int128 want = Ns(before[i].ts) + (moves ? moved : 0);
    if (Ns(after[i].ts) != want) {
      RC_FAIL(absl::StrFormat(
          "%s: %s before a sleep of {%d, %d} (%s), %s after, counter %#x",
          ClockName(clocks[i]), FormatClockResult(before[i]), delta.tv_sec,
          delta.tv_nsec, valid ? "valid: taken" : "refused",
          FormatClockResult(after[i]), now));
    }
  }
}

RC_GTEST_PROP(SleepInjection, ResumeMovesTheWallClocksByTheSleepItReturns, ()) {
  absl::StatusOr<timekeeper::Clocksource> tsc_or =
      timekeeper::MakeTscClocksource(*testing::GenTscKhz());
  RC_ASSERT(tsc_or.ok());
  timekeeper::Clocksource tsc = *tsc_or;
  tsc.suspend_nonstop = *rc::gen::arbitrary<bool>().as("nonstop in suspend");
  timekeeper::Timekeeping tk(tsc, *testing::GenHz(), nullptr);
  const uint64_t c0 = *testing::GenCounterStart() & tsc.mask;
  const int64_t wall_sec = *rc::gen::inRange<int64_t>(1000000, 1ll << 32);
  tk.Init(c0, Timespec64{wall_sec, *rc::gen::inRange<int64_t>(0, kNsec)},
          Timespec64{*rc::gen::inRange<int64_t>(0, 100000), 0});
  const uint64_t ci = tk.timekeeper().cycle_interval;
  uint64_t now = c0;
  const int ticks = *rc::gen::inRange(0, 5);
  for (int i = 0; i < ticks; ++i) {
    now = (now + ci) & tsc.mask;
    tk.Advance(timekeeper::AdvanceMode::kTick, now);
  }
  // Suspend between ticks, so that the fine clocks are past the coarse.
  now = (now + *rc::gen::inRange<uint64_t>(0, ci)) & tsc.mask;

  // The persistent clock: none ({0, 0}), or whole seconds some way off
  // the system clock (so that the suspend time is what it read).
  const bool rtc = *rc::gen::arbitrary<bool>().as("persistent clock");
  const Timespec64 at_suspend =
      rtc ? Timespec64{wall_sec + *rc::gen::element<int64_t>(-100, -2, 2, 3600),
                       0}
          : Timespec64{};
  const ClockId clocks[] = {
      kClockRealtime,     kClockMonotonic,      kClockBoottime,       kClockTai,
      kClockMonotonicRaw, kClockRealtimeCoarse, kClockMonotonicCoarse};
  constexpr int kClocks = 7;
  ClockResult before[kClocks];
  for (int i = 0; i < kClocks; ++i) {
    before[i] = Read(tk, clocks[i], now);
    RC_ASSERT(before[i].ret == 0);
  }
  tk.Suspend(now, at_suspend);
  // The counter at resume: the same (no time), or later.
  const uint64_t resume_at =
      (now + *rc::gen::element<uint64_t>(0, 1, ci, uint64_t{1} << 36)) &
      tsc.mask;
  const int64_t slept_sec = *rc::gen::element<int64_t>(0, 0, 1, 100);
  const Timespec64 at_resume =
      rtc ? Timespec64{at_suspend.tv_sec + slept_sec, 0} : Timespec64{};
  const Timespec64 slept = tk.Resume({resume_at, at_resume});
  const bool none = slept.tv_sec == 0 && slept.tv_nsec == 0;
  RC_CLASSIFY(none, "no sleep measured");
  RC_CLASSIFY(!none && tsc.suspend_nonstop, "sleep from the counter");
  RC_CLASSIFY(!none && !tsc.suspend_nonstop, "sleep from the persistent clock");
  for (int i = 0; i < kClocks; ++i) {
    const ClockResult after = Read(tk, clocks[i], resume_at);
    RC_ASSERT(after.ret == 0);
    const bool wall = clocks[i] == kClockRealtime ||
                      clocks[i] == kClockBoottime || clocks[i] == kClockTai;
    const bool coarse =
        clocks[i] == kClockRealtimeCoarse || clocks[i] == kClockMonotonicCoarse;
    // A coarse clock: its fine clock after the resume (REALTIME's or
    // MONOTONIC's, read in the iterations before).
    const __int128 want =
        coarse ? Ns(Read(tk,
                         clocks[i] == kClockRealtimeCoarse ? kClockRealtime
                                                           : kClockMonotonic,
                         resume_at)
                        .ts)
               : Ns(before[i].ts) + (wall ? Ns(slept) : 0);
    if (Ns(after.ts) != want) {
      RC_FAIL(absl::StrFormat(
          "%s: %s at suspend (counter %#x), %s after a resume (counter %#x) "
          "that returned a sleep of {%d, %d}; want %d ns",
          ClockName(clocks[i]), FormatClockResult(before[i]), now,
          FormatClockResult(after), resume_at, slept.tv_sec, slept.tv_nsec,
          static_cast<int64_t>(want)));
    }
  }
}

}  // namespace
}  // namespace vdsolab
