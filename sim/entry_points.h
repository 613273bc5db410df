// File: sim/entry_points.h
//
// The vDSO's other entry points: x86 vclock_gettime.c's gettimeofday(),
// time() and clock_getres() (lib/vdso's __cvdso_gettimeofday_data(),
// __cvdso_time_data(), __cvdso_clock_getres_data(), 5.3+), for readers
// that have them (kernel trees: plugin ABI v3, SimReader::
// has_other_entry_points()). They are probed on a settled page, with the
// counter fixed at the true time, on a reader's CPU and view (a time
// namespace's included): the random strategy after each update has landed
// whole, before the next call of a reader; the exhaustive one once, on the
// page before the raced updates. Each answer is judged:
//   gettimeofday  against what a correct reader of the era answers for
//                 CLOCK_REALTIME on the same page at the same counter
//                 (variants::EraOracle: the model's, or the era's own
//                 arithmetic where it differs by design), in microseconds,
//                 and sys_tz (0, 0: the model sets no timezone); where the
//                 reader fell back, against the model's gettimeofday()
//                 (timekeeper/posix_clocks.h). Not against the reader's own
//                 clock_gettime(): a REALTIME bug both share passed where
//                 no call of the run read REALTIME (only on a counter the
//                 x86 vDSO does not assume, narrow or not the TSC, whose
//                 effects the run's calls excuse as a broken precondition,
//                 is the reader's own answer accepted too);
//   time          against the model's time(), the page state's xtime_sec,
//                 returned and stored;
//   clock_getres  against the model's clock_getres() for ids -8 .. 23 and
//                 the extremes, and ids a vDSO must pass on (dynamic
//                 clocks: -29 for fd 3, other CPU-time clocks; 24 .. 32,
//                 64): hrtimer_res, LOW_RES_NSEC at the code's
//                 CONFIG_HZ, or the syscall's own answer for the ids the
//                 vDSO passes on. Every id on a view's first probe, then
//                 one id in turn per probe (a probe costs seven calls).
// Each is called twice: with its pointer argument, and with NULL where a
// caller may pass it (gettimeofday(&tv, NULL), time(NULL),
// clock_getres(id, NULL): the common calls, which must store nothing and
// answer the same; a patch that drops the NULL test crashes there);
// gettimeofday() a third time as gettimeofday(NULL, &tz). The buffers
// start poisoned (0xa5 bytes), so a store the code leaves out shows even
// where the right value is zero (clock_getres()'s tv_sec).
// A wrong answer is an `exact` defect (none with checks.exact off), a
// retry asked for on the settled page a `livelock` defect, a crash or spin
// a `crash` or `livelock` one; an entry point that crashed or spun is not
// probed again. The first wrong answer of each entry point in each view is
// kept as a violation, the rest counted. A kernel tree's clock_getres()
// is judged with the CONFIG_HZ it was built with (config_hz) for the
// coarse clocks and the syscall alike, whatever the scenario's tick rate.
// Probes change nothing the run's calls see: no store, no random draw, no
// time. They are calls of the reader like the run's, as a process's
// gettimeofday() calls are: a reader that keeps state between calls (not
// a kernel tree's) sees them. Not probed: kvm-clock machines (their
// pvclock arithmetic is the clock_gettime() path's, checked there).

#ifndef VDSOLAB_SIM_ENTRY_POINTS_H_
#define VDSOLAB_SIM_ENTRY_POINTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/machine.h"
#include "sim/properties.h"
#include "sim/scenario.h"
#include "sim/writer.h"
#include "timekeeper/timens.h"
#include "variants/era_oracle.h"
#include "variants/variant.h"

namespace vdsolab::sim {

// One judged answer of a probe.
struct EntryPointVerdict {
  bool ok = true;
  Property property = Property::kExact;  // What a wrong answer violates.
  std::string why;                       // Set when !ok.
  std::string detail;
  // Kept in the run's violations (the first of its entry point and view),
  // not only counted.
  bool keep = true;
  // The watchdog stopped the call (a spin): a rerun costs its bound.
  bool watchdog_stopped = false;
};

// What the x86 vDSO's counter arithmetic may assume of the machine: the
// TSC (or kvm-clock, which it scales from the TSC and then treats alike),
// 64 bits wide. The checker's and the probe's era oracles are told this.
variants::CounterFacts CounterFactsOf(const MachineSpec& machine);

class EntryPointProbe {
 public:
  EntryPointProbe(const Scenario& scenario, const variants::Variant& variant,
                  variants::SimReader* reader, const Machine* machine,
                  const Writer* writer);

  // Whether the reader has other entry points and the machine is one the
  // probe runs on.
  bool enabled() const { return enabled_; }
  // Whether a probe is due at `t_ns`: an update newer than the last probed
  // one has landed whole by then. Inline for the common case, no newer
  // update (asked before every call).
  bool Due(uint64_t t_ns) const {
    if (!enabled_ || writer_->latest_update() == probed_update_) return false;
    return NewerUpdateLanded(t_ns);
  }
  // Probes on `page` (the area's start) as a reader on `cpu` at `t_ns`
  // sees it, in the time namespace's view when `timens_view` is not null
  // (VvarPage::timens_data(), `view_bytes` long). Due() must hold.
  std::vector<EntryPointVerdict> Run(const uint8_t* page,
                                     const uint8_t* timens_view,
                                     size_t view_bytes, int cpu, uint64_t t_ns);

 private:
  bool NewerUpdateLanded(uint64_t t_ns) const;
  // Appends `v` unless its check is off, noting what it means for later
  // probes.
  void Add(variants::EntryPoint e, bool timens, EntryPointVerdict v,
           std::vector<EntryPointVerdict>* out);

  const Scenario& scenario_;
  const variants::Variant& variant_;
  variants::SimReader* reader_;
  const Machine* machine_;
  const Writer* writer_;
  timekeeper::TimensOffsets offsets_;
  // gettimeofday()'s reference: what a correct reader of the era answers
  // for CLOCK_REALTIME at the probe's counter.
  // What the machine's counter is to the x86 vDSO's arithmetic: not a
  // 64-bit TSC, and the reader's own CLOCK_REALTIME is gettimeofday()'s
  // reference too.
  variants::CounterFacts facts_;
  variants::EraOracle oracle_;
  int hz_;  // For LOW_RES_NSEC: the code's CONFIG_HZ, else the scenario's.
  bool enabled_ = false;
  uint32_t probed_update_ = 0;  // The newest update probed (0: none).
  std::vector<ClockId> getres_ids_;
  bool getres_all_done_[2] = {false, false};  // Initial view, namespace's.
  size_t getres_next_ = 0;
  // Per entry point (variants::EntryPoint): whether it is probed (the
  // reader has it and it has not crashed or spun), and whether a wrong
  // answer was kept, per view.
  bool probing_[3] = {false, false, false};
  bool reported_[3][2] = {};
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_ENTRY_POINTS_H_
