// File: host/counter_regimes.h
//
// The counter values `vdsolab conform` gives the host's vDSO code and
// vdsolab's reader: one regime at a time (the live counter; ahead of
// cycle_last within max_cycles; beyond it; behind it; near 2^62 and 2^63;
// far behind), each a TSC chosen for a copied page, through the pvclock
// page's scaling on kvm-clock.

#ifndef VDSOLAB_HOST_COUNTER_REGIMES_H_
#define VDSOLAB_HOST_COUNTER_REGIMES_H_

#include <cstdint>
#include <cstring>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/rng.h"
#include "host/live_vvar.h"
#include "vdso/access.h"

namespace vdsolab::host {

enum class Regime {
  kLive,             // The counter now.
  kAhead,            // cycle_last .. cycle_last + max_cycles.
  kBeyondMaxCycles,  // The overflow-safe multiply.
  kBehind,           // Negative motion: below cycle_last.
  kNear2p62,         // cycle_last + 2^62 and just past it.
  kNear2p63,         // TSC near 2^63 (its sign bit); on kvm-clock, TSC
                     // deltas past 2^63 + 2^62.
  kFarBehind,        // On kvm-clock, a TSC before the hypervisor's
                     // tsc_timestamp; in TSC mode, ~2^40 behind cycle_last.
};
inline constexpr int kNumRegimes = 7;
const char* RegimeName(Regime r);

// vdsolab's reader on a copied page with a chosen counter: plain loads of
// bytes that never change, every counter read answering `tsc`.
struct FixedTscAccess {
  uint64_t tsc;
  bool fell_back = false;
  template <class T>
  T Load(const uint8_t* p) const {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
  uint64_t ReadTsc() const { return tsc; }
  uint64_t ReadTscp() const { return tsc; }
  uint64_t ReadTscPlain() const { return tsc; }
  void Rmb() const {}
  void CpuRelax() const {}
  bool MayRetry() const { return true; }  // The copy never changes.
  ClockResult Fallback(ClockId) {
    fell_back = true;
    return ClockResult::Error(-kEinval);
  }
};
static_assert(vdso::VdsoAccess<FixedTscAccess>);

// The counter the vDSO converts for a given TSC: the TSC itself, or the
// kvm-clock nanoseconds the pvclock page gives for it.
uint64_t VdsoCounter(const LiveSnapshot& s, uint64_t tsc);

// A TSC in regime `r` for page `s`; `live` is the live regime's.
uint64_t ChooseTsc(Regime r, const LiveSnapshot& s, uint64_t live, Rng& rng);

// `snap` with the pvclock parameters of a TSC above 4 GHz (tsc_shift -2,
// a random multiplier): the far-behind regime's page on kvm-clock. The
// host code runs on them no less, and with them a TSC before
// tsc_timestamp tells pvclock arithmetic apart that a host's own
// parameters (shift -1) cannot.
LiveSnapshot FastPvclockPage(const LiveSnapshot& snap, Rng& rng);

// Whether the host code would spend seconds normalising the answer at
// `tsc` on `page` (it loops over whole seconds): such counters are skipped.
bool TooFarAhead(const LiveSnapshot& page, uint64_t tsc);

}  // namespace vdsolab::host

#endif  // VDSOLAB_HOST_COUNTER_REGIMES_H_
