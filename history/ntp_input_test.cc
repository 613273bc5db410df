// ntp.c's input handling defects of 2024 (docs/findings.md), caught the way
// valid-adjtimex checks requests: by the read-back.
// - "ntp: Remove invalid cast in time offset math" (f5807b0606da, 6.13):
//   a negative ADJ_OFFSET read back through (u32) as about 4.29e6 us;
// - "ntp: Safeguard against time_constant overflow" (6.11): a huge
//   ADJ_TIMECONST wrapped negative before its clamp and read back 0;
// - "ntp: Clamp maxerror and esterror to operating range" (6.11):
//   ADJ_MAXERROR stored any value; second_overflow()'s += 500 wrapped it
//   negative, so STA_UNSYNC never came.

#include <gtest/gtest.h>

#include <climits>

#include "absl/strings/str_format.h"
#include "history/history.h"
#include "timekeeper/timex.h"

namespace vdsolab::history {
namespace {

namespace tk = timekeeper;

bool NegativeOffsetReadsBackPositive(kselftest::SimHost& host,
                                     std::string* what) {
  tk::Timex txc;
  txc.modes = tk::kAdjStatus | tk::kAdjOffset;
  txc.status = tk::kStaPll;
  txc.offset = -1;  // -1 us
  host.Adjtimex(&txc);
  *what = absl::StrFormat("ADJ_OFFSET -1 us read back as %d", txc.offset);
  return txc.offset >= 0;
}

bool TimeConstantNotClamped(kselftest::SimHost& host, std::string* what) {
  tk::Timex txc;
  txc.modes = tk::kAdjTimeconst;
  txc.constant = LLONG_MAX;
  host.Adjtimex(&txc);
  *what =
      absl::StrFormat("ADJ_TIMECONST LLONG_MAX read back as %d", txc.constant);
  return txc.constant != tk::kMaxTc;
}

bool MaxerrorOutOfRange(kselftest::SimHost& host, std::string* what) {
  tk::Timex txc;
  txc.modes = tk::kAdjMaxerror | tk::kAdjStatus;
  txc.status = tk::kStaPll;
  txc.maxerror = LLONG_MAX;
  host.Adjtimex(&txc);
  host.Sleep(2000000000);
  tk::Timex read;
  const int ret = host.Adjtimex(&read);
  *what = absl::StrFormat(
      "ADJ_MAXERROR LLONG_MAX: read back %d, 2 s later %d (state %d)",
      txc.maxerror, read.maxerror, ret);
  return read.maxerror < 0 || read.maxerror > tk::kNtpPhaseLimit;
}

template <class Check>
void OnAndOff(const char* name, void (*enable)(tk::NtpQuirks*), Check check) {
  kselftest::SimHostOptions on;
  enable(&on.profile.ntp);
  const Verdict v_on = RunCheck(on, check);
  Print(name, "on", v_on);
  const Verdict v_off = RunCheck(kselftest::SimHostOptions{}, check);
  Print(name, "off", v_off);
  EXPECT_TRUE(v_on.caught) << name;
  EXPECT_FALSE(v_off.caught) << v_off.what;
}

TEST(NtpInput, NegativeOffsetReadBackThroughU32) {
  OnAndOff(
      "(u32) offset read-back",
      [](tk::NtpQuirks* q) { q->offset_readback_u32 = true; },
      NegativeOffsetReadsBackPositive);
}

TEST(NtpInput, TimeConstantIncrementOverflowedBeforeItsClamp) {
  OnAndOff(
      "time_constant += 4 before the clamp",
      [](tk::NtpQuirks* q) { q->time_constant_add_before_clamp = true; },
      TimeConstantNotClamped);
}

TEST(NtpInput, UnclampedMaxerror) {
  OnAndOff(
      "unclamped maxerror",
      [](tk::NtpQuirks* q) { q->maxerror_unclamped = true; },
      MaxerrorOutOfRange);
}

}  // namespace
}  // namespace vdsolab::history
