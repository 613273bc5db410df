// File: sim/aux_oracle.h
//
// What an aux clock (6.17+, CLOCK_AUX + n) reads, for the checker: the
// syscall's aux_get_timespec() and the upstream x86 vDSO's do_aux() on the
// record vdso_time_update_aux() published. They can differ by 1 ns: the
// published base drops xtime_nsec's sub-ns part (docs/findings.md).

#ifndef VDSOLAB_SIM_AUX_ORACLE_H_
#define VDSOLAB_SIM_AUX_ORACLE_H_

#include <cstdint>

#include "common/clock_result.h"
#include "timekeeper/timekeeper.h"

namespace vdsolab::sim {

// aux_get_timespec(): the time, or -ENODEV while the clock is disabled.
ClockResult AuxSyscall(const timekeeper::Timekeeper& aux_tk, uint64_t cycles);

// do_aux() of the 6.17+ x86 vDSO on vdso_time_update_aux()'s record of
// `aux_tk`, at the TSC value `counter` (masked with S64_MAX as the vDSO
// reads it); -ENODEV (via the syscall) while disabled.
ClockResult AuxVdso(const timekeeper::Timekeeper& aux_tk, uint64_t counter);

inline constexpr const char* kAuxTruncationWhy =
    "6.17+ kernels: vdso_time_update_aux() publishes the aux clock's base "
    "with xtime_nsec's sub-ns part dropped, so the vDSO reads 1 ns below "
    "clock_gettime()'s syscall path whenever the dropped fraction and the "
    "counter's carry into a whole ns (docs/findings.md)";

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_AUX_ORACLE_H_
