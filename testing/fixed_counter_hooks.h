// File: testing/fixed_counter_hooks.h
//
// The access hooks a unit test reads through: the counter is a fixed value,
// every access is recorded in order, a test may act before any page load
// (land an update mid-call), the seq retry loop has a budget, and the
// syscall fallback is the timekeeper model's at the same counter (or
// -EINVAL without a timekeeper). vdso::HookedAccess calls these; the
// simulation's own hooks (sim/) schedule time instead.

#ifndef VDSOLAB_TESTING_FIXED_COUNTER_HOOKS_H_
#define VDSOLAB_TESTING_FIXED_COUNTER_HOOKS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeper.h"
#include "variants/layout.h"
#include "vdso/access.h"

namespace vdsolab::testing {

// One access a reader made: a page load, or a counter read.
struct Access {
  bool is_load = true;
  uint32_t offset = 0;  // A load's page offset...
  uint32_t size = 0;    // ...and size in bytes.
  vdso::CounterRead read = vdso::CounterRead::kOrdered;  // A counter read's.
};

class FixedCounterHooks final : public vdso::AccessHooks {
 public:
  explicit FixedCounterHooks(uint64_t at = 0) : counter(at) {}

  // The fallback answers with SysClockGettime(*tk) at the counter, the
  // calling task as `context` says (its `cycles` is replaced by the
  // counter). `tk` must outlive the calls; nullptr: -EINVAL, as before.
  void UseSyscallOf(const timekeeper::Timekeeper* tk,
                    const timekeeper::SyscallContext& context = {}) {
    tk_ = tk;
    context_ = context;
  }

  // vdso::AccessHooks.
  void BeforeLoad(uint32_t offset, uint32_t size) override;
  uint64_t ReadCounter(vdso::CounterRead kind) override;
  bool MayRetry() override;
  ClockResult Fallback(ClockId clock) override;

  // What every counter read returns.
  uint64_t counter;
  // MayRetry() says yes this many times, then no (the call is abandoned).
  int retry_budget = 100;
  // Runs before each page load, with the index the load will have in
  // accesses() and its offset: a test changes the page there.
  std::function<void(size_t access_index, uint32_t offset)> before_load;

  // What the calls so far did, in order.
  const std::vector<Access>& accesses() const { return accesses_; }
  std::vector<uint32_t> load_offsets() const;
  std::vector<vdso::CounterRead> counter_reads() const;
  // The page loads before the first counter read (every load if none).
  size_t loads_before_counter() const;
  // Each access by name: a load as `name_of(offset)`, a counter read as
  // "COUNTER".
  std::vector<std::string> Described(
      const std::function<std::string(uint32_t offset)>& name_of) const;
  std::vector<std::string> Described(const variants::Layout& layout) const;
  // The clock of each fallback call.
  const std::vector<ClockId>& fallbacks() const { return fallbacks_; }
  // How often the reader asked MayRetry().
  int retries() const { return retries_; }

  // Forgets what the calls did (the settings stay).
  void Reset();

 private:
  const timekeeper::Timekeeper* tk_ = nullptr;
  timekeeper::SyscallContext context_;
  std::vector<Access> accesses_;
  std::vector<ClockId> fallbacks_;
  int retries_ = 0;
};

}  // namespace vdsolab::testing

#endif  // VDSOLAB_TESTING_FIXED_COUNTER_HOOKS_H_
