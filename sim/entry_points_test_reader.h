// File: sim/entry_points_test_reader.h
//
// For the sim tests: the upstream variant with a reader that has the other
// entry points (sim/entry_points.h), written on its clock_gettime():
// gettimeofday() from CLOCK_REALTIME, time() from CLOCK_REALTIME_COARSE's
// seconds (xtime_sec), clock_getres() by the syscall, but for the coarse
// clocks, answered from LOW_RES_NSEC at HZ=250 (the scenarios' default).
// Broken one way each for the tests that must see it.

#ifndef VDSOLAB_SIM_ENTRY_POINTS_TEST_READER_H_
#define VDSOLAB_SIM_ENTRY_POINTS_TEST_READER_H_

#include <memory>
#include <optional>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "variants/upstream.h"
#include "variants/variant.h"
#include "vdso/access.h"

namespace vdsolab::sim::testing {

enum class Break {
  kNone,
  kLateTime,   // time() a second late.
  kUsecShift,  // gettimeofday()'s microseconds as tv_nsec >> 10.
  kCoarseRes,  // The coarse clocks' resolution 1 ns (hrtimer_res).
  kNullRes,    // clock_getres(id, NULL) answers -EFAULT.
  // CLOCK_REALTIME a second late in clock_gettime(), and so in
  // gettimeofday(), which is written on it.
  kLateRealtime,
  // clock_gettime() asks may_retry() before its first pass (a plugin may:
  // "once per loop iteration"); otherwise correct.
  kAsksFirst,
};

template <Break kBreak>
class EntryPointsReader final : public variants::SimReader {
 public:
  std::optional<ClockResult> Call(vdso::HookedAccess& access,
                                  const uint8_t* page, ClockId clock) override {
    if (kBreak == Break::kAsksFirst && !access.MayRetry()) return std::nullopt;
    std::optional<ClockResult> r = base_->Call(access, page, clock);
    if (kBreak == Break::kLateRealtime && r && r->ret == 0 &&
        clock == kClockRealtime) {
      ++r->ts.tv_sec;
    }
    return r;
  }
  bool has_entry_point(variants::EntryPoint /*e*/) const override {
    return true;
  }
  std::optional<GtodResult> Gettimeofday(vdso::HookedAccess& access,
                                         const uint8_t* page,
                                         variants::GtodArgs args) override {
    const std::optional<ClockResult> rt = Call(access, page, kClockRealtime);
    if (!rt) return std::nullopt;
    if (rt->ret != 0) return access.GettimeofdayFallback();
    if (args == variants::GtodArgs::kTzOnly) return GtodResult{};
    return GtodResult{0, rt->ts.tv_sec,
                      kBreak == Break::kUsecShift ? rt->ts.tv_nsec >> 10
                                                  : rt->ts.tv_nsec / 1000,
                      0, 0};
  }
  std::optional<TimeResult> Time(vdso::HookedAccess& access,
                                 const uint8_t* page, bool null_arg) override {
    const std::optional<ClockResult> c =
        base_->Call(access, page, kClockRealtimeCoarse);
    if (!c || c->ret != 0) return std::nullopt;
    const int64_t t = c->ts.tv_sec + (kBreak == Break::kLateTime ? 1 : 0);
    return TimeResult{t, null_arg ? 0 : t};
  }
  std::optional<ClockResult> ClockGetres(vdso::HookedAccess& access,
                                         const uint8_t* /*page*/, ClockId clock,
                                         bool null_arg) override {
    if (null_arg) {
      if (kBreak == Break::kNullRes) return ClockResult::Error(-14);
      const ClockResult r = access.ClockGetresFallback(clock);
      return r.ret == 0 ? ClockResult::Ok(Timespec64{0, 0}) : r;
    }
    if (clock == kClockRealtimeCoarse || clock == kClockMonotonicCoarse) {
      return ClockResult::Ok(
          Timespec64{0, kBreak == Break::kCoarseRes ? 1 : 4000000});
    }
    return access.ClockGetresFallback(clock);
  }

 private:
  std::unique_ptr<variants::SimReader> base_ =
      variants::UpstreamVariant().make_sim_reader();
};

// The upstream variant with that reader; lives for the process.
template <Break kBreak>
const variants::Variant& WithEntryPoints() {
  static const variants::Variant* v = [] {
    auto* w = new variants::Variant(variants::UpstreamVariant());
    w->name = "entry-points";
    w->make_sim_reader = []() -> std::unique_ptr<variants::SimReader> {
      return std::make_unique<EntryPointsReader<kBreak>>();
    };
    return w;
  }();
  return *v;
}

}  // namespace vdsolab::sim::testing

#endif  // VDSOLAB_SIM_ENTRY_POINTS_TEST_READER_H_
