// The kit's own contract: what FixedCounterHooks records and answers, and
// what PublishBed publishes, queues and reads.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "testing/fixed_counter_hooks.h"
#include "testing/publish_bed.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeping.h"
#include "variants/upstream.h"
#include "vdso/access.h"
#include "vdso/datapage.h"

namespace vdsolab::testing {
namespace {

TEST(FixedCounterHooks, RecordsEveryAccessInOrder) {
  FixedCounterHooks hooks(1234);
  std::vector<size_t> seen;
  hooks.before_load = [&](size_t index, uint32_t) { seen.push_back(index); };
  hooks.BeforeLoad(8, 4);
  hooks.BeforeLoad(16, 8);
  EXPECT_EQ(hooks.ReadCounter(vdso::CounterRead::kRdtscp), 1234u);
  hooks.BeforeLoad(24, 8);
  EXPECT_EQ(hooks.ReadCounter(vdso::CounterRead::kPlain), 1234u);

  EXPECT_EQ(hooks.accesses().size(), 5u);
  EXPECT_EQ(hooks.load_offsets(), (std::vector<uint32_t>{8, 16, 24}));
  EXPECT_EQ(hooks.accesses()[1].size, 8u);
  EXPECT_EQ(hooks.counter_reads(),
            (std::vector<vdso::CounterRead>{vdso::CounterRead::kRdtscp,
                                            vdso::CounterRead::kPlain}));
  EXPECT_EQ(hooks.loads_before_counter(), 2u);
  EXPECT_EQ(seen, (std::vector<size_t>{0, 1, 3}));  // Indexes in accesses().
  EXPECT_EQ(hooks.Described([](uint32_t o) { return std::to_string(o); }),
            (std::vector<std::string>{"8", "16", "COUNTER", "24", "COUNTER"}));
  EXPECT_EQ(hooks.Described(variants::UpstreamLayout())[0],
            "clock_data[0].cycle_last");

  hooks.Reset();
  EXPECT_TRUE(hooks.accesses().empty());
  hooks.BeforeLoad(0, 4);
  EXPECT_EQ(hooks.loads_before_counter(), 1u);  // No counter read: all.
}

TEST(FixedCounterHooks, MayRetryUntilTheBudgetIsSpent) {
  FixedCounterHooks hooks;
  hooks.retry_budget = 2;
  EXPECT_TRUE(hooks.MayRetry());
  EXPECT_TRUE(hooks.MayRetry());
  EXPECT_FALSE(hooks.MayRetry());
  EXPECT_EQ(hooks.retries(), 3);
}

TEST(FixedCounterHooks, FallsBackToTheSyscallModelAtTheCounter) {
  FixedCounterHooks hooks(5000);
  EXPECT_EQ(hooks.Fallback(kClockMonotonic), ClockResult::Error(-kEinval));

  timekeeper::Timekeeping tk(Tsc(1000000), 250, nullptr);
  tk.Init(1000, {1700000000, 0}, {7, 0});
  timekeeper::SyscallContext task;
  task.cycles = 1;  // Replaced by the counter.
  task.process_cputime_ns = 42;
  hooks.UseSyscallOf(&tk.timekeeper(), task);
  timekeeper::SyscallContext at;
  at.cycles = 5000;
  EXPECT_EQ(hooks.Fallback(kClockMonotonic),
            timekeeper::SysClockGettime(tk, kClockMonotonic, at));
  EXPECT_EQ(hooks.Fallback(kClockProcessCputimeId), ClockResult::Ok({0, 42}));
  EXPECT_EQ(hooks.fallbacks(),
            (std::vector<ClockId>{kClockMonotonic, kClockMonotonic,
                                  kClockProcessCputimeId}));
}

TEST(PublishBed, PublishesAtOnceOrQueuesAndReadsLikeTheSyscall) {
  PublishBed bed(variants::UpstreamVariant(), Tsc(2600000));
  bed.tk().Init(1000000, {1700000000, 0}, {3, 0});
  const uint32_t seq = vdso::ClockDataOffset(vdso::kCsHresCoarse);
  EXPECT_EQ(bed.page().Load(seq, 4), 2u);
  EXPECT_FALSE(bed.last_update().stores.empty());
  const uint64_t counter = 1000000 + 777;
  EXPECT_EQ(bed.Read(kClockMonotonic, counter),
            bed.Syscall(kClockMonotonic, counter));
  EXPECT_EQ(bed.hooks().counter_reads().size(), 1u);

  bed.queue = true;
  ASSERT_EQ(bed.tk().SetTimeOfDay({1800000000, 0}, 2000000), 0);
  ASSERT_EQ(bed.pending().size(), 1u);
  EXPECT_EQ(bed.page().Load(seq, 4), 2u);  // Not on the page yet.
  bed.page().Apply(bed.pending().front());
  EXPECT_EQ(bed.page().Load(seq, 4), 4u);
  EXPECT_EQ(bed.Read(kClockRealtime, 2000000),
            bed.Syscall(kClockRealtime, 2000000));
}

}  // namespace
}  // namespace vdsolab::testing
