// File: sim/timekeeper_consistency.h
//
// The timekeeper model's state checked against independent computations,
// after every writer operation. The readers' checks (sim/checker) judge
// only what a reader loads from a published page; a timekeeper field no
// vDSO reader loads (the armed leap second's MONOTONIC time, which only
// hrtimer_interrupt() reads), or a change an operation makes but never
// publishes, is invisible to them. These checks see both.

#ifndef VDSOLAB_SIM_TIMEKEEPER_CONSISTENCY_H_
#define VDSOLAB_SIM_TIMEKEEPER_CONSISTENCY_H_

#include <cstdint>
#include <string>

#include "timekeeper/ntp.h"
#include "timekeeper/readers.h"
#include "timekeeper/timekeeper.h"

namespace vdsolab::sim {

// The core timekeeper's derived fields recomputed from what they derive
// from, by their definitions in the kernel, not by the model's helpers:
// offs_real from wall_to_monotonic, offs_tai from offs_real and
// tai_offset, monotonic_to_boot from offs_boot, tk_update_ktime_data()'s
// bases and ktime_sec, base_real, and next_leap_ktime from the NTP leap
// state (ntp_get_next_leap() less offs_real). "" if every one agrees, else
// the first that does not.
std::string DerivedStateMismatch(const timekeeper::Timekeeper& tk,
                                 const timekeeper::NtpData& ntp);

// A tick accumulates whole NTP intervals only, so between the published
// timekeeper before a tick and after it both cycle_last values move by a
// multiple of cycle_interval. An earlier operation that moved the shadow
// timekeeper (timekeeping_forward_now()) and then neither published nor
// restored it (an error path) breaks this at the next tick: the tick
// accumulates from the shadow's cycle_last, not the published one. "" if
// it holds or does not apply (the interval or clocksource changed).
std::string TickGridMismatch(const timekeeper::Timekeeper& before,
                             const timekeeper::Timekeeper& after);

// After a tick: the timekeeper `what` names (the core one, or an enabled
// aux clock's, which tk_aux_advance() advances at the same counter) holds
// less than one cycle_interval unaccumulated at the tick's `counter`, as
// timekeeping_advance()'s loop runs while a whole interval is left. A
// timekeeper that stops accumulating still reads right until its delta
// outgrows max_cycles, so no reader check sees it early. "" if it holds or
// does not apply: a delta past half the mask reads as negative motion (0)
// in the eras that clamp it.
std::string UnaccumulatedMismatch(const timekeeper::Timekeeper& tk,
                                  uint64_t counter, const std::string& what);

// What hrtimer_interrupt() sees (ktime_get_update_offsets_now()) at
// `cycles`, against the timekeeper: MONOTONIC as ktime_get_ts64() reads it
// at the same counter, offs_real (one second less while MONOTONIC is past
// an armed insertion a tick has not applied yet), offs_boot, offs_tai.
// `cached` persists across calls, as the hrtimer base's copies do: offsets
// changed without a clock_was_set_seq bump stay stale in it, which is what
// its offs_boot and offs_tai are compared for (offs_real is compared on a
// fresh copy: a cleared leap legitimately leaves the cached one a second
// off until the clock is next set).
std::string HrtimerViewMismatch(const timekeeper::Timekeeper& tk,
                                uint64_t cycles,
                                timekeeper::HrtimerOffsets* cached);

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_TIMEKEEPER_CONSISTENCY_H_
