// tools/testing/selftests/timers/leap-a-day.c in simulated time (-i 4: an
// insertion, a deletion, and again): the clock set 10 s before UTC
// midnight, the leap flag set, an absolute CLOCK_REALTIME timer at
// midnight, adjtimex() polled every 0.5 s; the timer must not expire early
// and must see TIME_WAIT, the leap must leave TIME_WAIT behind, and the
// final hrtimer check must not wake early.

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kselftest/sim_host.h"
#include "timekeeper/timex.h"

namespace vdsolab::kselftest {
namespace {

namespace tk = timekeeper;

const char* StateName(int state) {
  switch (state) {
    case tk::kTimeOk:
      return "TIME_OK";
    case tk::kTimeIns:
      return "TIME_INS";
    case tk::kTimeDel:
      return "TIME_DEL";
    case tk::kTimeOop:
      return "TIME_OOP";
    case tk::kTimeWait:
      return "TIME_WAIT";
    default:
      return "TIME_BAD";
  }
}

int ClearTimeState(SimHost& host) {
  tk::Timex tx;
  tx.modes = tk::kAdjStatus;
  tx.status = tk::kStaPll;
  host.Adjtimex(&tx);
  tx = tk::Timex{};
  tx.modes = tk::kAdjMaxerror;
  tx.maxerror = 0;
  host.Adjtimex(&tx);
  tx = tk::Timex{};
  tx.modes = tk::kAdjStatus;
  tx.status = 0;
  return host.Adjtimex(&tx);
}

struct LeapRun {
  std::vector<std::string> errors;
  std::vector<int> states;  // adjtimex() every 0.5 s.
};

// One iteration of leap-a-day's main loop.
LeapRun Iterate(SimHost& host, bool insert) {
  LeapRun out;
  const int64_t now = host.Gettime(kClockRealtime).ts.tv_sec;
  const int64_t next_leap = now + 86400 - now % 86400;
  host.Settimeofday({next_leap - 10, 0});
  ClearTimeState(host);
  tk::Timex tx;
  tx.modes = tk::kAdjStatus;
  tx.status = insert ? tk::kStaIns : tk::kStaDel;
  if (host.Adjtimex(&tx) < 0) out.errors.push_back("cannot set STA_INS/DEL");
  tx = tk::Timex{};
  host.Adjtimex(&tx);
  if (tx.status != tk::kStaIns && tx.status != tk::kStaDel) {
    out.errors.push_back("STA_INS/STA_DEL not set");
  }
  // Wake up 3 s before the leap, then poll adjtimex() every 0.5 s until
  // 2 s after it; the timer at midnight fires in between.
  host.SleepUntilRealtimeTimer({next_leap - 3, 0}, 20000000000ull);
  bool fired = false;
  int64_t t = host.Gettime(kClockRealtime).ts.tv_sec;
  while (t < next_leap + 2) {
    tx = tk::Timex{};
    out.states.push_back(host.Adjtimex(&tx));
    t = tx.time.tv_sec;
    const uint64_t next_poll = host.now_ns() + 500000000;
    // The timer may fire before the next poll: run to it if it does.
    if (!fired && host.SleepUntilRealtimeTimer({next_leap, 0}, 500000000)) {
      fired = true;
      // sigalarm(): adjtimex() from the timer's handler.
      tk::Timex in_handler;
      const int ret = host.Adjtimex(&in_handler);
      if (in_handler.time.tv_sec < next_leap) {
        out.errors.push_back("Early timer expiration! adjtimex time " +
                             std::to_string(in_handler.time.tv_sec) + " < " +
                             std::to_string(next_leap));
      }
      if (ret != tk::kTimeWait) {
        out.errors.push_back(std::string("Timer seeing incorrect NTP state ") +
                             StateName(ret) + " (should be TIME_WAIT)");
      }
    }
    if (host.now_ns() < next_poll) host.Sleep(next_poll - host.now_ns());
  }
  if (!fired) out.errors.push_back("the timer was never armed");
  // test_hrtimer_failure(): an absolute REALTIME sleep of 0.5 s.
  const Timespec64 start = host.Gettime(kClockRealtime).ts;
  const Timespec64 target = Timespec64Add(start, {0, 500000000});
  host.SleepUntilRealtimeTimer(target, 5000000000ull);
  const Timespec64 woke = host.Gettime(kClockRealtime).ts;
  if (TimespecLess(woke, target)) {
    out.errors.push_back("hrtimer early expiration failure observed");
  }
  return out;
}

std::vector<std::string> LeapADay(const SimHostOptions& options, int rounds) {
  SimHost host(options);
  std::vector<std::string> errors;
  bool insert = true;
  for (int i = 0; i < rounds; ++i) {
    const LeapRun r = Iterate(host, insert);
    std::string states;
    for (int s : r.states) states += std::string(" ") + StateName(s);
    std::printf("%s:%s%s\n", insert ? "insert" : "delete", states.c_str(),
                r.errors.empty() ? "" : "  [errors]");
    errors.insert(errors.end(), r.errors.begin(), r.errors.end());
    insert = !insert;
  }
  ClearTimeState(host);
  return errors;
}

TEST(LeapADay, InsertAndDeleteWithoutEarlyExpiry) {
  const std::vector<std::string> errors = LeapADay(SimHostOptions{}, 4);
  // Each insertion ran TIME_INS -> TIME_OOP -> TIME_WAIT, each deletion
  // TIME_DEL -> TIME_WAIT: the output above shows the states polled.
  for (const std::string& e : errors) std::printf("  %s\n", e.c_str());
  EXPECT_TRUE(errors.empty());
}

// Before 4.2 ("time: Prevent early expiry of hrtimers[CLOCK_REALTIME] at
// the leap second edge"), the hrtimer code did not apply the insertion's
// offset before the tick did: the test's timer fired in 23:59:60.
TEST(LeapADay, WithoutTheHrtimerLeapAdjustmentTheTimerExpiresEarly) {
  SimHostOptions options;
  options.hrtimer_leap_adjust = false;
  const std::vector<std::string> errors = LeapADay(options, 1);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].find("Early timer expiration"), std::string::npos);
}

}  // namespace
}  // namespace vdsolab::kselftest
