// File: fuzz/tk_fuzz_checks.cc

#include "fuzz/tk_fuzz_checks.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_format.h"
#include "common/timespec.h"
#include "timekeeper/readers.h"
#include "timekeeper/timex.h"

namespace vdsolab::fuzz {
namespace {

namespace tk = vdsolab::timekeeper;

__int128 Ns(const Timespec64& t) {
  return static_cast<__int128>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

TkState StateOf(const tk::Timekeeper& k, const tk::Ntp& ntp) {
  return TkState{ntp.data(),          k.xtime_sec,  k.tkr_mono.xtime_nsec,
                 k.wall_to_monotonic, k.offs_boot,  k.tai_offset,
                 k.offs_aux,          k.clock_valid};
}

}  // namespace

void FuzzFail(const std::string& history, const std::string& what) {
  std::fprintf(stderr, "timekeeper_fuzzer: %s\noperations:\n%s", what.c_str(),
               history.c_str());
  std::abort();
}

TkState CoreState(const tk::Timekeeping& t) {
  return StateOf(t.timekeeper(), t.ntp());
}

TkState AuxState(const tk::Timekeeping& t, int index) {
  return StateOf(t.aux_timekeeper(index), t.aux_ntp(index));
}

void CheckNtpRanges(const tk::NtpData& n, const std::string& which,
                    const std::string& history) {
  auto fail = [&](const std::string& what) {
    FuzzFail(history, absl::StrFormat("%s: %s", which, what));
  };
  if (n.time_freq < -tk::kMaxFreqScaled || n.time_freq > tk::kMaxFreqScaled) {
    fail(absl::StrFormat("time_freq %d outside +-MAXFREQ", n.time_freq));
  }
  if (n.tick_usec < 900000 / tk::kUserHz ||
      n.tick_usec > 1100000 / tk::kUserHz) {
    fail(absl::StrFormat("tick_usec %d outside 90%%..110%%", n.tick_usec));
  }
  if (n.time_constant < 0 || n.time_constant > tk::kMaxTc) {
    fail(absl::StrFormat("time_constant %d outside 0..MAXTC", n.time_constant));
  }
  if (n.time_maxerror < 0 || n.time_maxerror > tk::kNtpPhaseLimit) {
    fail(absl::StrFormat("time_maxerror %d outside 0..NTP_PHASE_LIMIT",
                         n.time_maxerror));
  }
  if (n.time_esterror < 0 || n.time_esterror > tk::kNtpPhaseLimit) {
    fail(absl::StrFormat("time_esterror %d outside 0..NTP_PHASE_LIMIT",
                         n.time_esterror));
  }
  if (n.time_state < tk::kTimeOk || n.time_state > tk::kTimeWait) {
    fail(absl::StrFormat("time_state %d is no TIME_* state", n.time_state));
  }
  // ntp_update_offset() clamps the offset to MAXPHASE ns and spreads it
  // over a second of ticks; second_overflow() only shrinks it.
  const __int128 max_offset =
      (static_cast<__int128>(tk::kMaxPhase) << tk::kNtpScaleShift) / n.hz;
  if (n.time_offset > max_offset || n.time_offset < -max_offset) {
    fail(absl::StrFormat("time_offset %d beyond MAXPHASE", n.time_offset));
  }
  if (n.aux && n.next_leap_sec != tk::kTime64Max) {
    fail("an aux clock has a leap second pending");
  }
}

void TkWatch::Check(const tk::Timekeeping& t, uint64_t now) {
  const std::string& h = *history_;
  const Timespec64 mono = t.GetTs64(now);
  const Timespec64 raw = t.GetRawTs64(now);
  if (last_mono_ && Ns(mono) < Ns(*last_mono_)) {
    FuzzFail(h, absl::StrFormat("MONOTONIC went back: %d.%09d after %d.%09d",
                                mono.tv_sec, mono.tv_nsec, last_mono_->tv_sec,
                                last_mono_->tv_nsec));
  }
  if (last_raw_ && Ns(raw) < Ns(*last_raw_)) {
    FuzzFail(h,
             absl::StrFormat("MONOTONIC_RAW went back: %d.%09d after %d.%09d",
                             raw.tv_sec, raw.tv_nsec, last_raw_->tv_sec,
                             last_raw_->tv_nsec));
  }
  last_mono_ = mono;
  last_raw_ = raw;

  const tk::Timekeeper& k = t.timekeeper();
  const Timespec64 real = t.GetRealTs64(now);
  if (Ns(real) + Ns(k.wall_to_monotonic) != Ns(mono)) {
    FuzzFail(h, "REALTIME and MONOTONIC disagree with wall_to_monotonic");
  }
  if (k.offs_boot < 0) FuzzFail(h, "BOOTTIME fell behind MONOTONIC");
  if (Ns(t.GetBoottimeTs64(now)) != Ns(mono) + k.offs_boot) {
    FuzzFail(h, "BOOTTIME is not MONOTONIC + offs_boot");
  }
  if (Ns(t.GetClocktaiTs64(now)) !=
      Ns(real) + static_cast<__int128>(k.tai_offset) * 1000000000) {
    FuzzFail(h, "TAI is not REALTIME + tai_offset");
  }
  CheckNtpRanges(t.ntp().data(), "core", h);

  for (int i = 0; i < tk::kMaxAuxTimekeepers; ++i) {
    std::optional<Ktime>& last = last_aux_[static_cast<size_t>(i)];
    if (!t.profile().aux_clocks) break;
    CheckNtpRanges(t.aux_ntp(i).data(), absl::StrFormat("AUX+%d", i), h);
    const std::optional<Ktime> aux = tk::KtimeGetAux(t.aux_timekeeper(i), now);
    if (!aux) {
      last.reset();
      continue;
    }
    if (last && *aux < *last && !beyond_settod_[static_cast<size_t>(i)]) {
      FuzzFail(
          h, absl::StrFormat("AUX+%d went back: %d after %d", i, *aux, *last));
    }
    last = aux;
  }
}

}  // namespace vdsolab::fuzz
