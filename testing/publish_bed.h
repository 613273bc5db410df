// File: testing/publish_bed.h
//
// A test bed for one variant: a zeroed vvar page that a timekeeper model
// publishes to through the variant's writer (build_update, seq from 0),
// each update applied at once or queued for the test to apply mid-read;
// reads of any clock at any counter through the variant's reader with
// fresh FixedCounterHooks, and the syscall model at any counter.

#ifndef VDSOLAB_TESTING_PUBLISH_BED_H_
#define VDSOLAB_TESTING_PUBLISH_BED_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "testing/fixed_counter_hooks.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/timekeeper.h"
#include "timekeeper/timekeeping.h"
#include "variants/variant.h"
#include "vdso/vvar_page.h"

namespace vdsolab::testing {

class PublishBed final : public timekeeper::VsyscallSink {
 public:
  // The timekeeper runs on `clock` at `hz`; Init() it through tk().
  PublishBed(const variants::Variant& variant,
             const timekeeper::Clocksource& clock,
             const variants::PublishContext& context = {}, int hz = 250);

  // update_vsyscall(): the variant's stores, to the page or to pending().
  void UpdateVsyscall(const timekeeper::Timekeeper& tk) override;

  // While true, updates wait in pending(), oldest first, for the test to
  // Apply() to page() (in full or store by store).
  bool queue = false;
  std::deque<vdso::VvarUpdate>& pending() { return pending_; }

  // Hooks at `counter` whose fallback is this timekeeper's syscall.
  FixedCounterHooks NewHooks(uint64_t counter) const;
  // One reader call through `hooks`.
  std::optional<ClockResult> Read(ClockId clock, FixedCounterHooks& hooks);
  // One reader call at `counter` with fresh hooks, kept in hooks().
  std::optional<ClockResult> Read(
      ClockId clock, uint64_t counter,
      std::function<void(size_t, uint32_t)> before_load = nullptr);
  FixedCounterHooks& hooks() { return *hooks_; }

  // The syscall model at `counter`.
  ClockResult Syscall(ClockId clock, uint64_t counter) const;

  timekeeper::Timekeeping& tk() { return *tk_; }
  const timekeeper::Timekeeper& state() const { return tk_->timekeeper(); }
  vdso::VvarPage& page() { return *page_; }
  const variants::PublishContext& context() const { return context_; }
  // The stores of the latest update.
  const vdso::VvarUpdate& last_update() const { return last_update_; }
  // The next read starts a new reader instance (the variant's per-process
  // state, like the seed's static previous_tsc, starts over).
  void ResetReader() { reader_.reset(); }

 private:
  const variants::Variant& variant_;
  variants::PublishContext context_;
  std::unique_ptr<vdso::VvarPage> page_;
  std::unique_ptr<timekeeper::Timekeeping> tk_;
  std::unique_ptr<FixedCounterHooks> hooks_;
  std::unique_ptr<variants::SimReader> reader_;
  uint32_t seq_ = 0;
  std::deque<vdso::VvarUpdate> pending_;
  vdso::VvarUpdate last_update_;
};

// The TSC clocksource at `khz` (MakeTscClocksource; aborts if it refuses).
timekeeper::Clocksource Tsc(uint32_t khz);

// The variant called `name` among `variants` (aborts if there is none).
const variants::Variant& VariantNamed(
    const std::vector<const variants::Variant*>& variants,
    std::string_view name);

}  // namespace vdsolab::testing

#endif  // VDSOLAB_TESTING_PUBLISH_BED_H_
