#include "timekeeper/clocksource.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/math64.h"

namespace vdsolab::timekeeper {

// Models clocks_calc_mult_shift() (kernel/time/clocksource.c, 2.6.33+).
void ClocksCalcMultShift(uint32_t* mult, uint32_t* shift, uint32_t from,
                         uint32_t to, uint32_t maxsec) {
  // Shift the largest input (maxsec seconds of `from`) down until it fits
  // 32 bits: sftacc is how many bits of mult that leaves room for.
  uint64_t tmp = (static_cast<uint64_t>(maxsec) * from) >> 32;
  uint32_t sftacc = 32;
  while (tmp != 0) {
    tmp >>= 1;
    --sftacc;
  }
  // The largest shift whose mult still fits in sftacc bits, for precision.
  uint32_t sft = 32;
  for (; sft > 0; --sft) {
    tmp = static_cast<uint64_t>(to) << sft;
    tmp += from / 2;
    tmp /= from;
    if ((tmp >> sftacc) == 0) break;
  }
  *mult = static_cast<uint32_t>(tmp);
  *shift = sft;
}

// Models clocksource_max_adjustment().
uint32_t ClocksourceMaxAdjustment(uint32_t mult) {
  uint64_t ret = static_cast<uint64_t>(mult) * 11;
  ret /= 100;
  return static_cast<uint32_t>(ret);
}

// Models clocks_calc_max_nsecs().
uint64_t ClocksCalcMaxNsecs(uint32_t mult, uint32_t shift, uint32_t maxadj,
                            uint64_t mask, uint64_t* max_cyc) {
  // The u32 sum is the kernel's: registration keeps mult + maxadj in range.
  uint64_t max_cycles = ULLONG_MAX / static_cast<uint32_t>(mult + maxadj);
  max_cycles = std::min(max_cycles, mask);
  // clocksource_cyc2ns() with the slowest allowed mult: an s64 result.
  const uint32_t slow_mult = mult - maxadj;
  uint64_t max_nsecs = static_cast<uint64_t>(
      static_cast<int64_t>((max_cycles * slow_mult) >> shift));
  if (max_cyc != nullptr) *max_cyc = max_cycles;
  return max_nsecs >> 1;
}

absl::StatusOr<Clocksource> ClocksourceRegisterScale(
    std::string name, uint64_t mask, uint32_t scale, uint32_t freq,
    int32_t vdso_clock_mode, int rating) {
  if (freq == 0 || scale == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "clocksource %s: frequency must be positive (scale %u, freq %u)", name,
        scale, freq));
  }
  if (mask == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("clocksource %s: mask must be non-zero", name));
  }
  if (kNsecPerSec / scale == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "clocksource %s: scale %u is finer than 1 ns", name, scale));
  }
  Clocksource cs;
  cs.name = std::move(name);
  cs.mask = mask;
  cs.vdso_clock_mode = vdso_clock_mode;
  cs.rating = rating;

  // __clocksource_update_freq_scale(): how long the counter runs before it
  // wraps, capped at 10 minutes for wide counters to keep NTP precision.
  uint64_t sec = cs.mask;
  sec /= freq;
  sec /= scale;
  if (sec == 0) {
    sec = 1;
  } else if (sec > 600 && cs.mask > UINT_MAX) {
    sec = 600;
  }
  ClocksCalcMultShift(&cs.mult, &cs.shift, freq,
                      static_cast<uint32_t>(kNsecPerSec / scale),
                      static_cast<uint32_t>(sec * scale));

  // Keep mult +/- 11% inside u32 so NTP steering cannot overflow it.
  cs.maxadj = ClocksourceMaxAdjustment(cs.mult);
  while (static_cast<uint32_t>(cs.mult + cs.maxadj) < cs.mult ||
         static_cast<uint32_t>(cs.mult - cs.maxadj) > cs.mult) {
    cs.mult >>= 1;
    --cs.shift;
    cs.maxadj = ClocksourceMaxAdjustment(cs.mult);
  }
  if (cs.mult == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "clocksource %s: %u x %u Hz is too fast for a 32-bit mult", cs.name,
        freq, scale));
  }

  // clocksource_update_max_deferment(), and max_raw_delta (Dec 2024+).
  cs.max_idle_ns =
      ClocksCalcMaxNsecs(cs.mult, cs.shift, cs.maxadj, cs.mask, &cs.max_cycles);
  cs.max_raw_delta = (cs.mask >> 1) + (cs.mask >> 2) + (cs.mask >> 3);
  return cs;
}

absl::StatusOr<Clocksource> MakeTscClocksource(uint32_t tsc_khz) {
  return ClocksourceRegisterScale("tsc", ClocksourceMask(64), 1000, tsc_khz,
                                  kVdsoClockmodeTsc, 300);
}

}  // namespace vdsolab::timekeeper
