// File: tests/broken_readers.h
//
// Deliberately broken vDSO readers, for tests only: the checks must catch
// them. Each reuses the upstream reader's pieces and removes one thing.

#ifndef VDSOLAB_TESTS_BROKEN_READERS_H_
#define VDSOLAB_TESTS_BROKEN_READERS_H_

#include <optional>

#include "common/clock_result.h"
#include "variants/upstream.h"
#include "variants/variant.h"
#include "vdso/access.h"
#include "vdso/upstream_reader.h"

namespace vdsolab::testing {

// The upstream reader without the seq retry: one pass over the data, no
// matter what the writer did meanwhile (and no wait on an odd seq).
template <vdso::VdsoAccess A>
std::optional<ClockResult> NoSeqRetryClockGettime(A& acc, const uint8_t* vd,
                                                  ClockId clock) {
  namespace internal = vdso::upstream::upstream_internal;
  const bool hres = clock >= 0 && clock < kMaxClocks &&
                    ((1u << clock) & (kVdsoHres | kVdsoRaw)) != 0;
  if (!hres) return vdso::upstream::ClockGettime(acc, vd, clock);
  const uint8_t* vc = vd + vdso::ClockDataOffset(clock == kClockMonotonicRaw
                                                     ? vdso::kCsRaw
                                                     : vdso::kCsHresCoarse);
  (void)acc.template Load<uint32_t>(vc + vdso::kVcSeq);  // Read, not used.
  uint64_t sec = 0, ns = 0;
  const std::optional<bool> ok =
      internal::GetTimestamp(acc, vd, vc, clock, &sec, &ns);
  if (!ok) return std::nullopt;
  if (!*ok) return acc.Fallback(clock);
  return ClockResult::Ok(internal::SetTimespec(sec, ns));
}

// The upstream variant with the reader above: same layout and writer.
inline const variants::Variant& NoSeqRetryVariant() {
  static const variants::Variant* variant = [] {
    auto* v = new variants::Variant(variants::UpstreamVariant());
    v->name = "test-no-seq-retry";
    v->summary = "the upstream reader without its seq retry (tests only)";
    v->make_sim_reader =
        variants::MakeStateless<NoSeqRetryClockGettime<vdso::HookedAccess>,
                                NoSeqRetryClockGettime<vdso::QuietAccess>>;
    v->native_loop = nullptr;
    return v;
  }();
  return *variant;
}

// The upstream reader's hres loop with vdso_read_retry() missing its
// smp_rmb(): the re-check of seq may be satisfied before the data loads
// it should validate, so under relaxed ordering a write can slip in
// between unseen. In program order the reader is correct.
template <vdso::VdsoAccess A>
std::optional<ClockResult> NoRetryBarrierClockGettime(A& acc, const uint8_t* vd,
                                                      ClockId clock) {
  namespace internal = vdso::upstream::upstream_internal;
  const bool hres = clock >= 0 && clock < kMaxClocks &&
                    ((1u << clock) & (kVdsoHres | kVdsoRaw)) != 0;
  if (!hres) return vdso::upstream::ClockGettime(acc, vd, clock);
  const uint8_t* vc = vd + vdso::ClockDataOffset(clock == kClockMonotonicRaw
                                                     ? vdso::kCsRaw
                                                     : vdso::kCsHresCoarse);
  uint64_t sec = 0, ns = 0;
  for (;;) {
    const std::optional<uint32_t> seq = internal::ReadBegin(acc, vc);
    if (!seq) return std::nullopt;
    const std::optional<bool> ok =
        internal::GetTimestamp(acc, vd, vc, clock, &sec, &ns);
    if (!ok) return std::nullopt;
    if (!*ok) return acc.Fallback(clock);
    if (acc.template Load<uint32_t>(vc + vdso::kVcSeq) == *seq) break;
    if (!acc.MayRetry()) return std::nullopt;
  }
  return ClockResult::Ok(internal::SetTimespec(sec, ns));
}

inline const variants::Variant& NoRetryBarrierVariant() {
  static const variants::Variant* variant = [] {
    auto* v = new variants::Variant(variants::UpstreamVariant());
    v->name = "test-no-retry-barrier";
    v->summary =
        "the upstream reader without vdso_read_retry()'s smp_rmb() (tests "
        "only)";
    v->make_sim_reader =
        variants::MakeStateless<NoRetryBarrierClockGettime<vdso::HookedAccess>,
                                NoRetryBarrierClockGettime<vdso::QuietAccess>>;
    v->native_loop = nullptr;
    return v;
  }();
  return *variant;
}

}  // namespace vdsolab::testing

#endif  // VDSOLAB_TESTS_BROKEN_READERS_H_
