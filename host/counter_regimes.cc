#include "host/counter_regimes.h"

#include <algorithm>
#include <optional>

#include "common/bytes.h"
#include "common/math64.h"
#include "vdso/datapage.h"
#include "vdso/upstream_reader.h"

namespace vdsolab::host {
namespace {

// A TSC that makes the vDSO counter `target` (approximately, for kvm-clock:
// the inverse of pvclock_scale_delta, which rounds).
uint64_t TscFor(const LiveSnapshot& s, uint64_t target) {
  if (s.pvclock_page.empty()) return target;
  const auto& p = s.pvclock_page;
  const uint64_t system_time = Load64(p, vdso::kPvtiSystemTime);
  const uint32_t mul = Load32(p, vdso::kPvtiMul);
  const int shift = static_cast<int8_t>(p[vdso::kPvtiShift]);
  const unsigned __int128 ns = target - system_time;  // Wraps if below.
  unsigned __int128 delta = (ns << 32) / (mul == 0 ? 1 : mul);
  delta = shift < 0 ? delta << -shift : delta >> shift;
  return Load64(p, vdso::kPvtiTscTimestamp) + static_cast<uint64_t>(delta);
}

}  // namespace

const char* RegimeName(Regime r) {
  switch (r) {
    case Regime::kLive:
      return "live counter";
    case Regime::kAhead:
      return "ahead, within max_cycles";
    case Regime::kBeyondMaxCycles:
      return "beyond max_cycles";
    case Regime::kBehind:
      return "behind cycle_last";
    case Regime::kNear2p62:
      return "cycle_last + 2^62";
    case Regime::kNear2p63:
      return "near 2^63";
    case Regime::kFarBehind:
      return "far behind";
  }
  return "?";
}

uint64_t VdsoCounter(const LiveSnapshot& s, uint64_t tsc) {
  if (s.pvclock_page.empty()) return tsc & kS64Max;
  FixedTscAccess access{tsc};
  const std::optional<uint64_t> ns =
      vdso::upstream::upstream_internal::VreadPvclock(access,
                                                      s.pvclock_page.data());
  return ns.value_or(kU64Max);
}

uint64_t ChooseTsc(Regime r, const LiveSnapshot& s, uint64_t live, Rng& rng) {
  const uint32_t hres = vdso::ClockDataOffset(vdso::kCsHresCoarse);
  const uint64_t last = Load64(s.time_page, hres + vdso::kVcCycleLast);
  const uint64_t max = Load64(s.time_page, hres + vdso::kVcMaxCycles);
  switch (r) {
    case Regime::kLive:
      return live;
    case Regime::kAhead:
      return TscFor(s, last + rng.InRange(0, max));
    case Regime::kBeyondMaxCycles:
      return TscFor(s, last + max + 1 + rng.InRange(0, max * 64));
    case Regime::kBehind: {
      // On kvm-clock, only values between the hypervisor's system_time and
      // cycle_last are reachable below cycle_last.
      uint64_t floor = 0;
      if (!s.pvclock_page.empty()) {
        floor = Load64(s.pvclock_page, vdso::kPvtiSystemTime);
      }
      if (last <= floor + 1) return TscFor(s, last);
      const uint64_t span = std::min<uint64_t>(last - floor - 1, 1ull << 32);
      return TscFor(s, last - 1 - rng.InRange(0, span - 1));
    }
    case Regime::kNear2p62: {
      // At or just past 2^62, where the x86 vDSO's bit-62 filter clamps.
      // (Just below it the overflow-safe multiply yields ~2^62 ns, and the
      // host code's __iter_div_u64_rem() loops 4.6e9 times.) The inverse of
      // the pvclock scaling rounds down: step up until it is past.
      const uint64_t target = last + (1ull << 62) + rng.InRange(0, 1ull << 21);
      uint64_t tsc = TscFor(s, target);
      for (int i = 0;
           i < 64 && ((VdsoCounter(s, tsc) - last) & (1ull << 62)) == 0; ++i) {
        tsc += 4;
      }
      return tsc;
    }
    case Regime::kNear2p63:
      if (!s.pvclock_page.empty()) {
        // kvm-clock cannot reach 2^63: take TSC deltas past 2^63 instead
        // (the pvclock scaling's top bit), which land past 2^62 ns.
        return Load64(s.pvclock_page, vdso::kPvtiTscTimestamp) + (1ull << 63) +
               (1ull << 62) + rng.InRange(0, 1ull << 20);
      }
      // The TSC's sign bit: S64_MAX masking turns values past 2^63 into
      // negative motion.
      return (1ull << 63) - (1ull << 20) + rng.InRange(0, 1ull << 21);
    case Regime::kFarBehind:
      if (!s.pvclock_page.empty()) {
        // A vCPU whose TSC reads before the hypervisor's timestamp: the
        // TSC delta pvclock scales is negative.
        const uint64_t stamp = Load64(s.pvclock_page, vdso::kPvtiTscTimestamp);
        return stamp - 1 - rng.InRange(0, 1ull << 24);
      }
      return last - (1ull << 40) - rng.InRange(0, 1ull << 20);
  }
  return live;
}

LiveSnapshot FastPvclockPage(const LiveSnapshot& snap, Rng& rng) {
  LiveSnapshot fast = snap;
  fast.pvclock_page[vdso::kPvtiShift] = static_cast<uint8_t>(-2);
  const uint32_t mul =
      0x80000000u + static_cast<uint32_t>(rng.Below(0x80000000u));
  std::memcpy(fast.pvclock_page.data() + vdso::kPvtiMul, &mul, 4);
  return fast;
}

bool TooFarAhead(const LiveSnapshot& page, uint64_t tsc) {
  const uint64_t ahead =
      VdsoCounter(page, tsc) - Load64(page.time_page, vdso::kVcCycleLast);
  const uint32_t mult = Load32(page.time_page, vdso::kVcMult);
  const uint32_t shift = Load32(page.time_page, vdso::kVcShift);
  return (ahead & (1ull << 62)) == 0 &&
         ((static_cast<unsigned __int128>(ahead) * mult) >> shift) >
             static_cast<unsigned __int128>(10000000) * kNsecPerSec;
}

}  // namespace vdsolab::host
