// File: ktime/internal/compare.h
//
// The model's timekeeper against a tree's (kernel_time.h), field by field,
// for conform-model (conform.h) and the tree as a simulation's writer
// (tree_timekeeping.h). Each returns the first difference, "" if none.

#ifndef VDSOLAB_KTIME_INTERNAL_COMPARE_H_
#define VDSOLAB_KTIME_INTERNAL_COMPARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/timespec.h"
#include "ktime/kernel_time.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/profile.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/timex.h"
#include "variants/foreign_timekeeping.h"

namespace vdsolab::ktime::internal {

// CONFIG_HZ of the tree build (ktime.cc).
inline constexpr int kTreeHz = 250;

// Where _vdso_data[0] is in the vvar page before 6.15 (x86's
// DECLARE_VVAR(128, struct vdso_data, _vdso_data)); the tree's bytes are
// the array itself.
inline constexpr uint32_t kVdsoDataOffset = 128;

// The built-in variant whose writer publishes the era's page
// (struct vdso_data before 6.15; later trees are not supported yet).
std::string WriterEra(const timekeeper::TimekeeperProfile& profile);

vdsolab_kt_timex ToKernel(const timekeeper::Timex& t);

// A driver's registration as the tree's register_clock() takes it.
vdsolab_kt_clock ToKernelClock(const variants::ClocksourceRegistration& r);

// Compares name by name; the first difference wins.
class Diff {
 public:
  template <typename A, typename B>
  void Field(const char* name, A model, B tree) {
    if (!first_.empty()) return;
    if (static_cast<int64_t>(model) != static_cast<int64_t>(tree)) {
      first_ = absl::StrFormat("%s: model %d, tree %d", name,
                               static_cast<int64_t>(model),
                               static_cast<int64_t>(tree));
    }
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

// struct timekeeper and ntp.c's state.
std::string CompareState(const timekeeper::Timekeeping& model,
                         const KernelTime& kt);

// What __clocksource_register_scale() computed: the model's clocksource
// against the tree's.
std::string CompareRegistration(const timekeeper::Clocksource& m,
                                const vdsolab_kt_clock_fields& f);

// adjtimex()'s return value and read-back.
std::string CompareTimex(int model_ret, const timekeeper::Timex& m,
                         int tree_ret, const vdsolab_kt_timex& t);

// The tree's syscall clock readers (ktime_abi.h's VDSOLAB_KT_CLOCK_*) by
// their function's name ("ktime_get_raw_ts64").
const char* TreeClockName(int clock);

// The model's answer for the same clock at `counter` (timekeeper/readers.h);
// the coarse clocks as the profile's era reads them (tk_xtime() before
// 6.15's coarse_nsec).
Timespec64 ModelClock(const timekeeper::Timekeeping& model, int clock,
                      uint64_t counter);

// The counter values the readers are compared at after an operation: `now`,
// and tkr_mono.cycle_last plus a delta between max_cycles/2 and max_cycles
// of the current clocksource picked by `pick`. Only those whose delta from
// cycle_last is within max_cycles with the counter's MSB clear: beyond
// max_cycles the multiply overflows before 6.10, and a delta past the MSB
// is negative motion, which a 6.1 tree reads as 0 (docs/ktime.md, Limits).
std::vector<uint64_t> ReaderCounters(const timekeeper::Timekeeper& tk,
                                     uint64_t now, uint64_t pick);

// Every syscall clock of the model against the tree's at `counter`.
// `read(name, fn)` runs fn(api) on the tree's code guarded and returns ""
// or what went wrong. Not while timekeeping is suspended (the tree's
// readers WARN then).
template <class Read>
std::string CompareClocks(const timekeeper::Timekeeping& model,
                          uint64_t counter, Read&& read) {
  for (int c = 0; c < VDSOLAB_KT_NCLOCKS; ++c) {
    long long sec = 0, nsec = 0;
    int ret = 0;
    if (std::string d = read(TreeClockName(c),
                             [&](const vdsolab_kt_api& a) {
                               ret = a.read_clock(c, counter, &sec, &nsec);
                             });
        !d.empty()) {
      return d;
    }
    if (ret != 0) {
      return absl::StrFormat("the tree's object has no clock %d", c);
    }
    const Timespec64 m = ModelClock(model, c, counter);
    const Timespec64 t{sec, nsec};
    if (!(m == t)) {
      return absl::StrFormat("%s() at counter %#x: model %s, tree %s",
                             TreeClockName(c), counter, FormatTimespec(m),
                             FormatTimespec(t));
    }
  }
  return "";
}

}  // namespace vdsolab::ktime::internal

#endif  // VDSOLAB_KTIME_INTERNAL_COMPARE_H_
