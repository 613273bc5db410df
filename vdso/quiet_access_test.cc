// vdso::QuietAccess: an attempt completes exactly when every step (load and
// counter read) lands before the limit and the reader did nothing that
// needs the hooks; it records the seq the last data load's attempt began
// with and the counter at its true time, as the hooks would.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "vdso/access.h"

namespace vdsolab::vdso {
namespace {

// A page of 64 bytes with seq words at 0 and 32 (4 bytes each).
struct Bed {
  uint8_t page[64] = {};
  uint8_t seq_start[64] = {};
  QuietAccess::Setup setup;
  Bed() {
    seq_start[0] = seq_start[32] = 1;
    page[0] = 6;   // seq 6
    page[32] = 8;  // seq 8
    setup.page = page;
    setup.seq_start = seq_start;
    setup.seq_start_size = sizeof seq_start;
    setup.load_ns = 3;
    setup.counter_read_ns = 10;
    setup.counter = [](const void* ctx, uint64_t t_ns) {
      return *static_cast<const uint64_t*>(ctx) + 2 * t_ns;
    };
  }
};

constexpr uint64_t kCounterBase = 1000;

// loads loads, then a counter read of `kind`, from start 100: the last step
// is at 100 + 3 * loads + 10.
QuietAccess Attempt(const Bed& bed, int loads, uint64_t limit,
                    CounterRead kind = CounterRead::kOrdered) {
  QuietAccess a(bed.setup, 100, limit, &kCounterBase);
  for (int i = 0; i < loads; ++i) a.Load<uint32_t>(bed.page + 8);
  switch (kind) {
    case CounterRead::kOrdered:
      a.ReadTsc();
      break;
    case CounterRead::kRdtscp:
      a.ReadTscp();
      break;
    case CounterRead::kPlain:
      a.ReadTscPlain();
      break;
  }
  return a;
}

TEST(QuietAccess, CompletesOnlyWithEveryStepBeforeTheLimit) {
  const Bed bed;
  for (int loads = 0; loads < 6; ++loads) {
    const uint64_t last_step = 100 + 3 * static_cast<uint64_t>(loads) + 10;
    EXPECT_TRUE(Attempt(bed, loads, last_step + 1).completed()) << loads;
    // A step at the limit is one the hooks would apply a store before.
    EXPECT_FALSE(Attempt(bed, loads, last_step).completed()) << loads;
    EXPECT_FALSE(Attempt(bed, loads, last_step - 1).completed()) << loads;
    EXPECT_EQ(Attempt(bed, loads, ~0ull).now(), last_step);
  }
}

TEST(QuietAccess, ReadsTheCounterAtItsTrueTime) {
  const Bed bed;
  const QuietAccess a = Attempt(bed, 4, ~0ull);
  EXPECT_TRUE(a.read_counter());
  EXPECT_EQ(a.counter_ns(), 100u + 12u + 10u);
  EXPECT_EQ(a.counter(), kCounterBase + 2 * (100u + 12u + 10u));
}

TEST(QuietAccess, CounterReadsThatMayRunEarlyEndTheAttempt) {
  Bed bed;
  bed.setup.early_kinds = 1u << static_cast<int>(CounterRead::kPlain);
  EXPECT_TRUE(Attempt(bed, 2, ~0ull, CounterRead::kOrdered).completed());
  EXPECT_TRUE(Attempt(bed, 2, ~0ull, CounterRead::kRdtscp).completed());
  EXPECT_FALSE(Attempt(bed, 2, ~0ull, CounterRead::kPlain).completed());
  bed.setup.early_kinds |= 1u << static_cast<int>(CounterRead::kOrdered);
  EXPECT_FALSE(Attempt(bed, 2, ~0ull, CounterRead::kOrdered).completed());
}

TEST(QuietAccess, RetriesFallbacksAndFaultsEndTheAttempt) {
  const Bed bed;
  QuietAccess retry(bed.setup, 0, ~0ull, &kCounterBase);
  EXPECT_FALSE(retry.MayRetry());   // The reader returns at once...
  EXPECT_FALSE(retry.completed());  // ...and the hooks run the call.
  QuietAccess fallback(bed.setup, 0, ~0ull, &kCounterBase);
  EXPECT_NE(fallback.Fallback(0).ret, 0);
  EXPECT_FALSE(fallback.completed());
  QuietAccess fault(bed.setup, 0, ~0ull, &kCounterBase);
  fault.Fault(CallFault{});
  EXPECT_FALSE(fault.completed());
}

// begin_seq: the last seq loaded before the last data load (LoadLane's
// rule), 0 when no seq load came first.
TEST(QuietAccess, NotesTheSeqTheLastDataLoadBeganWith) {
  const Bed bed;
  QuietAccess a(bed.setup, 0, ~0ull, &kCounterBase);
  a.Load<uint32_t>(bed.page + 8);
  EXPECT_EQ(a.begin_seq(), 0u);
  EXPECT_EQ(a.Load<uint32_t>(bed.page + 0), 6u);
  EXPECT_EQ(a.begin_seq(), 0u);  // A seq load is not a data load.
  a.Load<uint64_t>(bed.page + 8);
  EXPECT_EQ(a.begin_seq(), 6u);
  EXPECT_EQ(a.Load<uint32_t>(bed.page + 32), 8u);
  a.Load<uint32_t>(bed.page + 40);
  EXPECT_EQ(a.begin_seq(), 8u);
  a.Load<uint32_t>(bed.page + 0);  // seq 6 again, no data load after it.
  EXPECT_EQ(a.begin_seq(), 8u);
  EXPECT_EQ(a.now(), 6u * 3u);
}

}  // namespace
}  // namespace vdsolab::vdso
