// File: ktree/testing/test_trees.h
//
// What ktree's tests share: the Debian kernel tarballs (part of the
// contract: bazelw installs them, and the tests fail rather than skip
// without them), a build cache under $TEST_TMPDIR, fixed-counter hooks for
// one reader call on a stable page, and a page published by a built-in
// variant's writer from a timekeeper.

#ifndef VDSOLAB_KTREE_TESTING_TEST_TREES_H_
#define VDSOLAB_KTREE_TESTING_TEST_TREES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock_result.h"
#include "ktree/ktree.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeping.h"
#include "variants/variant.h"
#include "vdso/access.h"
#include "vdso/vvar_page.h"

namespace vdsolab::ktree::testing {

inline constexpr char kTarball61[] = "/usr/src/linux-source-6.1.tar.xz";
inline constexpr char kTarball612[] = "/usr/src/linux-source-6.12.tar.xz";

// $TEST_TMPDIR/<name> (or /tmp/vdsolab-ktree-test.<pid>/<name> outside
// Bazel).
std::string TestDir(const std::string& name);

// The directory of a tree's files: the tree itself, or a tarball's
// extraction in the test's cache.
absl::StatusOr<std::string> TreeRoot(const std::string& tree);

// BuildTreeVariant into the test's cache.
absl::StatusOr<BuiltVariant> Build(const std::string& tree,
                                   const std::vector<std::string>& patches = {},
                                   const std::string& cc = "gcc");

// Built and loaded (LoadTreeVariant); the test fails on an error.
const variants::Variant* BuildAndLoad(
    const std::string& tree, const std::vector<std::string>& patches = {},
    BuiltVariant* built = nullptr);

// One reader call on a page nothing changes: the counter is fixed, the
// fallback is the timekeeper model's syscall at that counter, and a retry
// is refused (a stable page never needs one). Records the page offsets
// loaded and the fallbacks.
class FixedCounterHooks : public vdso::AccessHooks {
 public:
  FixedCounterHooks(const timekeeper::Timekeeping* tk, uint64_t counter)
      : tk_(tk), counter_(counter) {}
  void BeforeLoad(uint32_t offset, uint32_t /*size*/) override {
    loads.push_back(offset);
  }
  uint64_t ReadCounter(vdso::CounterRead kind) override {
    reads.push_back(kind);
    return counter_;
  }
  bool MayRetry() override { return ++retries <= retry_budget; }
  ClockResult Fallback(ClockId clock) override {
    fallbacks.push_back(clock);
    timekeeper::SyscallContext ctx;
    ctx.cycles = counter_;
    return timekeeper::SysClockGettime(*tk_, clock, ctx);
  }

  std::vector<uint32_t> loads;
  std::vector<vdso::CounterRead> reads;
  std::vector<ClockId> fallbacks;
  int retries = 0;
  int retry_budget = 0;

 private:
  const timekeeper::Timekeeping* tk_;
  uint64_t counter_;
};

// A page and the timekeeper that publishes into it through `writer`'s
// build_update (applied at once).
class PublishedPage : public timekeeper::VsyscallSink {
 public:
  explicit PublishedPage(const variants::Variant* writer);
  void UpdateVsyscall(const timekeeper::Timekeeper& tk) override;

  // Starts a timekeeper on `cs` (replacing any earlier one).
  void Start(const timekeeper::Clocksource& cs, int hz, uint64_t c0,
             const Timespec64& wall, const Timespec64& boot);
  timekeeper::Timekeeping& tk() { return *tk_; }
  vdso::VvarPage& page() { return *page_; }
  const uint8_t* data() const { return page_->data(); }

  // One call of a reader (a variant's make_sim_reader()) on this page.
  std::optional<ClockResult> Read(variants::SimReader& reader, ClockId clock,
                                  FixedCounterHooks& hooks);

 private:
  const variants::Variant* writer_;
  std::unique_ptr<vdso::VvarPage> page_;
  std::unique_ptr<timekeeper::Timekeeping> tk_;
  uint32_t seq_ = 0;
};

}  // namespace vdsolab::ktree::testing

#endif  // VDSOLAB_KTREE_TESTING_TEST_TREES_H_
