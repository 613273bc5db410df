// An inserted leap second as adjtimex() reports it, against
// include/uapi/linux/timex.h's states, read at counters all around it.
// (Its own target: each case ticks through about three simulated seconds,
// so it runs fewer cases than the validation properties.)

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/timespec.h"
#include "tests/generators.h"
#include "tests/timekeeper_reads.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/timex.h"

namespace vdsolab {
namespace {

namespace tk = timekeeper;

constexpr int64_t kNsec = 1000000000;

// An inserted leap second as adjtimex() reports it, read at counters
// around it (ticks between, every read before the tick that follows it
// included): TIME_OK, then TIME_INS (armed at the tick that crosses
// 23:59:59), until MONOTONIC reaches the instant REALTIME first reads
// midnight, TIME_OOP for the second after (the leap second,
// 23:59:60), TIME_WAIT from then on (include/uapi/linux/timex.h); and
// the time it shows plus its TAI offset is always CLOCK_TAI's second at
// that counter (23:59:60 shows as 23:59:59 with the TAI offset already
// one more). MONOTONIC does not step, so it says where the read is.
RC_GTEST_PROP(LeapSecond, AdjtimexReportsAnInsertedOneAsItHappens, ()) {
  absl::StatusOr<tk::Clocksource> tsc =
      tk::MakeTscClocksource(*testing::GenTscKhz());
  RC_ASSERT(tsc.ok());
  tk::Timekeeping k(*tsc, *testing::GenHz(), nullptr);
  const uint64_t c0 = *testing::GenCounterStart() & tsc->mask;
  // Any UTC midnight up to 2149 (ktime_t holds REALTIME to 2262).
  const int64_t midnight = *rc::gen::inRange<int64_t>(1, 1 << 16) * 86400;
  k.Init(c0, Timespec64{midnight - 2, *rc::gen::inRange<int64_t>(0, kNsec)},
         Timespec64{*rc::gen::inRange<int64_t>(0, 100000), 0});
  tk::Timex arm;
  // Synchronised (maxerror 0: second_overflow() sets STA_UNSYNC, and
  // adjtimex() answers TIME_ERROR, once it passes NTP_PHASE_LIMIT), with
  // a leap second inserted at the coming midnight.
  arm.modes = tk::kAdjStatus | tk::kAdjMaxerror;
  arm.status = tk::kStaIns;
  arm.maxerror = 0;
  RC_ASSERT(k.Adjtimex(&arm, c0) >= 0);
  // MONOTONIC when REALTIME first reads midnight.
  const __int128 leap_at =
      static_cast<__int128>(midnight) * kNsec - testing::RealMinusMono(k, c0);
  auto read = [&k](ClockId clock, uint64_t counter) {
    tk::SyscallContext ctx;
    ctx.cycles = counter;
    const ClockResult r = tk::SysClockGettime(k, clock, ctx);
    RC_ASSERT(r.ret == 0);
    return r.ts;
  };
  const uint64_t ci = k.timekeeper().cycle_interval;
  // Counters as c0 + elapsed (the counter may wrap; elapsed does not).
  uint64_t next_tick = ci;
  uint64_t elapsed = 0;
  int reads = 0;
  bool saw[3] = {false, false, false};
  for (;;) {
    // Full-size draws: a step of 1 to 3 ticks whatever the case's size.
    elapsed += *rc::gen::resize(rc::kNominalSize,
                                rc::gen::inRange<uint64_t>(1, 3 * ci));
    while (next_tick <= elapsed) {
      k.Advance(tk::AdvanceMode::kTick, (c0 + next_tick) & tsc->mask);
      next_tick += ci;
    }
    const uint64_t at = (c0 + elapsed) & tsc->mask;
    const Timespec64 mono = read(kClockMonotonic, at);
    const __int128 m =
        static_cast<__int128>(mono.tv_sec) * kNsec + mono.tv_nsec;
    if (m >= leap_at + 2 * kNsec) break;
    RC_ASSERT(reads < 100000);  // MONOTONIC gets there.
    tk::Timex txc;
    const int ret = k.Adjtimex(&txc, at);
    ++reads;
    const bool before = ret == tk::kTimeOk || ret == tk::kTimeIns;
    const int want = m < leap_at           ? (before ? ret : tk::kTimeIns)
                     : m < leap_at + kNsec ? tk::kTimeOop
                                           : tk::kTimeWait;
    saw[m < leap_at ? 0 : m < leap_at + kNsec ? 1 : 2] = true;
    const Timespec64 tai = read(kClockTai, at);
    if (ret != want || txc.time.tv_sec + txc.tai != tai.tv_sec) {
      RC_FAIL(absl::StrFormat(
          "adjtimex() at MONOTONIC %d ns (%d ns from the leap second's "
          "start) returned %d with time %d s and tai %d; want %d, and "
          "CLOCK_TAI reads %d s",
          static_cast<int64_t>(m), static_cast<int64_t>(m - leap_at), ret,
          txc.time.tv_sec, txc.tai, want, tai.tv_sec));
    }
  }
  RC_CLASSIFY(saw[0] && saw[1] && saw[2], "read before, in and after");
  RC_TAG(reads < 100 ? "< 100 reads" : "100 reads or more");
}

}  // namespace
}  // namespace vdsolab
