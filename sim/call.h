// File: sim/call.h
//
// What one simulated clock_gettime() call did: the record the checks run
// on, and (when asked for) the step-by-step trace a replay prints.

#ifndef VDSOLAB_SIM_CALL_H_
#define VDSOLAB_SIM_CALL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "vdso/access.h"

namespace vdsolab::sim {

// One step of a call: a page load, a counter read, stores that became
// visible before it, a migration, a preemption or the fallback; as text
// (`what`) and as data for pictures and trace files.
struct TraceStep {
  enum class Kind : uint8_t {
    kLoad,      // The reader loaded `field` and saw `value`.
    kCounter,   // The reader read the counter: `value`.
    kStore,     // A writer store of update `update` became visible.
    kFallback,  // The syscall fallback.
    kPreempt,
    kMigrate,
    kFault,    // The call crashed or spun (foreign code).
    kReorder,  // The next load sees an earlier page state (reorder_ppm).
  };
  uint64_t t_ns = 0;
  int cpu = 0;
  std::string what;
  Kind kind = Kind::kLoad;
  std::string field;    // kLoad, kStore: the field's name in the layout.
  uint64_t value = 0;   // kLoad, kStore, kCounter.
  uint32_t update = 0;  // kStore: which update.
  bool seq = false;     // kLoad, kStore: the field is a seq word.
};

struct CallRecord {
  uint64_t index = 0;  // Global call number in the run.
  int reader = 0;
  uint64_t reader_call = 0;  // This reader's call number.
  ClockId clock = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  int cpu_start = 0;
  int cpu_end = 0;
  // nullopt: the call was abandoned after the livelock budget, or did not
  // return normally (`fault`).
  std::optional<ClockResult> result;
  std::optional<vdso::CallFault> fault;
  bool fell_back = false;
  // The last counter value the call read (the one its answer used), the
  // CPU and true time it came from. For a fallback, the syscall's read.
  bool read_counter = false;
  // The read ran early only because the scenario breaks its fence
  // (faults.unordered_counter_read on an rdtsc_ordered()), not because the
  // code read with a bare rdtsc: what follows from it is the scenario's.
  bool counter_fence_broken = false;
  uint64_t counter = 0;
  int counter_cpu = 0;
  uint64_t counter_ns = 0;
  // When the read ran in the call's program order: counter_ns, but for an
  // unordered read, whose value was taken earlier (faults.speculation).
  // What was on the page then is what the reader scaled the value with
  // (kvm-clock: sim/kvm_counter.h).
  uint64_t counter_step_ns = 0;
  // seq of the last attempt's read_begin: the page state the data came from
  // (state after update begin_seq / 2) if the reader's protocol held.
  uint32_t begin_seq = 0;
  uint32_t fallback_update = 0;  // The state the fallback syscall read.
  // What the (last) fallback syscall answered: a call that fell back must
  // return it.
  ClockResult fallback_result;
  // The clock the (last) fallback syscall asked for: the call's own, or
  // the reader answered one clock with another's syscall.
  ClockId fallback_clock = 0;
  uint32_t iterations = 0;       // Loop iterations (spins and retries).
  uint32_t stores_during = 0;    // Writer stores that landed mid-call.
  uint32_t reordered_loads = 0;  // Loads that saw an earlier page state.
  // kvm-clock: the answer came through the pvclock page (the counter above
  // is kvm-clock, scaled from the TSC read: sim/kvm_counter.h), and how
  // many of the hypervisor's pvclock stores landed mid-call.
  bool pvclock_read = false;
  // The reader's own last counter read (through the hooks) had bit 63
  // set: from 4.20 to 6.4 the x86 vDSO sends that call to the syscall
  // (`(s64)cycles < 0`; vdso_cycles_ok() from 5.8). Kept apart since a
  // fallback overwrites `counter` with the syscall's read.
  // (In pvclock_read's padding: the record's size stays.)
  bool read_bit63 = false;
  uint32_t pvclock_stores_during = 0;
  bool migrated_before = false;  // Moved to another CPU since last call.
  bool migrated_midcall = false;
  bool preempted = false;
  // Called by a task in the time namespace (ReaderSpec::timens): the answer
  // holds the namespace's offsets.
  bool timens = false;
  // Fallback system calls it made. Here, in the padding before `trace`:
  // placed among the counters above, it moved stores_during and
  // reordered_loads out of the 8-byte word the checker tests at once.
  uint32_t fallbacks = 0;
  std::vector<TraceStep> trace;  // Only when tracing.

  // Every field back to its default, one store each, keeping the trace's
  // buffer: the random strategy reuses one record for every call, since
  // zeroing a fresh one compiled to a `rep stos` whose start-up cost was
  // about 5% of a simulated read.
  void Reset() {
    index = 0;
    reader = 0;
    reader_call = 0;
    clock = 0;
    start_ns = end_ns = 0;
    cpu_start = cpu_end = 0;
    result.reset();
    fault.reset();
    fell_back = read_counter = false;
    counter = 0;
    counter_cpu = 0;
    counter_ns = 0;
    counter_step_ns = 0;
    counter_fence_broken = false;
    begin_seq = fallback_update = iterations = fallbacks = stores_during = 0;
    fallback_result = ClockResult{};
    fallback_clock = 0;
    reordered_loads = 0;
    pvclock_read = read_bit63 = false;
    pvclock_stores_during = 0;
    migrated_before = migrated_midcall = preempted = timens = false;
    trace.clear();
  }
};

// Reset() must name every field: a field added above needs a line there
// (and this size updated), or a reused record would carry it across calls.
static_assert(sizeof(CallRecord) == 192 +
                                        sizeof(std::optional<vdso::CallFault>) +
                                        sizeof(std::vector<TraceStep>),
              "CallRecord changed: update CallRecord::Reset()");

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_CALL_H_
