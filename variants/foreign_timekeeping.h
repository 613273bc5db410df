// File: variants/foreign_timekeeping.h
//
// A timekeeper other than the model that publishes the page: a kernel
// tree's own kernel/time code (--kernel-time, ktime/). A variant that
// carries one (Variant::timekeeping) is simulated with two timekeepers in
// lockstep: the simulation's writer runs every operation on the model and
// on this one at the same counter value; readers see the stores of this
// one's update_vsyscall(), in its program order, while the model stays the
// oracle that judges them. Where the two timekeepers disagree (a field of
// their state, an adjtimex() read-back, the number of updates) the run
// reports the first difference and fails (docs/ktime.md).

#ifndef VDSOLAB_VARIANTS_FOREIGN_TIMEKEEPING_H_
#define VDSOLAB_VARIANTS_FOREIGN_TIMEKEEPING_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/timespec.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/timex.h"
#include "vdso/vvar_page.h"

namespace vdsolab::variants {

// What a clocksource driver passes to __clocksource_register_scale().
struct ClocksourceRegistration {
  uint64_t mask = 0;
  uint32_t scale = 1;  // 1000: clocksource_register_khz(); 1: _hz().
  uint32_t freq = 0;
  int32_t vdso_clock_mode = 0;
  int rating = 0;
  bool suspend_nonstop = false;
};

// Every method that can disagree with the model returns the first
// difference ("field: model X, tree Y"), "" when none.
class ForeignTimekeeping {
 public:
  virtual ~ForeignTimekeeping() = default;
  // Registers the clocksource and runs timekeeping_init(); `model` has
  // just done the same.
  virtual std::string Boot(const ClocksourceRegistration& cs, uint64_t now,
                           const Timespec64& wall, const Timespec64& boot,
                           const timekeeper::Timekeeping& model) = 0;
  virtual void Tick(uint64_t now) = 0;  // update_wall_time()
  // do_adjtimex(request); the model returned `model_ret` and read back
  // `model_readback`.
  virtual std::string Adjtimex(const timekeeper::Timex& request, uint64_t now,
                               int model_ret,
                               const timekeeper::Timex& model_readback) = 0;
  virtual std::string SetTimeOfDay(const Timespec64& ts, uint64_t now,
                                   int model_ret) = 0;
  virtual void Suspend(uint64_t now, const Timespec64& rtc) = 0;
  virtual void Resume(uint64_t now, const Timespec64& rtc) = 0;
  virtual void InjectSleeptime(const Timespec64& delta, uint64_t now) = 0;
  // The updates its update_vsyscall() published since the last call, each
  // as its stores at the page offsets of the variant's layout.
  virtual std::vector<vdso::VvarUpdate> TakeUpdates() = 0;
  // Its state against the model's after an operation.
  virtual std::string Compare(const timekeeper::Timekeeping& model) = 0;
  // Whether its code crashed or spun (a difference says which): nothing it
  // publishes after that is a kernel's, and a kernel would not go on.
  virtual bool Faulted() const { return false; }
};

// Where a variant's foreign timekeeper comes from.
struct ForeignTimekeepingSource {
  std::string name;  // "ktime-6.12.117", "+name.patch" per patch.
  std::string era;   // The model profile's era it is judged against...
  // ...with these later changes the tree carries (kernel.backports).
  std::vector<std::string> backports;
  // Said once when the source is made (ktime::ProfileForBuild()'s note: a
  // patch that moved what the profile probe finds); "" for none.
  std::string note;
  // The built-in variant whose page layout it writes: a reader must read
  // that layout.
  std::string layout_variant;
  // A fresh instance for a kernel of CONFIG_HZ `hz` (one at a time: a
  // tree's statics are per process); an error is bad input.
  std::function<absl::StatusOr<std::unique_ptr<ForeignTimekeeping>>(int hz)>
      make;
};

}  // namespace vdsolab::variants

#endif  // VDSOLAB_VARIANTS_FOREIGN_TIMEKEEPING_H_
