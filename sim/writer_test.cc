// Writer::LatestStartedAt(): its inline answer for times after the newest
// update started and its scan for earlier ones are both the newest retained
// update started at or before the time, as updates come and are retired.

#include "sim/writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "absl/strings/str_format.h"
#include "sim/machine.h"
#include "sim/scenario.h"
#include "variants/upstream.h"
#include "vdso/vvar_page.h"

namespace vdsolab::sim {
namespace {

// The answer by definition: a scan of every retained update, oldest first.
const UpdateRecord* ByScan(const Writer& w, uint64_t t_ns) {
  uint32_t oldest = w.latest_update();
  while (oldest > 1 && w.Update(oldest - 1) != nullptr) --oldest;
  const UpdateRecord* found = w.Update(oldest);
  for (uint32_t id = oldest; id <= w.latest_update(); ++id) {
    const UpdateRecord* u = w.Update(id);
    if (u != nullptr && u->start_ns <= t_ns) found = u;
  }
  return found;
}

TEST(Writer, LatestStartedAtIsTheNewestUpdateStartedByThen) {
  Scenario s;
  s.kernel.hz = 1000;  // An update every 1 ms.
  // Slow stores: each update is visible over 2 us, so queried times fall
  // inside updates as well as between them.
  s.timing.store_ns = 100;
  Machine machine(s.machine, /*seed=*/1);
  absl::StatusOr<std::unique_ptr<vdso::VvarPage>> page =
      vdso::VvarPage::Create();
  ASSERT_TRUE(page.ok()) << page.status();
  absl::StatusOr<std::unique_ptr<Writer>> writer =
      Writer::Create(s, &machine, page->get(), &variants::UpstreamVariant());
  ASSERT_TRUE(writer.ok()) << writer.status();
  Writer& w = **writer;
  int before_newest = 0;  // Queries the scan, not the inline test, answers.
  int retired_some = 0;
  for (uint64_t t = 0; t <= 20000000; t += 250000) {  // 20 ms.
    w.AdvanceTo(t);
    if (t % 2000000 == 0) w.Retire(t);  // Retired now and then.
    if (w.retired() != 0) ++retired_some;
    // From before the oldest retained update to after the newest.
    for (uint64_t q = t > 3000000 ? t - 3000000 : 0; q <= t + 500000;
         q += 777) {
      const UpdateRecord* want = ByScan(w, q);
      ASSERT_NE(want, nullptr);
      const UpdateRecord& got = w.LatestStartedAt(q);
      ASSERT_EQ(got.id, want->id) << absl::StrFormat("t=%d q=%d", t, q);
      if (q < w.Update(w.latest_update())->start_ns) ++before_newest;
    }
  }
  EXPECT_GT(w.latest_update(), 15u);  // Updates did come.
  EXPECT_GT(before_newest, 1000);
  EXPECT_GT(retired_some, 0);
}

}  // namespace
}  // namespace vdsolab::sim
