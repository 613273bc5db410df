#include "sim/timekeeper_consistency.h"

#include <cstdint>

#include "absl/strings/str_format.h"
#include "common/timespec.h"
#include "timekeeper/timex.h"

namespace vdsolab::sim {
namespace {

constexpr int64_t kNs = 1000000000;

// ktime_set(): whole seconds and ns, saturating at KTIME_MAX, written out
// here rather than taken from common/ so that the check does not share the
// code it checks.
Ktime KtimeSet(int64_t sec, int64_t nsec) {
  if (sec >= kKtimeSecMax) return kKtimeMax;
  return sec * kNs + nsec;
}

// ns as a normalised timespec (floor division: a negative offset has
// tv_nsec in [0, 1e9) too).
Timespec64 NsToTs(int64_t ns) {
  int64_t sec = ns / kNs;
  int64_t rem = ns % kNs;
  if (rem < 0) {
    --sec;
    rem += kNs;
  }
  return {sec, rem};
}

}  // namespace

std::string DerivedStateMismatch(const timekeeper::Timekeeper& tk,
                                 const timekeeper::NtpData& ntp) {
  const Timespec64& wtm = tk.wall_to_monotonic;
  // Beyond KTIME_SEC_MAX the kernel saturates; no generated time gets near.
  if (wtm.tv_sec > -kKtimeSecMax && wtm.tv_sec < kKtimeSecMax) {
    const Ktime offs_real = -(wtm.tv_sec * kNs + wtm.tv_nsec);
    if (tk.offs_real != offs_real) {
      return absl::StrFormat(
          "offs_real %d != -wall_to_monotonic %d (wall_to_monotonic %d s %d "
          "ns)",
          tk.offs_real, offs_real, wtm.tv_sec, wtm.tv_nsec);
    }
  }
  const Ktime offs_tai = tk.offs_real + int64_t{tk.tai_offset} * kNs;
  if (tk.offs_tai != offs_tai) {
    return absl::StrFormat("offs_tai %d != offs_real + tai_offset %d s = %d",
                           tk.offs_tai, tk.tai_offset, offs_tai);
  }
  if (tk.monotonic_to_boot != NsToTs(tk.offs_boot)) {
    return absl::StrFormat("monotonic_to_boot %d s %d ns != offs_boot %d ns",
                           tk.monotonic_to_boot.tv_sec,
                           tk.monotonic_to_boot.tv_nsec, tk.offs_boot);
  }
  // tk_update_ktime_data(): MONOTONIC's whole part at the last update.
  const int64_t mono_sec = static_cast<int64_t>(tk.xtime_sec) + wtm.tv_sec;
  const Ktime base = static_cast<Ktime>(static_cast<uint64_t>(mono_sec) *
                                            static_cast<uint64_t>(kNs) +
                                        static_cast<uint64_t>(wtm.tv_nsec));
  if (tk.tkr_mono.base != base) {
    return absl::StrFormat("tkr_mono.base %d != (xtime_sec + wtm) %d ns",
                           tk.tkr_mono.base, base);
  }
  const int64_t carry =
      wtm.tv_nsec + static_cast<int64_t>(tk.tkr_mono.xtime_nsec >>
                                         tk.tkr_mono.shift) >=
              kNs
          ? 1
          : 0;
  if (tk.ktime_sec != static_cast<uint64_t>(mono_sec + carry)) {
    return absl::StrFormat("ktime_sec %d != MONOTONIC's seconds %d",
                           tk.ktime_sec, mono_sec + carry);
  }
  if (tk.tkr_raw.base != static_cast<Ktime>(tk.raw_sec * kNs)) {
    return absl::StrFormat("tkr_raw.base %d != raw_sec %d s", tk.tkr_raw.base,
                           tk.raw_sec);
  }
  if (tk.tkr_mono.base_real != static_cast<uint64_t>(tk.tkr_mono.base) +
                                   static_cast<uint64_t>(tk.offs_real)) {
    return absl::StrFormat("base_real %d != base + offs_real",
                           tk.tkr_mono.base_real);
  }
  // tk_update_leap_state(): only an insertion both armed (TIME_INS, by a
  // second overflow) and still asked for (STA_INS) has a time; a deletion
  // needs no hrtimer adjustment.
  Ktime next_leap = kKtimeMax;
  if (!ntp.aux && ntp.time_state == timekeeper::kTimeIns &&
      (ntp.time_status & timekeeper::kStaIns) != 0) {
    next_leap = KtimeSet(ntp.next_leap_sec, 0);
    if (next_leap != kKtimeMax) next_leap -= tk.offs_real;
  }
  if (tk.next_leap_ktime != next_leap) {
    return absl::StrFormat(
        "next_leap_ktime %d != %d (NTP state %d, status %#x, next leap at %d "
        "s REALTIME)",
        tk.next_leap_ktime, next_leap, ntp.time_state, ntp.time_status,
        ntp.next_leap_sec);
  }
  return "";
}

std::string TickGridMismatch(const timekeeper::Timekeeper& before,
                             const timekeeper::Timekeeper& after) {
  const uint64_t interval = after.cycle_interval;
  if (interval == 0 || before.cycle_interval != interval ||
      before.tkr_mono.clock != after.tkr_mono.clock) {
    return "";
  }
  // Accumulation adds to cycle_last without masking, so the difference is
  // exact modulo 2^64 whatever the counter's width.
  const uint64_t mono = after.tkr_mono.cycle_last - before.tkr_mono.cycle_last;
  const uint64_t raw = after.tkr_raw.cycle_last - before.tkr_raw.cycle_last;
  if (mono % interval != 0 || raw % interval != 0) {
    return absl::StrFormat(
        "the tick moved cycle_last by %d (mono) and %d (raw) cycles, not a "
        "whole number of %d-cycle intervals: it accumulated from a state "
        "that was never published",
        mono, raw, interval);
  }
  return "";
}

std::string UnaccumulatedMismatch(const timekeeper::Timekeeper& tk,
                                  uint64_t counter, const std::string& what) {
  const uint64_t mask = tk.tkr_mono.mask;
  const uint64_t left = (counter - tk.tkr_mono.cycle_last) & mask;
  if (tk.cycle_interval == 0 || left < tk.cycle_interval || left > mask >> 1) {
    return "";
  }
  return absl::StrFormat(
      "after the tick %s has %d cycles unaccumulated at counter %#x; "
      "cycle_interval is %d: it stopped accumulating",
      what, left, counter, tk.cycle_interval);
}

std::string HrtimerViewMismatch(const timekeeper::Timekeeper& tk,
                                uint64_t cycles,
                                timekeeper::HrtimerOffsets* cached) {
  const Ktime mono_cached =
      timekeeper::KtimeGetUpdateOffsetsNow(tk, cycles, cached);
  timekeeper::HrtimerOffsets fresh;
  const Ktime mono = timekeeper::KtimeGetUpdateOffsetsNow(tk, cycles, &fresh);
  const Timespec64 ts = timekeeper::KtimeGetTs64(tk, cycles);
  const Ktime want_mono = KtimeSet(ts.tv_sec, ts.tv_nsec);
  if (mono != want_mono || mono_cached != want_mono) {
    return absl::StrFormat(
        "hrtimer MONOTONIC %d ns != ktime_get_ts64()'s %d ns at counter %d",
        mono, want_mono, cycles);
  }
  const Ktime want_real =
      mono >= tk.next_leap_ktime ? tk.offs_real - kNs : tk.offs_real;
  if (fresh.offs_real != want_real || fresh.offs_boot != tk.offs_boot ||
      fresh.offs_tai != tk.offs_tai) {
    return absl::StrFormat(
        "hrtimer offsets real %d boot %d tai %d != the timekeeper's %d %d %d",
        fresh.offs_real, fresh.offs_boot, fresh.offs_tai, want_real,
        tk.offs_boot, tk.offs_tai);
  }
  if (cached->cwsseq != tk.clock_was_set_seq ||
      cached->offs_boot != tk.offs_boot || cached->offs_tai != tk.offs_tai) {
    return absl::StrFormat(
        "hrtimer's cached offsets (boot %d, tai %d, clock_was_set_seq %d) "
        "are stale against the timekeeper's (%d, %d, %d): an offset changed "
        "without clock_was_set",
        cached->offs_boot, cached->offs_tai, cached->cwsseq, tk.offs_boot,
        tk.offs_tai, tk.clock_was_set_seq);
  }
  return "";
}

}  // namespace vdsolab::sim
