// File: ktime/internal/compare.h
//
// The model's timekeeper against a tree's (kernel_time.h), field by field,
// for conform-model (conform.h) and the tree as a simulation's writer
// (tree_timekeeping.h). Each returns the first difference, "" if none.

#ifndef VDSOLAB_KTIME_INTERNAL_COMPARE_H_
#define VDSOLAB_KTIME_INTERNAL_COMPARE_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
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

}  // namespace vdsolab::ktime::internal

#endif  // VDSOLAB_KTIME_INTERNAL_COMPARE_H_
