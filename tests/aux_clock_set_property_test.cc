// clock_settime() of an aux clock (6.17+, aux_clock_set()) against its
// definition: the clock then reads, at the counter of the call, exactly
// the time set (the new offset is the time set minus the aux clock's own
// MONOTONIC at that counter), and runs on from there at the rate it had.
// The call comes any time after the last update, across second
// boundaries too: aux_clock_set() forwards the timekeeper to the counter
// and recomputes its ktime base before it takes the difference.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/timespec.h"
#include "tests/generators.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeper.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/vsyscall.h"
#include "vdso/datapage.h"
#include "vdso/vvar_page.h"

namespace vdsolab {
namespace {

namespace tk = timekeeper;

constexpr int64_t kNsec = 1000000000;

RC_GTEST_PROP(AuxClockSet, ReadsBackExactlyTheTimeSet, ()) {
  absl::StatusOr<tk::Clocksource> tsc =
      tk::MakeTscClocksource(*testing::GenTscKhz());
  RC_ASSERT(tsc.ok());
  tk::Timekeeping k(*tsc, *testing::GenHz(), nullptr);
  const uint64_t c0 = *testing::GenCounterStart() & tsc->mask;
  k.Init(c0,
         Timespec64{*rc::gen::inRange<int64_t>(1000000, 1ll << 32),
                    *rc::gen::inRange<int64_t>(0, kNsec)},
         Timespec64{*rc::gen::inRange<int64_t>(0, 100000),
                    *rc::gen::inRange<int64_t>(0, kNsec)});
  const int index = *rc::gen::inRange(0, 8).as("aux clock");
  const uint64_t ci = k.timekeeper().cycle_interval;
  uint64_t elapsed = 0;
  k.EnableAux(index, c0);
  const int ticks = *rc::gen::inRange(0, 300);
  for (int i = 0; i < ticks; ++i) {
    elapsed += ci;
    k.Advance(tk::AdvanceMode::kTick, (c0 + elapsed) & tsc->mask);
  }
  // The call: up to a few seconds' worth of ticks after the last update
  // (no tick between: NO_HZ idle), so that it can cross seconds.
  elapsed += *rc::gen::resize(
      rc::kNominalSize,
      rc::gen::oneOf(rc::gen::inRange<uint64_t>(0, ci),
                     rc::gen::inRange<uint64_t>(0, 1000 * ci)));
  const uint64_t now = (c0 + elapsed) & tsc->mask;
  const Timespec64 set{*rc::gen::inRange<int64_t>(0, 1ll << 32),
                       *rc::gen::inRange<int64_t>(0, kNsec)};
  RC_ASSERT(k.AuxSetTime(index, set, now) == 0);
  tk::SyscallContext ctx;
  ctx.cycles = now;
  std::array<tk::Timekeeper, kMaxAuxClocks> aux;
  for (int i = 0; i < kMaxAuxClocks; ++i) {
    aux[static_cast<size_t>(i)] = k.aux_timekeeper(i);
  }
  ctx.aux_timekeepers = aux.data();
  const ClockResult got = tk::SysClockGettime(k, kClockAux + index, ctx);
  RC_ASSERT(got.ret == 0);
  if (!(got.ts == set)) {
    RC_FAIL(absl::StrFormat(
        "CLOCK_AUX + %d set to %d.%09d at counter %#x (%d cycles after the "
        "last update) reads %d.%09d there",
        index, set.tv_sec, set.tv_nsec, now,
        elapsed - static_cast<uint64_t>(ticks) * ci, got.ts.tv_sec,
        got.ts.tv_nsec));
  }
  RC_CLASSIFY(elapsed - static_cast<uint64_t>(ticks) * ci >= ci,
              "set after NO_HZ idle");
}

// The aux clocks' accessors over every int: an index outside 0..7 (what a
// clock id past CLOCK_AUX_LAST, or below CLOCK_AUX, would give) is no aux
// clock. clock_settime() and clock_adjtime() refuse it with -EINVAL
// (clockid_aux_valid()); AuxEnabled() says no; the read accessors give aux
// clock 0's state, as documented, never memory past the eight.
RC_GTEST_PROP(AuxClockSet, IndicesOutsideTheEightAreNoAuxClock, ()) {
  absl::StatusOr<tk::Clocksource> tsc =
      tk::MakeTscClocksource(*testing::GenTscKhz());
  RC_ASSERT(tsc.ok());
  tk::Timekeeping k(*tsc, *testing::GenHz(), nullptr);
  const uint64_t c0 = *testing::GenCounterStart() & tsc->mask;
  k.Init(c0, Timespec64{1700000000, 0}, Timespec64{1, 0});
  std::array<bool, kMaxAuxClocks> enabled{};
  for (int i = 0; i < kMaxAuxClocks; ++i) {
    enabled[static_cast<size_t>(i)] = *rc::gen::arbitrary<bool>();
    if (enabled[static_cast<size_t>(i)]) k.EnableAux(i, c0);
  }
  const int index = *rc::gen::oneOf(
      rc::gen::element(-1, kMaxAuxClocks, kMaxAuxClocks + 1, INT_MIN, INT_MAX),
      rc::gen::inRange(0, kMaxAuxClocks), rc::gen::arbitrary<int>());
  const bool valid = index >= 0 && index < kMaxAuxClocks;
  RC_CLASSIFY(valid, "an aux clock");
  RC_CLASSIFY(index == kMaxAuxClocks || index == -1, "one past either end");
  RC_ASSERT(k.AuxEnabled(index) ==
            (valid && enabled[static_cast<size_t>(valid ? index : 0)]));
  if (valid) {
    RC_ASSERT(&k.aux_timekeeper(index) != &k.aux_timekeeper(0) || index == 0);
    return;
  }
  RC_ASSERT(&k.aux_timekeeper(index) == &k.aux_timekeeper(0));
  RC_ASSERT(&k.aux_ntp(index) == &k.aux_ntp(0));
  RC_ASSERT(k.AuxSetTime(index, Timespec64{1, 0}, c0) == -22);
  tk::Timex txc;
  RC_ASSERT(k.AuxAdjtimex(index, &txc, c0) == -22);
}

}  // namespace
}  // namespace vdsolab

namespace vdsolab {
namespace {

// vdso_time_update_aux() publishes the record of the aux clock a
// timekeeper is: for every id, an aux clock's (kTimekeeperAuxFirst ..
// +7) changes exactly that record's bytes, and any other id (the core's,
// or one past the last aux clock) changes no byte of the area.
RC_GTEST_PROP(AuxClockSet, AnUpdateWritesOnlyItsOwnAuxRecord, ()) {
  auto page = vdso::VvarPage::Create();
  RC_ASSERT(page.ok());
  tk::VvarPublisher publisher(page->get(), 1);
  tk::Timekeeper t;
  t.id = *rc::gen::oneOf(
      rc::gen::inRange(tk::kTimekeeperAuxFirst - 2,
                       tk::kTimekeeperAuxFirst + kMaxAuxClocks + 2),
      rc::gen::element(INT_MIN, INT_MAX));
  t.xtime_sec = *rc::gen::inRange<uint64_t>(1, 1u << 31);
  // Through the writer's mapping: the readers' leaves the pages the kernel
  // does not map unreadable.
  auto words = [&page] {
    std::vector<uint64_t> w;
    for (uint32_t i = 0; i < (*page)->size(); i += 8) {
      w.push_back((*page)->Load(i, 8));
    }
    return w;
  };
  const std::vector<uint64_t> before = words();
  publisher.UpdateAux(t);
  const int64_t index = int64_t{t.id} - tk::kTimekeeperAuxFirst;
  const bool aux = index >= 0 && index < kMaxAuxClocks;
  RC_CLASSIFY(aux, "an aux clock's timekeeper");
  const uint32_t lo =
      aux ? vdso::AuxClockDataOffset(static_cast<int>(index)) : 0;
  const uint32_t hi =
      aux ? vdso::AuxClockDataOffset(static_cast<int>(index) + 1) : 0;
  // The aux records are whole words (232 bytes each, from a word).
  static_assert(vdso::AuxClockDataOffset(0) % 8 == 0 &&
                vdso::AuxClockDataOffset(1) % 8 == 0);
  const std::vector<uint64_t> after = words();
  bool own_changed = false;
  for (size_t w = 0; w < before.size(); ++w) {
    const size_t i = w * 8;
    if (i >= lo && i < hi) {
      own_changed |= after[w] != before[w];
      continue;
    }
    if (after[w] != before[w]) {
      RC_FAIL(
          absl::StrFormat("timekeeper id %d changed the word at %#x", t.id, i));
    }
  }
  if (aux) RC_ASSERT(own_changed);
}

}  // namespace
}  // namespace vdsolab

namespace vdsolab {
namespace {

namespace tk = timekeeper;

// Enabling and disabling aux clocks (aux_clock_enable()/_disable()) in any
// order, on any int index, against the plainest model: the set of enabled
// clocks among the eight. After every operation each clock is enabled
// exactly when the set says, and a disabled one refuses clock_settime()
// with -ENODEV; an index outside the eight changes nothing. (A disable
// that did nothing passed every scenario, whose oracles read the model's
// own state.)
RC_GTEST_PROP(AuxClockSet, EnableAndDisableFollowTheSetOfEnabledClocks, ()) {
  absl::StatusOr<tk::Clocksource> tsc =
      tk::MakeTscClocksource(*testing::GenTscKhz());
  RC_ASSERT(tsc.ok());
  tk::Timekeeping k(*tsc, *testing::GenHz(), nullptr);
  const uint64_t c0 = *testing::GenCounterStart() & tsc->mask;
  k.Init(c0, Timespec64{1700000000, 0}, Timespec64{1, 0});
  std::array<bool, kMaxAuxClocks> model{};
  const int ops = *rc::gen::inRange(1, 40);
  int disables = 0;
  for (int op = 0; op < ops; ++op) {
    const bool enable = *rc::gen::arbitrary<bool>();
    const int index =
        *rc::gen::oneOf(rc::gen::inRange(0, kMaxAuxClocks),
                        rc::gen::element(-1, kMaxAuxClocks, INT_MIN, INT_MAX));
    const bool valid = index >= 0 && index < kMaxAuxClocks;
    if (enable) {
      k.EnableAux(index, c0);
    } else {
      k.DisableAux(index);
    }
    if (valid) {
      bool& on = model[static_cast<size_t>(index)];
      disables += (!enable && on) ? 1 : 0;
      on = enable;
    }
    for (int i = 0; i < kMaxAuxClocks; ++i) {
      const bool on = model[static_cast<size_t>(i)];
      if (k.AuxEnabled(i) != on) {
        RC_FAIL(absl::StrFormat("after %s(%d), aux clock %d is %s, want %s",
                                enable ? "EnableAux" : "DisableAux", index, i,
                                k.AuxEnabled(i) ? "enabled" : "disabled",
                                on ? "enabled" : "disabled"));
      }
      RC_ASSERT(k.aux_timekeeper(i).clock_valid == on);
      if (!on) RC_ASSERT(k.AuxSetTime(i, Timespec64{5, 0}, c0) == -19);
    }
  }
  RC_CLASSIFY(disables > 0, "an enabled clock disabled");
}

}  // namespace
}  // namespace vdsolab
