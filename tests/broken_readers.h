// File: tests/broken_readers.h
//
// Deliberately broken vDSO readers, for tests only: the checks must catch
// them. Each reuses the upstream reader's pieces and removes one thing.

#ifndef VDSOLAB_TESTS_BROKEN_READERS_H_
#define VDSOLAB_TESTS_BROKEN_READERS_H_

#include <memory>
#include <optional>
#include <string_view>

#include "common/clock_result.h"
#include "common/math64.h"
#include "variants/upstream.h"
#include "variants/variant.h"
#include "vdso/access.h"
#include "vdso/upstream_reader.h"

namespace vdsolab::testing {

// The record an hres clock (the ones do_hres() reads) is read from, or
// nullptr for the clocks the broken readers leave to the upstream reader.
inline const uint8_t* HresRecord(const uint8_t* vd, ClockId clock) {
  const bool hres = clock >= 0 && clock < kMaxClocks &&
                    ((1u << clock) & (kVdsoHres | kVdsoRaw)) != 0;
  if (!hres) return nullptr;
  return vd + vdso::ClockDataOffset(clock == kClockMonotonicRaw
                                        ? vdso::kCsRaw
                                        : vdso::kCsHresCoarse);
}

// The upstream variant (same layout and writer) with another reader.
inline variants::Variant* BrokenUpstream(
    std::string_view name, std::string_view summary,
    std::unique_ptr<variants::SimReader> (*make)()) {
  auto* v = new variants::Variant(variants::UpstreamVariant());
  v->name = name;
  v->summary = summary;
  v->make_sim_reader = make;
  v->native_loop = nullptr;
  return v;
}

// do_hres()'s seq loop, of the upstream reader's pieces: true with `sec`
// and `ns` read under one even seq; false: the syscall; nullopt:
// abandoned. `begin(acc, vc)` and `retry(acc, vc, seq)` are
// vdso_read_begin() and vdso_read_retry(), or a broken reader's own. What
// a broken reader does after it is its own.
template <vdso::VdsoAccess A, class Begin, class Retry>
std::optional<bool> HresSeqLoopWith(A& acc, const uint8_t* vd,
                                    const uint8_t* vc, ClockId clock,
                                    uint64_t* sec, uint64_t* ns, Begin begin,
                                    Retry retry) {
  namespace internal = vdso::upstream::upstream_internal;
  for (;;) {
    const std::optional<uint32_t> seq = begin(acc, vc);
    if (!seq) return std::nullopt;
    const std::optional<bool> ok =
        internal::GetTimestamp(acc, vd, vc, clock, sec, ns);
    if (!ok || !*ok) return ok;
    if (!retry(acc, vc, *seq)) return true;
    if (!acc.MayRetry()) return std::nullopt;
  }
}

// What a reader answers after its seq loop: nullopt when abandoned, the
// syscall's answer when the loop said so, else `sec` and `ns` as
// vdso_set_timespec() makes them.
template <vdso::VdsoAccess A>
std::optional<ClockResult> SeqLoopAnswer(A& acc, ClockId clock,
                                         std::optional<bool> ok, uint64_t sec,
                                         uint64_t ns) {
  if (!ok) return std::nullopt;
  if (!*ok) return acc.Fallback(clock);
  return ClockResult::Ok(
      vdso::upstream::upstream_internal::SetTimespec(sec, ns));
}

template <vdso::VdsoAccess A>
std::optional<bool> HresSeqLoop(A& acc, const uint8_t* vd, const uint8_t* vc,
                                ClockId clock, uint64_t* sec, uint64_t* ns) {
  namespace internal = vdso::upstream::upstream_internal;
  return HresSeqLoopWith(
      acc, vd, vc, clock, sec, ns,
      [](A& a, const uint8_t* c) { return internal::ReadBegin(a, c); },
      [](A& a, const uint8_t* c, uint32_t seq) {
        return internal::ReadRetry(a, c, seq);
      });
}

// The upstream variant with the reader `Fn` (and `QuietFn`, the same
// through vdso::QuietAccess): made once per pair, for the process's life.
template <auto Fn, auto QuietFn>
const variants::Variant& BrokenVariant(std::string_view name,
                                       std::string_view summary) {
  static const variants::Variant* variant =
      BrokenUpstream(name, summary, variants::MakeStateless<Fn, QuietFn>);
  return *variant;
}

// The upstream reader without the seq retry: one pass over the data, no
// matter what the writer did meanwhile (and no wait on an odd seq).
template <vdso::VdsoAccess A>
std::optional<ClockResult> NoSeqRetryClockGettime(A& acc, const uint8_t* vd,
                                                  ClockId clock) {
  namespace internal = vdso::upstream::upstream_internal;
  const uint8_t* vc = HresRecord(vd, clock);
  if (vc == nullptr) return vdso::upstream::ClockGettime(acc, vd, clock);
  (void)acc.template Load<uint32_t>(vc + vdso::kVcSeq);  // Read, not used.
  uint64_t sec = 0, ns = 0;
  const std::optional<bool> ok =
      internal::GetTimestamp(acc, vd, vc, clock, &sec, &ns);
  return SeqLoopAnswer(acc, clock, ok, sec, ns);
}

inline const variants::Variant& NoSeqRetryVariant() {
  return BrokenVariant<NoSeqRetryClockGettime<vdso::HookedAccess>,
                       NoSeqRetryClockGettime<vdso::QuietAccess>>(
      "test-no-seq-retry",
      "the upstream reader without its seq retry (tests only)");
}

// The upstream reader answering CLOCK_BOOTTIME from CLOCK_MONOTONIC's base
// (a patch that indexes basetime[] with the wrong clock): right until a
// suspend moves BOOTTIME off MONOTONIC.
template <vdso::VdsoAccess A>
std::optional<ClockResult> BoottimeFromMonotonicClockGettime(A& acc,
                                                             const uint8_t* vd,
                                                             ClockId clock) {
  return vdso::upstream::ClockGettime(
      acc, vd, clock == kClockBoottime ? kClockMonotonic : clock);
}

inline const variants::Variant& BoottimeFromMonotonicVariant() {
  return BrokenVariant<BoottimeFromMonotonicClockGettime<vdso::HookedAccess>,
                       BoottimeFromMonotonicClockGettime<vdso::QuietAccess>>(
      "test-boottime-from-monotonic",
      "the upstream reader answering BOOTTIME from MONOTONIC's base (tests "
      "only)");
}

// The upstream reader's do_hres() whose timespec normalisation tests `ns >
// NSEC_PER_SEC` instead of `>=`: a nanosecond sum of exactly 10^9 is left
// as tv_nsec = 10^9 (the other clocks as upstream).
template <vdso::VdsoAccess A>
std::optional<ClockResult> NsecNotNormalisedClockGettime(A& acc,
                                                         const uint8_t* vd,
                                                         ClockId clock) {
  const uint8_t* vc = HresRecord(vd, clock);
  if (vc == nullptr) return vdso::upstream::ClockGettime(acc, vd, clock);
  uint64_t sec = 0, ns = 0;
  const std::optional<bool> ok = HresSeqLoop(acc, vd, vc, clock, &sec, &ns);
  if (!ok) return std::nullopt;
  if (!*ok) return acc.Fallback(clock);
  while (ns > kNsecPerSec) {
    ns -= kNsecPerSec;
    ++sec;
  }
  return ClockResult::Ok(
      Timespec64{static_cast<int64_t>(sec), static_cast<int64_t>(ns)});
}

inline const variants::Variant& NsecNotNormalisedVariant() {
  return BrokenVariant<NsecNotNormalisedClockGettime<vdso::HookedAccess>,
                       NsecNotNormalisedClockGettime<vdso::QuietAccess>>(
      "test-nsec-not-normalised",
      "the upstream reader normalising with ns > NSEC_PER_SEC (tests only)");
}

// The upstream reader waiting on the wrong bit of the seq (`seq & 2` for
// `seq & 1` in do_hres()'s spin): on a page whose seq is even with bit 1
// set it spins until an update moves the seq on, for good on a settled
// page, and every turn of its loop is a load the writer may land a store
// before.
template <vdso::VdsoAccess A>
std::optional<ClockResult> WaitsOnBitOneClockGettime(A& acc, const uint8_t* vd,
                                                     ClockId clock) {
  namespace internal = vdso::upstream::upstream_internal;
  const uint8_t* vc = HresRecord(vd, clock);
  if (vc == nullptr) return vdso::upstream::ClockGettime(acc, vd, clock);
  uint64_t sec = 0, ns = 0;
  const std::optional<bool> ok = HresSeqLoopWith(
      acc, vd, vc, clock, &sec, &ns,
      [](A& a, const uint8_t* c) -> std::optional<uint32_t> {
        uint32_t seq;
        while (((seq = a.template Load<uint32_t>(c + vdso::kVcSeq)) & 2) != 0) {
          if (!a.MayRetry()) return std::nullopt;
        }
        a.Rmb();
        return seq;
      },
      [](A& a, const uint8_t* c, uint32_t seq) {
        return internal::ReadRetry(a, c, seq);
      });
  return SeqLoopAnswer(acc, clock, ok, sec, ns);
}

inline const variants::Variant& WaitsOnBitOneVariant() {
  return BrokenVariant<WaitsOnBitOneClockGettime<vdso::HookedAccess>,
                       WaitsOnBitOneClockGettime<vdso::QuietAccess>>(
      "test-waits-on-bit-one",
      "the upstream reader spinning while seq & 2 (tests only)");
}

// A reader whose seq re-check never passes (a patched vdso_read_retry()
// comparing with the wrong seq): it loads the seq until the livelock
// budget is spent, on every call.
template <vdso::VdsoAccess A>
std::optional<ClockResult> NeverPastTheRetryClockGettime(A& acc,
                                                         const uint8_t* vd,
                                                         ClockId) {
  do {
    (void)acc.template Load<uint32_t>(vd + vdso::kVcSeq);
  } while (acc.MayRetry());
  return std::nullopt;
}

inline const variants::Variant& NeverPastTheRetryVariant() {
  return BrokenVariant<NeverPastTheRetryClockGettime<vdso::HookedAccess>,
                       NeverPastTheRetryClockGettime<vdso::QuietAccess>>(
      "test-never-past-the-retry",
      "a reader whose seq re-check never passes (tests only)");
}

// The upstream reader, but CLOCK_REALTIME_COARSE never gets past its
// retry (a patch that broke do_coarse()'s re-check only): the other
// clocks answer, so its abandoned calls are never many in a row.
template <vdso::VdsoAccess A>
std::optional<ClockResult> CoarseNeverPastTheRetryClockGettime(
    A& acc, const uint8_t* vd, ClockId clock) {
  if (clock != kClockRealtimeCoarse) {
    return vdso::upstream::ClockGettime(acc, vd, clock);
  }
  return NeverPastTheRetryClockGettime(acc, vd, clock);
}

inline const variants::Variant& CoarseNeverPastTheRetryVariant() {
  return BrokenVariant<CoarseNeverPastTheRetryClockGettime<vdso::HookedAccess>,
                       CoarseNeverPastTheRetryClockGettime<vdso::QuietAccess>>(
      "test-coarse-never-past-the-retry",
      "a reader whose REALTIME_COARSE re-check never passes (tests only)");
}

// The upstream reader, but its CLOCK_MONOTONIC calls end as foreign code
// the watchdog stopped (what a plugin or tree call that spins or blocks
// reports): each costs the watchdog's bound in real time.
template <vdso::VdsoAccess A>
std::optional<ClockResult> MonotonicStoppedByTheWatchdogClockGettime(
    A& acc, const uint8_t* vd, ClockId clock) {
  if (clock != kClockMonotonic) {
    return vdso::upstream::ClockGettime(acc, vd, clock);
  }
  vdso::CallFault spun;
  spun.kind = vdso::CallFault::Kind::kSpin;
  spun.seconds = 1.0;
  acc.Fault(spun);
  return std::nullopt;
}

inline const variants::Variant& MonotonicStoppedByTheWatchdogVariant() {
  return BrokenVariant<
      MonotonicStoppedByTheWatchdogClockGettime<vdso::HookedAccess>,
      MonotonicStoppedByTheWatchdogClockGettime<vdso::QuietAccess>>(
      "test-monotonic-stopped-by-the-watchdog",
      "a reader whose MONOTONIC calls the watchdog stops (tests only)");
}

// A reader without the negative-motion clamp whose conversion of a counter
// behind cycle_last spins (6.12's __iter_div_u64_rem() over a ~2^63-cycle
// delta), stopped by the watchdog; from a counter at or past cycle_last,
// the upstream reader.
template <vdso::VdsoAccess A>
std::optional<ClockResult> SpinsBehindCycleLastClockGettime(A& acc,
                                                            const uint8_t* vd,
                                                            ClockId clock) {
  namespace internal = vdso::upstream::upstream_internal;
  const uint8_t* vc = HresRecord(vd, clock);
  if (vc == nullptr) return vdso::upstream::ClockGettime(acc, vd, clock);
  if (!internal::ReadBegin(acc, vc)) return std::nullopt;
  const int32_t mode = static_cast<int32_t>(
      acc.template Load<uint32_t>(vc + vdso::kVcClockMode));
  uint64_t counter = 0;
  if (!internal::ArchGetHwCounter(acc, mode, vd, &counter)) return std::nullopt;
  if (counter < acc.template Load<uint64_t>(vc + vdso::kVcCycleLast)) {
    vdso::CallFault spun;
    spun.kind = vdso::CallFault::Kind::kSpin;
    spun.seconds = 1.0;
    acc.Fault(spun);
    return std::nullopt;
  }
  return vdso::upstream::ClockGettime(acc, vd, clock);
}

inline const variants::Variant& SpinsBehindCycleLastVariant() {
  return BrokenVariant<SpinsBehindCycleLastClockGettime<vdso::HookedAccess>,
                       SpinsBehindCycleLastClockGettime<vdso::QuietAccess>>(
      "test-spins-behind-cycle-last",
      "a reader that spins on a counter behind cycle_last (tests only)");
}

// The upstream reader, but CLOCK_MONOTONIC goes to the syscall fallback
// with another clock (a patch that passes a constant, or the wrong
// variable, to clock_gettime_fallback()): CLOCK_MONOTONIC_RAW's answer,
// near CLOCK_MONOTONIC's but not the same.
template <vdso::VdsoAccess A>
std::optional<ClockResult> WrongClockFallbackClockGettime(A& acc,
                                                          const uint8_t* vd,
                                                          ClockId clock) {
  if (clock == kClockMonotonic) return acc.Fallback(kClockMonotonicRaw);
  return vdso::upstream::ClockGettime(acc, vd, clock);
}

inline const variants::Variant& WrongClockFallbackVariant() {
  return BrokenVariant<WrongClockFallbackClockGettime<vdso::HookedAccess>,
                       WrongClockFallbackClockGettime<vdso::QuietAccess>>(
      "test-wrong-clock-fallback",
      "the upstream reader falling back with another clock (tests only)");
}

// The upstream reader's hres loop with vdso_read_retry() missing its
// smp_rmb(): the re-check of seq may be satisfied before the data loads
// it should validate, so under relaxed ordering a write can slip in
// between unseen. In program order the reader is correct.
template <vdso::VdsoAccess A>
std::optional<ClockResult> NoRetryBarrierClockGettime(A& acc, const uint8_t* vd,
                                                      ClockId clock) {
  namespace internal = vdso::upstream::upstream_internal;
  const uint8_t* vc = HresRecord(vd, clock);
  if (vc == nullptr) return vdso::upstream::ClockGettime(acc, vd, clock);
  uint64_t sec = 0, ns = 0;
  const std::optional<bool> ok = HresSeqLoopWith(
      acc, vd, vc, clock, &sec, &ns,
      [](A& a, const uint8_t* c) { return internal::ReadBegin(a, c); },
      [](A& a, const uint8_t* c, uint32_t seq) {
        return a.template Load<uint32_t>(c + vdso::kVcSeq) != seq;
      });
  return SeqLoopAnswer(acc, clock, ok, sec, ns);
}

inline const variants::Variant& NoRetryBarrierVariant() {
  return BrokenVariant<NoRetryBarrierClockGettime<vdso::HookedAccess>,
                       NoRetryBarrierClockGettime<vdso::QuietAccess>>(
      "test-no-retry-barrier",
      "the upstream reader without vdso_read_retry()'s smp_rmb() (tests only)");
}

// The upstream reader with basetime sec loaded after the seq loop (the
// loop validates ns only): wrong only when an update that lands between
// the retry check and that load moves sec, i.e. at a second boundary.
template <vdso::VdsoAccess A>
std::optional<ClockResult> SecAfterLoopClockGettime(A& acc, const uint8_t* vd,
                                                    ClockId clock) {
  namespace internal = vdso::upstream::upstream_internal;
  const uint8_t* vc = HresRecord(vd, clock);
  if (vc == nullptr) return vdso::upstream::ClockGettime(acc, vd, clock);
  uint64_t sec = 0, ns = 0;
  const std::optional<bool> ok = HresSeqLoop(acc, vd, vc, clock, &sec, &ns);
  if (!ok) return std::nullopt;
  if (!*ok) return acc.Fallback(clock);
  sec = acc.template Load<uint64_t>(vc + vdso::VcBasetimeSec(clock));
  return ClockResult::Ok(internal::SetTimespec(sec, ns));
}

inline const variants::Variant& SecAfterLoopVariant() {
  return BrokenVariant<SecAfterLoopClockGettime<vdso::HookedAccess>,
                       SecAfterLoopClockGettime<vdso::QuietAccess>>(
      "test-sec-after-loop",
      "the upstream reader loading basetime sec after its seq loop (tests "
      "only)");
}

// The upstream reader whose do_aux() makes one pass over the aux record
// and does not re-check its seq (the other clocks as upstream).
template <vdso::VdsoAccess A>
std::optional<ClockResult> NoAuxRetryClockGettime(A& acc, const uint8_t* vd,
                                                  ClockId clock) {
  namespace internal = vdso::upstream::upstream_internal;
  if (clock < kClockAux || clock > kClockAuxLast) {
    return vdso::upstream::ClockGettime(acc, vd, clock);
  }
  const uint8_t* vc = vd + vdso::AuxClockDataOffset(clock - kClockAux);
  (void)acc.template Load<uint32_t>(vc + vdso::kVcSeq);  // Read, not used.
  const int32_t mode = static_cast<int32_t>(
      acc.template Load<uint32_t>(vc + vdso::kVcClockMode));
  if (mode == vdso::upstream::kClockModeNone) return acc.Fallback(clock);
  uint64_t sec = 0, ns = 0;
  const std::optional<bool> ok =
      internal::GetTimestamp(acc, vd, vc, vdso::kVdsoBaseAux, &sec, &ns);
  return SeqLoopAnswer(acc, clock, ok, sec, ns);
}

inline const variants::Variant& NoAuxRetryVariant() {
  return BrokenVariant<NoAuxRetryClockGettime<vdso::HookedAccess>,
                       NoAuxRetryClockGettime<vdso::QuietAccess>>(
      "test-no-aux-retry",
      "the upstream reader without do_aux()'s seq retry (tests only)");
}

// How a broken vread_pvclock() departs from the kernel's.
enum class PvclockFlaw {
  kNoVersionRecheck,  // pvclock_read_retry() dropped: one pass, unchecked.
  kNoRetryBarrier,    // pvclock_read_retry() without its virt_rmb().
  kNoBeginBarrier,    // pvclock_read_begin() without its virt_rmb().
  // arch_vdso_cycles_ok() as `cycles != 0`: vread_pvclock()'s U64_MAX
  // (no PVCLOCK_TSC_STABLE_BIT) is taken for a counter.
  kCyclesOkNonZero,
  // The PVCLOCK_TSC_STABLE_BIT check dropped: vCPU 0's page is used from
  // every CPU even when the TSCs are not promised to agree.
  kNoStableCheck,
};

// vread_pvclock() with `flaw` (the upstream reader's otherwise).
template <PvclockFlaw kFlaw, vdso::VdsoAccess A>
std::optional<uint64_t> FlawedVreadPvclock(A& acc, const uint8_t* pvti) {
  for (;;) {
    const uint32_t version =
        acc.template Load<uint32_t>(pvti + vdso::kPvtiVersion) & ~1u;
    if constexpr (kFlaw != PvclockFlaw::kNoBeginBarrier) acc.Rmb();
    if (kFlaw != PvclockFlaw::kNoStableCheck &&
        (acc.template Load<uint8_t>(pvti + vdso::kPvtiFlags) &
         vdso::kPvclockTscStableBit) == 0) {
      return kU64Max;
    }
    const uint64_t tsc = acc.ReadTsc();
    uint64_t delta =
        tsc - acc.template Load<uint64_t>(pvti + vdso::kPvtiTscTimestamp);
    if (static_cast<int64_t>(delta) < 0) delta = 0;
    const uint32_t mul = acc.template Load<uint32_t>(pvti + vdso::kPvtiMul);
    const int8_t shift = static_cast<int8_t>(
        acc.template Load<uint8_t>(pvti + vdso::kPvtiShift));
    const uint64_t ret =
        acc.template Load<uint64_t>(pvti + vdso::kPvtiSystemTime) +
        vdso::upstream::upstream_internal::PvclockScaleDelta(delta, mul, shift);
    if constexpr (kFlaw == PvclockFlaw::kNoVersionRecheck) return ret & kS64Max;
    if constexpr (kFlaw != PvclockFlaw::kNoRetryBarrier) acc.Rmb();
    if (version == acc.template Load<uint32_t>(pvti + vdso::kPvtiVersion)) {
      return ret & kS64Max;
    }
    if (!acc.MayRetry()) return std::nullopt;
  }
}

// The upstream reader with FlawedVreadPvclock() in PVCLOCK mode (the hres
// clocks; the rest, and the other modes, as upstream).
template <PvclockFlaw kFlaw, vdso::VdsoAccess A>
std::optional<ClockResult> FlawedPvclockClockGettime(A& acc, const uint8_t* vd,
                                                     ClockId clock) {
  namespace internal = vdso::upstream::upstream_internal;
  const uint8_t* vc = HresRecord(vd, clock);
  if (vc == nullptr) return vdso::upstream::ClockGettime(acc, vd, clock);
  uint64_t sec = 0, ns = 0;
  for (;;) {
    const std::optional<uint32_t> seq = internal::ReadBegin(acc, vc);
    if (!seq) return std::nullopt;
    const int32_t mode = static_cast<int32_t>(
        acc.template Load<uint32_t>(vc + vdso::kVcClockMode));
    if (mode != vdso::upstream::kClockModePvclock) {
      return vdso::upstream::ClockGettime(acc, vd, clock);
    }
    acc.Rmb();
    const std::optional<uint64_t> cycles =
        FlawedVreadPvclock<kFlaw>(acc, vd + vdso::kPvclockPageOffset);
    if (!cycles) return std::nullopt;
    const bool cycles_ok = kFlaw == PvclockFlaw::kCyclesOkNonZero
                               ? *cycles != 0
                               : internal::CyclesOk(*cycles);
    if (!cycles_ok) return acc.Fallback(clock);
    const uint64_t base =
        acc.template Load<uint64_t>(vc + vdso::VcBasetimeNsec(clock));
    ns = internal::CalcNs(acc, vc, *cycles, base);
    sec = acc.template Load<uint64_t>(vc + vdso::VcBasetimeSec(clock));
    if (!internal::ReadRetry(acc, vc, *seq)) break;
    if (!acc.MayRetry()) return std::nullopt;
  }
  return ClockResult::Ok(internal::SetTimespec(sec, ns));
}

// The upstream variant whose reader has vread_pvclock() flaw kFlaw.
template <PvclockFlaw kFlaw>
const variants::Variant& FlawedPvclockVariant(std::string_view name,
                                              std::string_view summary) {
  return BrokenVariant<FlawedPvclockClockGettime<kFlaw, vdso::HookedAccess>,
                       FlawedPvclockClockGettime<kFlaw, vdso::QuietAccess>>(
      name, summary);
}

inline const variants::Variant& NoPvclockRecheckVariant() {
  return FlawedPvclockVariant<PvclockFlaw::kNoVersionRecheck>(
      "test-no-pvclock-recheck",
      "the upstream reader whose vread_pvclock() does not re-check the "
      "pvti version (tests only)");
}

inline const variants::Variant& NoPvclockBarrierVariant() {
  return FlawedPvclockVariant<PvclockFlaw::kNoRetryBarrier>(
      "test-no-pvclock-barrier",
      "the upstream reader whose vread_pvclock() re-checks the pvti version "
      "without virt_rmb() first (tests only)");
}

inline const variants::Variant& NoPvclockBeginBarrierVariant() {
  return FlawedPvclockVariant<PvclockFlaw::kNoBeginBarrier>(
      "test-no-pvclock-begin-barrier",
      "the upstream reader whose vread_pvclock() has no virt_rmb() after "
      "its first version load (tests only)");
}

inline const variants::Variant& CyclesOkNonZeroVariant() {
  return FlawedPvclockVariant<PvclockFlaw::kCyclesOkNonZero>(
      "test-cycles-ok-nonzero",
      "the upstream reader whose arch_vdso_cycles_ok() is `cycles != 0` "
      "(tests only)");
}

inline const variants::Variant& NoPvclockStableCheckVariant() {
  return FlawedPvclockVariant<PvclockFlaw::kNoStableCheck>(
      "test-no-pvclock-stable-check",
      "the upstream reader whose vread_pvclock() ignores "
      "PVCLOCK_TSC_STABLE_BIT (tests only)");
}

// do_hres() with the cycle delta truncated to 32 bits (a kernel
// developer's patch: `(u32)(cycles - last) * mult`), on a TSC-mode page:
// right while the delta stays under 2^32 cycles (1.65 s at 2.6 GHz), whole
// seconds short past it, until the next tick.
template <vdso::VdsoAccess A>
std::optional<ClockResult> Delta32ClockGettime(A& acc, const uint8_t* vd,
                                               ClockId clock) {
  namespace up = vdso::upstream;
  namespace internal = up::upstream_internal;
  const uint8_t* vc = HresRecord(vd, clock);
  if (vc == nullptr) return up::ClockGettime(acc, vd, clock);
  uint64_t sec = 0, ns = 0;
  for (;;) {
    const std::optional<uint32_t> seq = internal::ReadBegin(acc, vc);
    if (!seq) return std::nullopt;
    if (static_cast<int32_t>(acc.template Load<uint32_t>(
            vc + vdso::kVcClockMode)) != up::kClockModeTsc) {
      return acc.Fallback(clock);
    }
    const uint64_t cycles = acc.ReadTsc();
    const uint64_t last = acc.template Load<uint64_t>(vc + vdso::kVcCycleLast);
    const uint32_t mult = acc.template Load<uint32_t>(vc + vdso::kVcMult);
    const uint32_t shift = acc.template Load<uint32_t>(vc + vdso::kVcShift);
    const uint64_t base =
        acc.template Load<uint64_t>(vc + vdso::VcBasetimeNsec(clock));
    const uint64_t delta = static_cast<uint32_t>(cycles - last);
    ns = (base + delta * mult) >> shift;
    sec = acc.template Load<uint64_t>(vc + vdso::VcBasetimeSec(clock));
    if (!internal::ReadRetry(acc, vc, *seq)) break;
    if (!acc.MayRetry()) return std::nullopt;
  }
  return ClockResult::Ok(internal::SetTimespec(sec, ns));
}

inline const variants::Variant& Delta32Variant() {
  return BrokenVariant<Delta32ClockGettime<vdso::HookedAccess>,
                       Delta32ClockGettime<vdso::QuietAccess>>(
      "test-delta-32", "do_hres() with a 32-bit cycle delta (tests only)");
}

// The upstream reader whose do_hres_timens() loads the page's basetime sec
// before its seq loop (a kernel developer's patch to 6.1): outside a
// namespace it is upstream; inside, its sec is a second off when an update
// carries the page's basetime into a new second during the call.
template <vdso::VdsoAccess A>
std::optional<ClockResult> TimensSecOutsideLoopClockGettime(A& acc,
                                                            const uint8_t* vdns,
                                                            ClockId clock) {
  namespace up = vdso::upstream;
  namespace internal = up::upstream_internal;
  const uint8_t* vcns = HresRecord(vdns, clock);
  if (vcns == nullptr) return up::ClockGettime(acc, vdns, clock);
  if (static_cast<int32_t>(acc.template Load<uint32_t>(
          vcns + vdso::kVcClockMode)) != up::kClockModeTimens) {
    return up::ClockGettime(acc, vdns, clock);
  }
  const uint8_t* vc = vdns + vdso::kPageSize + (vcns - vdns);
  uint64_t early_sec =
      acc.template Load<uint64_t>(vc + vdso::VcBasetimeSec(clock));
  uint64_t sec = 0, ns = 0;
  for (;;) {
    const std::optional<uint32_t> seq = internal::ReadBegin(acc, vc);
    if (!seq) return std::nullopt;
    const std::optional<bool> ok =
        internal::GetTimestamp(acc, vdns, vc, clock, &sec, &ns);
    if (!ok) return std::nullopt;
    if (!*ok) return acc.Fallback(clock);
    if (!internal::ReadRetry(acc, vc, *seq)) break;
    if (!acc.MayRetry()) return std::nullopt;
  }
  internal::AddTimensOffset(acc, vcns, clock, &early_sec, &ns);
  return ClockResult::Ok(internal::SetTimespec(early_sec, ns));
}

inline const variants::Variant& TimensSecOutsideLoopVariant() {
  return BrokenVariant<TimensSecOutsideLoopClockGettime<vdso::HookedAccess>,
                       TimensSecOutsideLoopClockGettime<vdso::QuietAccess>>(
      "test-timens-sec-outside-loop",
      "the upstream reader loading the page's sec before do_hres_timens()'s "
      "seq loop (tests only)");
}

// Where a broken reader goes to the syscall although lib/vdso answers from
// the page (each a kernel-tree mutant that once passed every check).
enum class FastPathLoss {
  // The 6.5 masking fix reverted in a 6.5+ reader: a TSC with bit 63 set
  // fails vdso_cycles_ok() (`rdtsc_ordered() & S64_MAX` -> `& U64_MAX`).
  kBit63,
  // PVCLOCK mode taken for a clocksource the vDSO cannot read
  // (`clock_mode == VDSO_CLOCKMODE_PVCLOCK` inverted).
  kPvclock,
  // do_hres_timens()/do_coarse_timens() answering "use the syscall".
  kTimens,
  // The pre-6.5 sign test applied to the raw TSC in PVCLOCK mode too
  // (where vdso_cycles_ok() sees vread_pvclock()'s value, not the TSC).
  kPvclockBit63,
};

// The upstream reader, except that it falls back where `kLoss` says first
// (a look at seq, the clock mode and, for kBit63, the counter; upstream's
// own reads follow).
template <FastPathLoss kLoss, vdso::VdsoAccess A>
std::optional<ClockResult> FastPathLostClockGettime(A& acc, const uint8_t* vd,
                                                    ClockId clock) {
  const uint8_t* vc = HresRecord(vd, clock);
  if (vc == nullptr && kLoss == FastPathLoss::kTimens &&
      (clock == kClockRealtimeCoarse || clock == kClockMonotonicCoarse)) {
    vc = vd + vdso::ClockDataOffset(vdso::kCsHresCoarse);
  }
  if (vc == nullptr) return vdso::upstream::ClockGettime(acc, vd, clock);
  const uint32_t seq = acc.template Load<uint32_t>(vc + vdso::kVcSeq);
  const int32_t mode = static_cast<int32_t>(
      acc.template Load<uint32_t>(vc + vdso::kVcClockMode));
  namespace up = vdso::upstream;
  switch (kLoss) {
    case FastPathLoss::kBit63:
      if (mode == up::kClockModeTsc &&
          static_cast<int64_t>(acc.ReadTsc()) < 0) {
        return acc.Fallback(clock);
      }
      break;
    case FastPathLoss::kPvclock:
      if (mode == up::kClockModePvclock) return acc.Fallback(clock);
      break;
    case FastPathLoss::kPvclockBit63:
      if (mode == up::kClockModePvclock &&
          static_cast<int64_t>(acc.ReadTsc()) < 0) {
        return acc.Fallback(clock);
      }
      break;
    case FastPathLoss::kTimens:
      if ((seq & 1) != 0 && mode == up::kClockModeTimens) {
        return acc.Fallback(clock);
      }
      break;
  }
  return up::ClockGettime(acc, vd, clock);
}

template <FastPathLoss kLoss>
const variants::Variant& FastPathLostVariant(std::string_view name,
                                             std::string_view summary) {
  return BrokenVariant<FastPathLostClockGettime<kLoss, vdso::HookedAccess>,
                       FastPathLostClockGettime<kLoss, vdso::QuietAccess>>(
      name, summary);
}

}  // namespace vdsolab::testing

#endif  // VDSOLAB_TESTS_BROKEN_READERS_H_
