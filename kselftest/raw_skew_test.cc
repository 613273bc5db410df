// tools/testing/selftests/timers/raw_skew.c in simulated time: the
// frequency offset between CLOCK_MONOTONIC and CLOCK_MONOTONIC_RAW measured
// over 120 s must match what adjtimex() reports, within 1000 ppb.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "kselftest/sim_host.h"
#include "timekeeper/timex.h"

namespace vdsolab::kselftest {
namespace {

int64_t Ns(const Timespec64& t) { return t.tv_sec * 1000000000 + t.tv_nsec; }

// get_monotonic_and_raw(): the tightest of three MONOTONIC, RAW, MONOTONIC
// triples.
void MonotonicAndRaw(SimHost& host, int64_t* mon, int64_t* raw) {
  int64_t diff = 0;
  for (int i = 0; i < 3; ++i) {
    const int64_t start = Ns(host.Gettime(kClockMonotonic).ts);
    const int64_t mid = Ns(host.Gettime(kClockMonotonicRaw).ts);
    const int64_t end = Ns(host.Gettime(kClockMonotonic).ts);
    if (diff == 0 || end - start < diff) {
      diff = end - start;
      *raw = mid;
      *mon = (start + end) / 2;
    }
  }
}

// Returns |estimated - actual| in ppb.
int64_t RawSkew(SimHost& host) {
  timekeeper::Timex tx1, tx2;
  host.Adjtimex(&tx1);
  int64_t mon = 0, raw = 0;
  MonotonicAndRaw(host, &mon, &raw);
  const int64_t start = mon;
  const int64_t delta1 = raw - mon;
  host.Sleep(int64_t{120} * 1000000000);
  MonotonicAndRaw(host, &mon, &raw);
  host.Adjtimex(&tx2);
  const int64_t delta2 = raw - mon;
  const int64_t interval = mon - start;
  // The test's eppm is in ppb (ppm * 1000).
  const int64_t eppm = -(((delta2 - delta1) * 1000000000) / interval);
  const int64_t ppm =
      timekeeper::NtpShiftRight((tx1.freq + tx2.freq) * 1000 / 2, 16);
  std::printf("freq %+lld.%03lld ppm: estimated %lld ppb, actual %lld ppb\n",
              static_cast<long long>(ppm / 1000),
              static_cast<long long>(std::llabs(ppm % 1000)),
              static_cast<long long>(eppm), static_cast<long long>(ppm));
  return std::llabs(eppm - ppm);
}

TEST(RawSkew, EstimatedMatchesActualWithinAThousandPpb) {
  for (int64_t scaled : {int64_t{0}, int64_t{42} << 16, int64_t{-250} << 16,
                         (int64_t{499} << 16) + 12345, -(int64_t{500} << 16)}) {
    SimHost host;
    timekeeper::Timex txc;
    txc.modes = timekeeper::kAdjFrequency;
    txc.freq = scaled;
    ASSERT_GE(host.Adjtimex(&txc), 0);
    host.Sleep(1000000000);
    EXPECT_LE(RawSkew(host), 1000) << scaled;
  }
}

}  // namespace
}  // namespace vdsolab::kselftest
