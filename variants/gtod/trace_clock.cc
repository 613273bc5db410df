#include "variants/gtod/trace_clock.h"

#include "common/math64.h"

namespace vdsolab::variants::gtod {

ClockResult TraceClockResult(TraceClock kind, uint64_t cycles,
                             uint64_t scaled_cpu_khz) {
  if (scaled_cpu_khz == 0) return ClockResult::Error(-kEinval);  // See .h.
  // USEC_PER_SEC / cpu_khz: long / unsigned long, so unsigned long; the
  // product wraps in 64 bits, then >> CYC2NS_SCALE_FACTOR.
  const uint64_t tmp =
      (cycles * (kUsecPerSec / scaled_cpu_khz)) >> kCyc2nsScaleFactor;
  if (kind == TraceClock::kReviewed) {
    // ats->count = tmp: the union's u64 overlays tv_sec on x86-64.
    return ClockResult::Ok(Timespec64{static_cast<int64_t>(tmp), 0});
  }
  // CONFIG_X86_64: ts->tv_nsec = tmp; ts->tv_sec = 0.
  return ClockResult::Ok(Timespec64{0, static_cast<int64_t>(tmp)});
}

namespace {

ClockResult TraceClockSyscall(TraceClock kind, ClockId clock, uint64_t counter,
                              const PublishContext& ctx) {
  if (clock != kClockTrace) return ClockResult::Error(-kEinval);
  // if (!_trace_clock_is_sync) return -EPERM;
  if (!ctx.counters_synced) return ClockResult::Error(-kEperm);
  // scaled_cpu_khz = cpu_khz >> CYC2NS_SCALE_FACTOR; then rdtsc_barrier();
  // rdtscll(cycles); rdtsc_barrier(): the counter is `counter`.
  return TraceClockResult(kind, counter, TraceClockScaledKhz(ctx.tsc_khz));
}

}  // namespace

ClockResult TraceClockSyscallRfc(ClockId clock, uint64_t counter,
                                 const PublishContext& ctx) {
  return TraceClockSyscall(TraceClock::kRfc, clock, counter, ctx);
}

ClockResult TraceClockSyscallReviewed(ClockId clock, uint64_t counter,
                                      const PublishContext& ctx) {
  return TraceClockSyscall(TraceClock::kReviewed, clock, counter, ctx);
}

}  // namespace vdsolab::variants::gtod
