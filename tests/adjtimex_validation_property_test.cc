// adjtimex() on the system clock against timekeeping_validate_timex() and
// ADJ_SETOFFSET written out from Linux 6.12's kernel/time/timekeeping.c
// (permission checks aside: the model's caller has CAP_SYS_TIME):
//
// - -EINVAL exactly when: ADJ_ADJTIME is set and modes &
//   ADJ_OFFSET_SINGLESHOT is 0 (never: ADJ_ADJTIME is one of its bits, a
//   test kept as the kernel has it); or, without ADJ_ADJTIME, ADJ_TICK asks for
//   a tick outside [900000 / USER_HZ, 1100000 / USER_HZ]; or ADJ_SETOFFSET's
//   time.tv_usec is negative or not below a second (NSEC_PER_SEC with
//   ADJ_NANO, else USEC_PER_SEC); or ADJ_FREQUENCY's freq would overflow
//   freq * PPM_SCALE. The time field of a request without ADJ_SETOFFSET
//   is not read.
// - A request taken steps REALTIME against MONOTONIC by exactly
//   time.tv_sec s + time.tv_usec us (ns with ADJ_NANO) when it has
//   ADJ_SETOFFSET (timekeeping_inject_offset(); offsets drawn where it
//   succeeds), and by nothing otherwise; a request refused changes
//   nothing. REALTIME - MONOTONIC at one counter is -wall_to_monotonic,
//   whatever ADJ_FREQUENCY or ADJ_TICK do to the rate.
//
// On an aux clock (6.17+, clock_adjtime(CLOCK_AUX + i)), -EINVAL also
// exactly when ADJ_STATUS asks for STA_INS or STA_DEL (no leap seconds),
// for ADJ_TAI, or when ADJ_STATUS asks for STA_PPSFREQ or STA_PPSTIME (no
// PPS).
//
// The fields are drawn at those edges, the time field in every request;
// half the requests are valid but for one field drawn at its limit, so
// that no other field's refusal hides which side of it the model takes.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <climits>
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
constexpr int64_t kUsec = 1000000;
constexpr int64_t kUserHz = 100;      // USER_HZ on x86.
constexpr int64_t kPpm = 1000 << 16;  // PPM_SCALE: 1000 << SHIFT_USEC.
constexpr int kEinval = 22;

rc::Gen<int64_t> Around(int64_t at) {
  return rc::gen::map(rc::gen::inRange<int64_t>(-1, 2),
                      [at](int64_t d) { return at + d; });
}

// The mode bits a request may carry (ADJ_ADJTIME's forms aside).
constexpr uint32_t kModeBits[] = {
    tk::kAdjOffset, tk::kAdjFrequency, tk::kAdjMaxerror, tk::kAdjEsterror,
    tk::kAdjStatus, tk::kAdjTimeconst, tk::kAdjTai,      tk::kAdjSetoffset,
    tk::kAdjMicro,  tk::kAdjNano,      tk::kAdjTick};

tk::Timex GenTimex() {
  tk::Timex t;
  for (uint32_t b : kModeBits) {
    if (*rc::gen::element(0, 1, 2) == 0) t.modes |= b;
  }
  // adjtime(): ADJ_ADJTIME with all, some or none of the singleshot bits.
  const int adjtime = *rc::gen::element(0, 1, 2, 3, 4, 5, 6, 7);
  if (adjtime == 0) t.modes = tk::kAdjOffsetSingleshot;
  if (adjtime == 1) t.modes = tk::kAdjOffsetSsRead;
  if (adjtime == 2) t.modes |= tk::kAdjAdjtime;
  t.offset = *rc::gen::inRange<int64_t>(-500000, 500001);
  t.freq =
      *rc::gen::oneOf(rc::gen::inRange<int64_t>(-(600ll << 16), 600ll << 16),
                      Around(LLONG_MIN / kPpm), Around(LLONG_MAX / kPpm));
  t.tick = *rc::gen::oneOf(rc::gen::inRange<int64_t>(9000, 11001),
                           Around(900000 / kUserHz), Around(1100000 / kUserHz));
  t.time.tv_sec = *rc::gen::inRange<int64_t>(-3, 4);
  t.time.tv_usec = *rc::gen::oneOf(rc::gen::inRange<int64_t>(0, kUsec),
                                   Around(0), Around(kUsec), Around(kNsec - 1),
                                   rc::gen::inRange<int64_t>(0, kNsec));
  t.constant = *rc::gen::inRange<int64_t>(-1, 12);
  t.status = *rc::gen::element<int32_t>(
      0, tk::kStaPll, tk::kStaUnsync, tk::kStaNano, tk::kStaFll, tk::kStaIns,
      tk::kStaDel, tk::kStaPpsfreq, tk::kStaPpstime,
      tk::kStaPll | tk::kStaPpstime);
  return t;
}

// A request every field of which is valid but one, drawn at one of its
// limits (just inside, on it, just outside): the other fields cannot refuse
// it for their own reasons, so that limit alone decides the answer.
tk::Timex GenTimexAtOneLimit() {
  tk::Timex t;
  for (uint32_t b : kModeBits) {
    if (*rc::gen::element(0, 1) == 0) t.modes |= b;
  }
  t.offset = *rc::gen::inRange<int64_t>(-500000, 500001);
  t.freq = *rc::gen::inRange<int64_t>(-(600ll << 16), 600ll << 16);
  t.tick = *rc::gen::inRange<int64_t>(900000 / kUserHz, 1100000 / kUserHz + 1);
  t.time.tv_sec = *rc::gen::inRange<int64_t>(-3, 4);
  const int64_t second = (t.modes & tk::kAdjNano) != 0 ? kNsec : kUsec;
  t.time.tv_usec = *rc::gen::inRange<int64_t>(0, second);
  t.constant = *rc::gen::inRange<int64_t>(-1, 12);
  switch (*rc::gen::inRange(0, 3)) {
    case 0:
      t.modes |= tk::kAdjTick;
      t.tick =
          *rc::gen::oneOf(Around(900000 / kUserHz), Around(1100000 / kUserHz));
      break;
    case 1:
      t.modes |= tk::kAdjFrequency;
      t.freq =
          *rc::gen::oneOf(Around(LLONG_MIN / kPpm), Around(LLONG_MAX / kPpm));
      break;
    default:
      t.modes |= tk::kAdjSetoffset;
      t.time.tv_usec = *rc::gen::oneOf(Around(0), Around(second));
      break;
  }
  return t;
}

// timekeeping_validate_timex() for the system clock, without permissions.
bool Valid(const tk::Timex& t) {
  if ((t.modes & tk::kAdjAdjtime) != 0) {
    if ((t.modes & tk::kAdjOffsetSingleshot) == 0) return false;
  } else if ((t.modes & tk::kAdjTick) != 0 &&
             (t.tick < 900000 / kUserHz || t.tick > 1100000 / kUserHz)) {
    return false;
  }
  if ((t.modes & tk::kAdjSetoffset) != 0) {
    if (t.time.tv_usec < 0) return false;
    if (t.time.tv_usec >= ((t.modes & tk::kAdjNano) != 0 ? kNsec : kUsec)) {
      return false;
    }
  }
  if ((t.modes & tk::kAdjFrequency) != 0 &&
      (LLONG_MIN / kPpm > t.freq || LLONG_MAX / kPpm < t.freq)) {
    return false;
  }
  return true;
}

// The aux clocks' further checks in timekeeping_validate_timex().
bool ValidOnAux(const tk::Timex& t) {
  const bool status = (t.modes & tk::kAdjStatus) != 0;
  if (status && (t.status & (tk::kStaIns | tk::kStaDel)) != 0) return false;
  if ((t.modes & tk::kAdjTai) != 0) return false;
  if (status && (t.status & (tk::kStaPpsfreq | tk::kStaPpstime)) != 0) {
    return false;
  }
  return Valid(t);
}

RC_GTEST_PROP(AdjtimexValidation, RefusesExactlyWhatTheKernelRefuses, ()) {
  absl::StatusOr<tk::Clocksource> tsc =
      tk::MakeTscClocksource(*testing::GenTscKhz());
  RC_ASSERT(tsc.ok());
  tk::Timekeeping k(*tsc, *testing::GenHz(), nullptr);
  const uint64_t c0 = *testing::GenCounterStart() & tsc->mask;
  // REALTIME far above MONOTONIC and far below the last settable second
  // (year 2232), so that a step of a few seconds either way stays valid
  // (timekeeping_inject_offset()'s own refusals).
  k.Init(c0,
         Timespec64{*rc::gen::inRange<int64_t>(1000000, 1ll << 32),
                    *rc::gen::inRange<int64_t>(0, kNsec)},
         Timespec64{*rc::gen::inRange<int64_t>(0, 100000), 0});
  const uint64_t ci = k.timekeeper().cycle_interval;
  uint64_t now = c0;
  const int ticks = *rc::gen::inRange(0, 4);
  for (int i = 0; i < ticks; ++i) {
    now = (now + ci) & tsc->mask;
    k.Advance(tk::AdvanceMode::kTick, now);
  }
  now = (now + *rc::gen::inRange<uint64_t>(0, ci)) & tsc->mask;

  const bool one_limit = *rc::gen::element(false, true);
  tk::Timex txc = one_limit ? GenTimexAtOneLimit() : GenTimex();
  const tk::Timex request = txc;
  const bool valid = Valid(request);
  RC_CLASSIFY(one_limit && valid, "one field at its limit, taken");
  RC_CLASSIFY(one_limit && !valid, "one field past its limit, refused");
  const __int128 before = testing::RealMinusMono(k, now);
  const int ret = k.Adjtimex(&txc, now);
  const __int128 after = testing::RealMinusMono(k, now);
  const bool setoffset = (request.modes & tk::kAdjSetoffset) != 0;
  RC_CLASSIFY(!valid, "refused");
  RC_CLASSIFY(valid && setoffset, "ADJ_SETOFFSET taken");
  RC_CLASSIFY((request.modes & tk::kAdjAdjtime) != 0, "adjtime()");
  if ((ret == -kEinval) == valid) {
    RC_FAIL(absl::StrFormat(
        "adjtimex(modes %#x, tick %d, freq %d, time {%d, %d}) returned %d; "
        "timekeeping_validate_timex() %s it",
        request.modes, request.tick, request.freq, request.time.tv_sec,
        request.time.tv_usec, ret, valid ? "takes" : "refuses"));
  }
  const __int128 step =
      valid && setoffset
          ? static_cast<__int128>(request.time.tv_sec) * kNsec +
                request.time.tv_usec *
                    ((request.modes & tk::kAdjNano) != 0 ? 1 : 1000)
          : 0;
  if (after - before != step) {
    RC_FAIL(absl::StrFormat(
        "adjtimex(modes %#x, time {%d, %d}) returned %d and moved REALTIME "
        "against MONOTONIC by %d ns, not %d",
        request.modes, request.time.tv_sec, request.time.tv_usec, ret,
        static_cast<int64_t>(after - before), static_cast<int64_t>(step)));
  }
}

RC_GTEST_PROP(AdjtimexValidation, AuxClocksRefuseExactlyWhatTheKernelRefuses,
              ()) {
  absl::StatusOr<tk::Clocksource> tsc =
      tk::MakeTscClocksource(*testing::GenTscKhz());
  RC_ASSERT(tsc.ok());
  tk::Timekeeping k(*tsc, *testing::GenHz(), nullptr);
  const uint64_t c0 = *testing::GenCounterStart() & tsc->mask;
  k.Init(c0, Timespec64{*rc::gen::inRange<int64_t>(1000000, 1ll << 32), 0},
         Timespec64{*rc::gen::inRange<int64_t>(0, 100000), 0});
  const int index = *rc::gen::inRange(0, 8).as("aux clock");
  const uint64_t now =
      (c0 + *rc::gen::inRange<uint64_t>(0, k.timekeeper().cycle_interval)) &
      tsc->mask;
  k.EnableAux(index, now);
  RC_ASSERT(k.AuxEnabled(index));
  tk::Timex txc = GenTimex();
  // Offsets forwards only: a step back could take the aux clock, which
  // starts at 0, below 0 (aux_clock_adj()'s own refusal).
  if (txc.time.tv_sec < 0) txc.time.tv_sec = -txc.time.tv_sec;
  const tk::Timex request = txc;
  const bool valid = ValidOnAux(request);
  const int ret = k.AuxAdjtimex(index, &txc, now);
  RC_CLASSIFY(!valid, "refused");
  RC_CLASSIFY(Valid(request) && !valid, "refused on an aux clock only");
  if ((ret == -kEinval) == valid) {
    RC_FAIL(absl::StrFormat(
        "clock_adjtime(CLOCK_AUX + %d, modes %#x, status %#x, tick %d, "
        "freq %d, time {%d, %d}) returned %d; timekeeping_validate_timex() "
        "%s it",
        index, request.modes, request.status, request.tick, request.freq,
        request.time.tv_sec, request.time.tv_usec, ret,
        valid ? "takes" : "refuses"));
  }
}

}  // namespace
}  // namespace vdsolab

namespace vdsolab {
namespace {

// timekeeping_inject_offset()'s own refusal, at its edge: the step may take
// REALTIME down to MONOTONIC and no further, so ADJ_SETOFFSET | ADJ_NANO
// is refused exactly when the offset is below wall_to_monotonic (a
// timespec compare). Offsets drawn at that edge: one ns either side, on it,
// and a little further, with REALTIME anywhere above MONOTONIC.
RC_GTEST_PROP(AdjtimexValidation, SetoffsetStopsRealtimeAtMonotonic, ()) {
  absl::StatusOr<tk::Clocksource> tsc =
      tk::MakeTscClocksource(*testing::GenTscKhz());
  RC_ASSERT(tsc.ok());
  tk::Timekeeping k(*tsc, *testing::GenHz(), nullptr);
  const uint64_t c0 = *testing::GenCounterStart() & tsc->mask;
  const Timespec64 boot{*rc::gen::inRange<int64_t>(0, 100000),
                        *rc::gen::inRange<int64_t>(0, kNsec)};
  const Timespec64 wall{boot.tv_sec + *rc::gen::inRange<int64_t>(0, 1ll << 32),
                        *rc::gen::inRange<int64_t>(0, kNsec)};
  k.Init(c0, wall, boot);
  const uint64_t now =
      (c0 + *rc::gen::inRange<uint64_t>(0, k.timekeeper().cycle_interval)) &
      tsc->mask;
  const Timespec64 edge = k.timekeeper().wall_to_monotonic;
  const int64_t d = *rc::gen::element<int64_t>(
      -1, 0, 1, -kNsec, kNsec,
      *rc::gen::inRange<int64_t>(-5 * kNsec, 5 * kNsec));
  const Timespec64 offset =
      SetNormalizedTimespec64(edge.tv_sec, edge.tv_nsec + d);
  tk::Timex txc;
  txc.modes = tk::kAdjSetoffset | tk::kAdjNano;
  txc.time.tv_sec = offset.tv_sec;
  txc.time.tv_usec = offset.tv_nsec;
  const bool refused = Timespec64Compare(edge, offset) > 0;
  RC_CLASSIFY(d == 0, "on the edge");
  RC_CLASSIFY(refused, "refused");
  const __int128 before = testing::RealMinusMono(k, now);
  const int ret = k.Adjtimex(&txc, now);
  const __int128 after = testing::RealMinusMono(k, now);
  if ((ret == -kEinval) != refused) {
    RC_FAIL(absl::StrFormat(
        "ADJ_SETOFFSET of %s with wall_to_monotonic %s returned %d; "
        "timekeeping_inject_offset() %s it",
        FormatTimespec(offset), FormatTimespec(edge), ret,
        refused ? "refuses" : "takes"));
  }
  const __int128 step =
      refused ? 0
              : static_cast<__int128>(offset.tv_sec) * kNsec + offset.tv_nsec;
  RC_ASSERT(after - before == step);
}

}  // namespace
}  // namespace vdsolab
