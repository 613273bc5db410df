// adjtimex()'s NTP modes and read-back (kernel/time/ntp.c:
// process_adjtimex_modes(), process_adj_status(), __do_adjtimex()) against
// a reference written out here from the kernel's code, in each of the eras
// the model's NtpQuirks select: today's (6.13+), and the shipped defects
// switched back on one by one or together (ADJ_TIMECONST's += 4 before
// its clamp and the unclamped ADJ_MAXERROR / ADJ_ESTERROR before 6.11; the
// (u32) offset read-back before 6.13).
//
// A sequence of validated requests (adjtime()'s flavour aside) goes to one
// Ntp; after each, every read-back field the modes set must be the
// reference's: status (but STA_MODE, which ntp_update_offset() owns),
// constant, maxerror, esterror, tai, tick, and freq while no ADJ_OFFSET
// has moved it. The offset read-back is checked against the formula of
// its era from the model's time_offset.
//
// The inputs span their whole domain, weighted toward the edges: constant
// at LLONG_MIN/MAX (where the old += 4 wraps), around 0, MAXTC - 4, MAXTC
// and MAX_TAI_OFFSET; maxerror and esterror around 0, NTP_PHASE_LIMIT and
// the int64 ends; freq up to the validation limit (past MAXFREQ's clamp).

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
#include "common/timespec.h"
#include "timekeeper/ntp.h"
#include "timekeeper/timex.h"

namespace vdsolab {
namespace {

namespace tk = timekeeper;

rc::Gen<int64_t> Near(int64_t at) {
  return rc::gen::map(rc::gen::inRange<int64_t>(-2, 3), [at](int64_t d) {
    return static_cast<int64_t>(static_cast<uint64_t>(at) +
                                static_cast<uint64_t>(d));
  });
}

rc::Gen<int64_t> GenAnyInt64() {
  return rc::gen::map(rc::gen::arbitrary<uint64_t>(),
                      [](uint64_t v) { return static_cast<int64_t>(v); });
}

rc::Gen<int64_t> GenConstant() {
  return rc::gen::weightedOneOf<int64_t>({
      {3, rc::gen::inRange<int64_t>(-3, tk::kMaxTc + 4)},
      {1, Near(LLONG_MAX)},
      {1, Near(LLONG_MIN)},
      {1, Near(tk::kMaxTaiOffset)},
      {1, GenAnyInt64()},
  });
}

rc::Gen<int64_t> GenError() {
  return rc::gen::weightedOneOf<int64_t>({
      {2, rc::gen::inRange<int64_t>(-3, 1000000)},
      {2, Near(tk::kNtpPhaseLimit)},
      {1, Near(LLONG_MAX)},
      {1, Near(LLONG_MIN)},
      {1, GenAnyInt64()},
  });
}

// Frequencies the validation takes: freq * PPM_SCALE must not overflow.
rc::Gen<int64_t> GenFreq() {
  const int64_t limit = LLONG_MAX / tk::kPpmScale;
  return rc::gen::weightedOneOf<int64_t>({
      {3, rc::gen::inRange<int64_t>(-(600ll << 16), 600ll << 16)},
      {1, Near(tk::kMaxFreqScaled / tk::kPpmScale)},
      {1, Near(-tk::kMaxFreqScaled / tk::kPpmScale)},
      {1, rc::gen::inRange<int64_t>(limit - 2, limit + 1)},
      {1, rc::gen::inRange<int64_t>(-limit, -limit + 3)},
  });
}

tk::Timex GenRequest() {
  tk::Timex t;
  static constexpr uint32_t kBits[] = {
      tk::kAdjOffset, tk::kAdjFrequency, tk::kAdjMaxerror, tk::kAdjEsterror,
      tk::kAdjStatus, tk::kAdjTimeconst, tk::kAdjTai,      tk::kAdjMicro,
      tk::kAdjNano,   tk::kAdjTick};
  for (uint32_t b : kBits) {
    if (*rc::gen::inRange(0, 3) == 0) t.modes |= b;
  }
  t.offset = *rc::gen::inRange<int64_t>(-600000, 600001) *
             ((t.modes & tk::kAdjNano) != 0 ? 1000 : 1);
  t.freq = *GenFreq();
  t.maxerror = *GenError();
  t.esterror = *GenError();
  t.constant = *GenConstant();
  t.tick = *rc::gen::inRange<int64_t>(900000 / tk::kUserHz,
                                      1100000 / tk::kUserHz + 1);
  static constexpr int32_t kStatus[] = {
      tk::kStaPll,    tk::kStaFll,      tk::kStaIns,     tk::kStaDel,
      tk::kStaUnsync, tk::kStaFreqhold, tk::kStaPpsfreq, tk::kStaPpstime,
      tk::kStaNano,   tk::kStaClockerr};
  for (int32_t s : kStatus) {
    if (*rc::gen::inRange(0, 3) == 0) t.status |= s;
  }
  return t;
}

// The state the modes set, after ntp_init(): the kernel's initial values.
struct Reference {
  int32_t status = tk::kStaUnsync;
  int64_t constant = 2;
  int64_t maxerror = tk::kNtpPhaseLimit;
  int64_t esterror = tk::kNtpPhaseLimit;
  int64_t freq = 0;  // time_freq, scaled.
  int64_t tick = 1000000 / tk::kUserHz;
  int32_t tai = 0;
};

// process_adjtimex_modes() of the era `q` selects, but ADJ_OFFSET.
void Apply(const tk::NtpQuirks& q, const tk::Timex& t, Reference* r) {
  if ((t.modes & tk::kAdjStatus) != 0) {
    // process_adj_status(): the PLL switched off resets to STA_UNSYNC.
    if ((r->status & tk::kStaPll) != 0 && (t.status & tk::kStaPll) == 0) {
      r->status = tk::kStaUnsync;
    }
    r->status = (r->status & tk::kStaRonly) | (t.status & ~tk::kStaRonly);
  }
  if ((t.modes & tk::kAdjNano) != 0) r->status |= tk::kStaNano;
  if ((t.modes & tk::kAdjMicro) != 0) r->status &= ~tk::kStaNano;
  if ((t.modes & tk::kAdjFrequency) != 0) {
    r->freq = std::clamp(t.freq * tk::kPpmScale, -tk::kMaxFreqScaled,
                         tk::kMaxFreqScaled);
  }
  const auto error = [&q](int64_t v) {
    return q.maxerror_unclamped ? v
                                : std::clamp<int64_t>(v, 0, tk::kNtpPhaseLimit);
  };
  if ((t.modes & tk::kAdjMaxerror) != 0) r->maxerror = error(t.maxerror);
  if ((t.modes & tk::kAdjEsterror) != 0) r->esterror = error(t.esterror);
  if ((t.modes & tk::kAdjTimeconst) != 0) {
    const int64_t add = (r->status & tk::kStaNano) == 0 ? 4 : 0;
    if (q.time_constant_add_before_clamp) {
      // time_constant = txc->constant (+ 4); min(MAXTC); max(0): the
      // addition wraps (the kernel builds with -fno-strict-overflow).
      r->constant = std::max<int64_t>(
          std::min(tk::WrapAdd(t.constant, add), tk::kMaxTc), 0);
    } else {
      r->constant = std::clamp<int64_t>(
          std::clamp<int64_t>(t.constant, 0, tk::kMaxTc) + add, 0, tk::kMaxTc);
    }
  }
  if ((t.modes & tk::kAdjTai) != 0 && t.constant >= 0 &&
      t.constant <= tk::kMaxTaiOffset) {
    r->tai = static_cast<int32_t>(t.constant);
  }
  if ((t.modes & tk::kAdjTick) != 0) r->tick = t.tick;
}

RC_GTEST_PROP(NtpModes, ReadBackIsTheKernelsInEveryEra, ()) {
  tk::NtpQuirks q;
  q.offset_readback_u32 = *rc::gen::arbitrary<bool>().as("(u32) read-back");
  q.time_constant_add_before_clamp =
      *rc::gen::arbitrary<bool>().as("time_constant += 4 first");
  q.maxerror_unclamped = *rc::gen::arbitrary<bool>().as("errors unclamped");
  const int hz = *rc::gen::element(100, 250, 300, 1000);
  tk::Ntp ntp(hz, q);
  Reference ref;
  bool freq_known = true;
  int32_t tai = 0;
  int64_t real_seconds = *rc::gen::inRange<int64_t>(0, 1ll << 34);
  const int n = *rc::gen::inRange(1, 8);
  bool wraps = false, constant_out = false, error_out = false;
  bool freq_out = false, negative_offset = false;
  for (int i = 0; i < n; ++i) {
    tk::Timex txc = *rc::gen::exec(GenRequest);
    RC_ASSERT(tk::ValidateTimex(txc, false) == 0);
    const tk::Timex request = txc;
    const bool timeconst = (request.modes & tk::kAdjTimeconst) != 0;
    wraps |= timeconst && (ref.status & tk::kStaNano) == 0 &&
             request.constant > LLONG_MAX - 4;
    constant_out |=
        timeconst && (request.constant < 0 || request.constant > tk::kMaxTc);
    error_out |=
        (request.modes & tk::kAdjMaxerror) != 0 &&
        (request.maxerror < 0 || request.maxerror > tk::kNtpPhaseLimit);
    freq_out |= (request.modes & tk::kAdjFrequency) != 0 &&
                (request.freq * tk::kPpmScale > tk::kMaxFreqScaled ||
                 request.freq * tk::kPpmScale < -tk::kMaxFreqScaled);
    Apply(q, request, &ref);
    // ntp_update_offset() moves time_freq while the PLL or FLL runs.
    if ((request.modes & tk::kAdjOffset) != 0) freq_known = false;
    real_seconds += *rc::gen::inRange<int64_t>(0, 4096);
    ntp.DoAdjtimex(&txc, Timespec64{real_seconds, 0}, &tai, real_seconds);

    const std::string what = absl::StrFormat(
        "request %d (modes %#x status %#x constant %d maxerror %d esterror "
        "%d freq %d tick %d) with quirks {u32 %d, tc %d, err %d}",
        i, request.modes, request.status, request.constant, request.maxerror,
        request.esterror, request.freq, request.tick, q.offset_readback_u32,
        q.time_constant_add_before_clamp, q.maxerror_unclamped);
    if ((txc.status & ~tk::kStaMode) != (ref.status & ~tk::kStaMode)) {
      RC_FAIL(absl::StrFormat("%s: status read back %#x, kernel %#x", what,
                              txc.status, ref.status));
    }
    if (txc.constant != ref.constant) {
      RC_FAIL(absl::StrFormat("%s: constant read back %d, kernel %d", what,
                              txc.constant, ref.constant));
    }
    if (txc.maxerror != ref.maxerror || txc.esterror != ref.esterror) {
      RC_FAIL(absl::StrFormat(
          "%s: maxerror/esterror read back %d/%d, kernel "
          "%d/%d",
          what, txc.maxerror, txc.esterror, ref.maxerror, ref.esterror));
    }
    if (txc.tai != ref.tai || txc.tick != ref.tick) {
      RC_FAIL(absl::StrFormat("%s: tai/tick read back %d/%d, kernel %d/%d",
                              what, txc.tai, txc.tick, ref.tai, ref.tick));
    }
    if (freq_known) {
      const int64_t freq = tk::NtpShiftRight(
          (ref.freq >> tk::kPpmScaleInvShift) * tk::kPpmScaleInv,
          tk::kNtpScaleShift);
      if (txc.freq != freq) {
        RC_FAIL(absl::StrFormat("%s: freq read back %d, kernel %d", what,
                                txc.freq, freq));
      }
    }
    // The offset read-back: the phase still to slew (time_offset per tick
    // times NTP_INTERVAL_FREQ), in us unless STA_NANO.
    const int64_t offset_ns = tk::NtpShiftRight(
        static_cast<int64_t>(static_cast<uint64_t>(ntp.data().time_offset) *
                             static_cast<uint64_t>(hz)),
        tk::kNtpScaleShift);
    int64_t offset = offset_ns;
    if ((ref.status & tk::kStaNano) == 0) {
      offset =
          q.offset_readback_u32
              ? static_cast<int64_t>(static_cast<uint32_t>(offset_ns) / 1000u)
              : offset_ns / 1000;
    }
    negative_offset |= offset_ns < 0;
    if (txc.offset != offset) {
      RC_FAIL(absl::StrFormat("%s: offset read back %d, kernel %d", what,
                              txc.offset, offset));
    }
  }
  RC_CLASSIFY(q.offset_readback_u32, "(u32) offset read-back era");
  RC_CLASSIFY(q.time_constant_add_before_clamp, "constant += 4 first era");
  RC_CLASSIFY(q.maxerror_unclamped, "unclamped errors era");
  RC_CLASSIFY(wraps, "constant + 4 overflows");
  RC_CLASSIFY(constant_out, "constant out of [0, MAXTC]");
  RC_CLASSIFY(error_out, "maxerror out of range");
  RC_CLASSIFY(freq_out, "freq past MAXFREQ");
  RC_CLASSIFY(negative_offset, "negative offset read back");
}

}  // namespace
}  // namespace vdsolab
