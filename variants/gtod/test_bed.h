// File: variants/gtod/test_bed.h
//
// Test support for gtod_test: a timekeeper publishing through a variant's
// writer into a page, and an AccessHooks double with a fixed counter whose
// fallback is the timekeeper's syscall model at that counter.

#ifndef VDSOLAB_VARIANTS_GTOD_TEST_BED_H_
#define VDSOLAB_VARIANTS_GTOD_TEST_BED_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "common/clock_result.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeping.h"
#include "variants/gtod/gtod.h"
#include "variants/variant.h"
#include "vdso/access.h"
#include "vdso/vvar_page.h"

namespace vdsolab::variants::gtod::testing {

inline const Variant& GetVariant(std::string_view name) {
  for (const Variant* v : GtodVariants()) {
    if (v->name == name) return *v;
  }
  ADD_FAILURE() << "no variant " << name;
  std::abort();
}

// Records the reader's accesses; the counter is fixed; the syscall is the
// timekeeper model's at that counter.
class Hooks : public vdso::AccessHooks {
 public:
  explicit Hooks(const timekeeper::Timekeeping* tk) : tk_(tk) {}
  void BeforeLoad(uint32_t offset, uint32_t size) override {
    const size_t n = loads.size();
    loads.push_back(offset);
    (void)size;
    if (before_load) before_load(n, offset);
  }
  uint64_t ReadCounter(vdso::CounterRead kind) override {
    if (reads.empty()) loads_before_counter = loads.size();
    reads.push_back(kind);
    return counter;
  }
  bool MayRetry() override { return ++retries <= retry_budget; }
  ClockResult Fallback(ClockId clock) override {
    fallbacks.push_back(clock);
    if (tk_ == nullptr) return ClockResult::Error(-kEinval);
    timekeeper::SyscallContext ctx;
    ctx.cycles = counter;
    return timekeeper::SysClockGettime(*tk_, clock, ctx);
  }

  uint64_t counter = 0;
  int retries = 0;
  int retry_budget = 100;
  std::vector<uint32_t> loads;  // Page offsets, in order.
  size_t loads_before_counter = 0;
  std::vector<vdso::CounterRead> reads;
  std::vector<ClockId> fallbacks;
  std::function<void(size_t, uint32_t)> before_load;

 private:
  const timekeeper::Timekeeping* tk_;
};

// A zeroed page that a timekeeper publishes to through `variant`'s writer,
// starting at seq 0. In queue mode updates wait in pending().
class Bed : public timekeeper::VsyscallSink {
 public:
  Bed(const Variant& variant, const timekeeper::Clocksource& clock,
      const PublishContext& ctx, int hz = 250)
      : variant_(variant), ctx_(ctx) {
    auto page = vdso::VvarPage::Create();
    EXPECT_TRUE(page.ok());
    page_ = std::move(*page);
    tk_ = std::make_unique<timekeeper::Timekeeping>(clock, hz, this);
  }

  void UpdateVsyscall(const timekeeper::Timekeeper& tk) override {
    vdso::VvarUpdate u = variant_.build_update(tk, seq_, ctx_);
    seq_ += 2;
    last_update_ = u;
    if (queue) {
      pending.push_back(std::move(u));
    } else {
      page_->Apply(u);
    }
  }

  // One reader call at `counter` with fresh hooks (kept in hooks()).
  std::optional<ClockResult> Read(
      ClockId clock, uint64_t counter,
      std::function<void(size_t, uint32_t)> before_load = nullptr) {
    hooks_ = std::make_unique<Hooks>(tk_.get());
    hooks_->counter = counter;
    hooks_->before_load = std::move(before_load);
    vdso::HookedAccess access(page_->data(), hooks_.get());
    if (reader_ == nullptr) reader_ = variant_.make_sim_reader();
    return reader_->Call(access, page_->data(), clock);
  }

  // The syscall model at `counter`.
  ClockResult Syscall(ClockId clock, uint64_t counter) const {
    timekeeper::SyscallContext sc;
    sc.cycles = counter;
    return timekeeper::SysClockGettime(*tk_, clock, sc);
  }

  timekeeper::Timekeeping& tk() { return *tk_; }
  const timekeeper::Timekeeper& state() const { return tk_->timekeeper(); }
  vdso::VvarPage& page() { return *page_; }
  Hooks& hooks() { return *hooks_; }
  const PublishContext& ctx() const { return ctx_; }
  const vdso::VvarUpdate& last_update() const { return last_update_; }
  void ResetReader() { reader_.reset(); }

  bool queue = false;
  std::deque<vdso::VvarUpdate> pending;

 private:
  const Variant& variant_;
  PublishContext ctx_;
  std::unique_ptr<vdso::VvarPage> page_;
  std::unique_ptr<timekeeper::Timekeeping> tk_;
  std::unique_ptr<Hooks> hooks_;
  std::unique_ptr<SimReader> reader_;
  uint32_t seq_ = 0;
  vdso::VvarUpdate last_update_;
};

inline timekeeper::Clocksource Tsc(uint32_t khz) {
  auto tsc = timekeeper::MakeTscClocksource(khz);
  EXPECT_TRUE(tsc.ok());
  return *tsc;
}

}  // namespace vdsolab::variants::gtod::testing

#endif  // VDSOLAB_VARIANTS_GTOD_TEST_BED_H_
