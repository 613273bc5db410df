// The MONOTONIC and BOOTTIME bases update_vsyscall() publishes, against
// their definitions written out here from the kernel's code, for
// timekeepers after any sleep, of every size up to and past where 5.3's
// arithmetic wraps:
//
// - MONOTONIC (kernel/time/vsyscall.c, every era): sec = xtime_sec +
//   wall_to_monotonic.tv_sec; nsec = xtime_nsec + (wall_to_monotonic.tv_nsec
//   << shift); whole seconds carried out of nsec.
// - BOOTTIME since 5.4 (b99328a60a48): the MONOTONIC base plus
//   monotonic_to_boot, its tv_nsec << shift, carried the same way.
// - BOOTTIME in 5.3 (the vsyscall_boottime_shift_overflow history defect):
//   sec = xtime_sec + wall_to_monotonic.tv_sec; nsec = xtime_nsec +
//   ((u64)(wall_to_monotonic.tv_nsec + ktime_to_ns(offs_boot)) << shift),
//   wrapping in u64 once the sleep passes 2^64 >> shift ns; carried the
//   same way. A defect is modelled exactly, not merely "wrong": a
//   publication that is wrong some other way is not 5.3's.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "absl/strings/str_format.h"
#include "common/limits.h"
#include "common/timespec.h"
#include "tests/generators.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/vsyscall.h"
#include "vdso/datapage.h"
#include "vdso/vvar_page.h"

namespace vdsolab {
namespace {

constexpr int64_t kNsec = 1000000000;

struct Base {
  uint64_t sec = 0;
  uint64_t nsec = 0;  // Shifted ns.
  bool operator==(const Base&) const = default;
};

// The kernel's `while (nsec >= NSEC_PER_SEC << shift)` carry.
Base Carry(Base b, uint32_t shift) {
  const uint64_t second = static_cast<uint64_t>(kNsec) << shift;
  b.sec += b.nsec / second;
  b.nsec %= second;
  return b;
}

Base Published(const vdso::VvarPage& page, ClockId clock) {
  const uint32_t vc = vdso::ClockDataOffset(vdso::kCsHresCoarse);
  return Base{page.Load(vc + vdso::VcBasetimeSec(clock), 8),
              page.Load(vc + vdso::VcBasetimeNsec(clock), 8)};
}

// A sleep: none, ordinary ones, and the ones around where 5.3's shifted
// boot offset wraps (2^64 >> shift ns), past it, and far past it.
Timespec64 GenSleep(uint32_t shift) {
  const int64_t wrap_ns = static_cast<int64_t>(~uint64_t{0} >> shift);
  // Three sleeps of at most this stay inside ktime_t.
  const int64_t far = std::min(64 * (wrap_ns / 64), kKtimeMax / 4 / 64) * 64;
  const int64_t ns = *rc::gen::weightedOneOf<int64_t>(
      {{1, rc::gen::just<int64_t>(0)},
       {2, rc::gen::inRange<int64_t>(0, 3600 * kNsec)},
       {3, rc::gen::inRange<int64_t>(wrap_ns - 2 * kNsec, wrap_ns + 2 * kNsec)},
       {2, rc::gen::inRange<int64_t>(std::min(wrap_ns, far), far + 1)}});
  return Timespec64{ns / kNsec, ns % kNsec};
}

RC_GTEST_PROP(VsyscallBases, MonotonicAndBoottimeAreTheirDefinitions, ()) {
  absl::StatusOr<timekeeper::Clocksource> tsc =
      timekeeper::MakeTscClocksource(*testing::GenTscKhz());
  RC_ASSERT(tsc.ok());
  timekeeper::Timekeeping k(*tsc, *testing::GenHz(), nullptr);
  const uint64_t c0 = *testing::GenCounterStart() & tsc->mask;
  k.Init(c0,
         Timespec64{*rc::gen::inRange<int64_t>(0, 1ll << 34),
                    *rc::gen::inRange<int64_t>(0, kNsec)},
         Timespec64{*rc::gen::inRange<int64_t>(0, 100000),
                    *rc::gen::inRange<int64_t>(0, kNsec)});
  const uint64_t ci = k.timekeeper().cycle_interval;
  uint64_t now = c0;
  const int sleeps = *rc::gen::element(0, 1, 1, 2);
  for (int i = 0; i < sleeps; ++i) {
    const int ticks = *rc::gen::inRange(0, 3);
    for (int t = 0; t < ticks; ++t) {
      now = (now + ci + *rc::gen::inRange<uint64_t>(0, ci)) & tsc->mask;
      k.Advance(timekeeper::AdvanceMode::kTick, now);
    }
    k.InjectSleeptime64(GenSleep(k.timekeeper().tkr_mono.shift), now);
  }
  const timekeeper::Timekeeper& tk = k.timekeeper();
  const uint32_t shift = tk.tkr_mono.shift;
  // Where 5.3's u64 sum of shifted ns wraps: the shift, or the sum.
  const unsigned __int128 sum53 =
      tk.tkr_mono.xtime_nsec +
      (static_cast<unsigned __int128>(
           static_cast<uint64_t>(tk.wall_to_monotonic.tv_nsec + tk.offs_boot))
       << shift);
  const bool wraps = (sum53 >> 64) != 0;
  RC_CLASSIFY(tk.offs_boot == 0, "no sleep");
  RC_TAG(sleeps);
  RC_CLASSIFY(wraps, "5.3's shifted boot offset wraps");

  const Base mono = Carry(
      Base{tk.xtime_sec + static_cast<uint64_t>(tk.wall_to_monotonic.tv_sec),
           tk.tkr_mono.xtime_nsec +
               (static_cast<uint64_t>(tk.wall_to_monotonic.tv_nsec) << shift)},
      shift);
  const Base boot = Carry(
      Base{mono.sec + static_cast<uint64_t>(tk.monotonic_to_boot.tv_sec),
           mono.nsec +
               (static_cast<uint64_t>(tk.monotonic_to_boot.tv_nsec) << shift)},
      shift);
  const Base boot53 = Carry(
      Base{tk.xtime_sec + static_cast<uint64_t>(tk.wall_to_monotonic.tv_sec),
           tk.tkr_mono.xtime_nsec +
               (static_cast<uint64_t>(tk.wall_to_monotonic.tv_nsec +
                                      tk.offs_boot)
                << shift)},
      shift);

  for (const bool era53 : {false, true}) {
    absl::StatusOr<std::unique_ptr<vdso::VvarPage>> page =
        vdso::VvarPage::Create();
    RC_ASSERT(page.ok());
    timekeeper::VvarPublisher publisher(page->get(), 1, era53);
    publisher.UpdateVsyscall(tk);
    const Base got_mono = Published(**page, kClockMonotonic);
    const Base got_boot = Published(**page, kClockBoottime);
    const Base want_boot = era53 ? boot53 : boot;
    if (!(got_mono == mono) || !(got_boot == want_boot)) {
      RC_FAIL(absl::StrFormat(
          "%s: MONOTONIC base {%d, %#x}, want {%d, %#x}; BOOTTIME base "
          "{%d, %#x}, want {%d, %#x} (offs_boot %d ns, shift %d)",
          era53 ? "5.3" : "5.4+", got_mono.sec, got_mono.nsec, mono.sec,
          mono.nsec, got_boot.sec, got_boot.nsec, want_boot.sec, want_boot.nsec,
          tk.offs_boot, shift));
    }
  }
  // Below the wrap the two eras publish the same BOOTTIME.
  if (!wraps) RC_ASSERT(boot53 == boot);
}

}  // namespace
}  // namespace vdsolab
