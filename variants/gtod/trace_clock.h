// File: variants/gtod/trace_clock.h
//
// Seed 002 (002_1d5ca9ae9ec6293c.txt): Julien Desfossez' "[RFC PATCH]
// TRACE_CLOCK in clock_gettime vDSO and syscall" (ltt-dev, 2010) and the
// version with Mathieu Desnoyers' review applied. CLOCK_TRACE is the TSC
// scaled to ns with the LTTng cycles-to-ns factor, counted from machine
// boot, and refused with -EPERM when the CPUs' TSCs are not synchronised.
//
// The conversion, shared by the vDSO (do_trace_clock) and the syscall:
//   tmp = cycles * (USEC_PER_SEC / cpu_khz_scaled) >> CYC2NS_SCALE_FACTOR
// in unsigned long (64 bits on x86-64), where cpu_khz_scaled is the
// machine's cpu_khz >> CYC2NS_SCALE_FACTOR (the vDSO reads it from the
// page, the syscall computes it). The model takes cpu_khz to be the TSC
// frequency (PublishContext::tsc_khz; on current x86 they are equal).
//
// How the result reaches the caller differs:
// - RFC: 64-bit ns in tv_nsec, tv_sec = 0 (tv_nsec is not normalised: it
//   exceeds 999999999 after one second of uptime).
// - Reviewed: the u64 stored over the timespec through a union (Desnoyers:
//   "union aliased_ts { struct timespec ts; u64 count; }"). On x86-64 the
//   count lands in tv_sec; tv_nsec keeps the caller's value, which the
//   model takes to be 0. Desnoyers wrote this for the vDSO; the model
//   applies it to the syscall too, so that both paths answer alike (user
//   space casts the timespec back to the union either way).
//
// Deviation: a scaled cpu_khz of 0 (a TSC below 1024 kHz) would divide by
// zero (SIGFPE in the vDSO, an oops in the syscall); both return -EINVAL.

#ifndef VDSOLAB_VARIANTS_GTOD_TRACE_CLOCK_H_
#define VDSOLAB_VARIANTS_GTOD_TRACE_CLOCK_H_

#include <cstdint>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "variants/variant.h"

namespace vdsolab::variants::gtod {

inline constexpr ClockId kClockTrace = 32;          // CLOCK_TRACE
inline constexpr uint32_t kCyc2nsScaleFactor = 10;  // CYC2NS_SCALE_FACTOR

enum class TraceClock : uint8_t {
  kNone,      // No CLOCK_TRACE.
  kRfc,       // The RFC as posted.
  kReviewed,  // With Desnoyers' review applied.
};

// The value the RFC's update_vsyscall() publishes as gtod->cpu_khz.
constexpr uint64_t TraceClockScaledKhz(uint32_t cpu_khz) {
  return static_cast<uint64_t>(cpu_khz) >> kCyc2nsScaleFactor;
}

// do_trace_clock()'s arithmetic and result, after the -EPERM check.
ClockResult TraceClockResult(TraceClock kind, uint64_t cycles,
                             uint64_t scaled_cpu_khz);

// SYSCALL_DEFINE2(clock_gettime)'s CLOCK_TRACE branch (kernel/posix-
// timers.c in the RFC) at counter `counter`; -EINVAL for any other id.
// Reviewed: the id is accepted by a per-arch invalid_clockid() hook instead
// of an #ifdef in generic code, which changes nothing on x86-64.
ClockResult TraceClockSyscallRfc(ClockId clock, uint64_t counter,
                                 const PublishContext& ctx);
ClockResult TraceClockSyscallReviewed(ClockId clock, uint64_t counter,
                                      const PublishContext& ctx);

}  // namespace vdsolab::variants::gtod

#endif  // VDSOLAB_VARIANTS_GTOD_TRACE_CLOCK_H_
