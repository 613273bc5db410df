// Time namespaces, end to end: for generated timekeeper histories and
// namespace offsets in proc_timens_set_offset()'s domain, the upstream vDSO
// reader entering through the namespace's page (seq 1,
// VDSO_CLOCKMODE_TIMENS) answers bit for bit what clock_gettime() answers
// in that namespace: the initial namespace's syscall plus the offsets for
// the MONOTONIC and BOOTTIME families, unshifted for the rest; and it
// answers the clocks the vDSO serves from the pages, never the syscall. The
// counter stays within 2^62 of cycle_last (the x86 63-bit domain is
// reader_oracle_property_test's) and times within ktime's range.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/limits.h"
#include "testing/fixed_counter_hooks.h"
#include "tests/generators.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/timens.h"
#include "timekeeper/vsyscall.h"
#include "vdso/access.h"
#include "vdso/upstream_reader.h"
#include "vdso/vvar_page.h"

namespace vdsolab {
namespace {

using timekeeper::SyscallContext;
using timekeeper::TimensOffsets;

// An offset for a clock that reads `now`: anywhere proc_timens_set_offset()
// accepts, its edges included.
Timespec64 GenOffset(const Timespec64& now) {
  return testing::GenTimensOffset(-now.tv_sec,  // now + val >= 0 s
                                  kKtimeSecMax / 2 - now.tv_sec - 1);
}

RC_GTEST_PROP(TimensReader, MatchesTheSyscallPlusOffsets, ()) {
  auto page_or = vdso::VvarPage::CreateWithTimensView();
  RC_ASSERT(page_or.ok());
  std::unique_ptr<vdso::VvarPage> page = std::move(*page_or);
  timekeeper::VvarPublisher publisher(page.get(), 1);

  // The TSC, or kvm-clock (a KVM guest): then the vDSO reaches vCPU 0's
  // pvclock page from the start of the vvar area, which in the namespace
  // is the namespace's page, not the time page it diverts to.
  const bool kvm = *rc::gen::inRange(0, 3) == 0;
  RC_CLASSIFY(kvm, "kvm-clock");
  auto tsc = kvm ? timekeeper::ClocksourceRegisterScale(
                       "kvm-clock", timekeeper::ClocksourceMask(64), 1,
                       1000000000, timekeeper::kVdsoClockmodePvclock, 400)
                 : timekeeper::MakeTscClocksource(*testing::GenTscKhz());
  RC_ASSERT(tsc.ok());
  const timekeeper::Clocksource clock = *tsc;
  const uint64_t c0 = *testing::GenCounterStart() & clock.mask;
  const Timespec64 wall{*rc::gen::inRange<int64_t>(0, 4000000000),
                        *rc::gen::inRange<int64_t>(0, 1000000000)};
  const Timespec64 boot{*rc::gen::inRange<int64_t>(0, 100000),
                        *rc::gen::inRange<int64_t>(0, 1000000000)};
  timekeeper::Timekeeping tk(clock, *testing::GenHz(), &publisher);
  tk.Init(c0, wall, boot);
  // Some aux clocks on (6.17+): the namespace page's aux records divert
  // their readers to the real ones, which the namespace does not offset.
  int aux_enabled = 0;
  for (int i = 0; i < kMaxAuxClocks; ++i) {
    if (*rc::gen::inRange(0, 3) == 0) {
      tk.EnableAux(i, c0);
      ++aux_enabled;
    }
  }
  RC_CLASSIFY(aux_enabled > 0, "aux clocks enabled");

  // The offsets are written before the namespace's first task, against
  // MONOTONIC and BOOTTIME then; the page once, with them.
  SyscallContext at_init;
  at_init.cycles = c0;
  const Timespec64 mono0 =
      timekeeper::SysClockGettime(tk, kClockMonotonic, at_init).ts;
  const Timespec64 boot0 =
      timekeeper::SysClockGettime(tk, kClockBoottime, at_init).ts;
  TimensOffsets offsets;
  RC_ASSERT(timekeeper::TimensSetOffset(kClockMonotonic, GenOffset(mono0),
                                        mono0, &offsets) == 0);
  RC_ASSERT(timekeeper::TimensSetOffset(kClockBoottime, GenOffset(boot0), boot0,
                                        &offsets) == 0);
  page->ApplyTimens(timekeeper::BuildTimensPage(offsets));

  // A history of ticks and frequency changes after the namespace exists.
  const uint64_t ci = tk.timekeeper().cycle_interval;
  uint64_t now = c0;
  const int steps = *rc::gen::inRange(0, 30);
  for (int i = 0; i < steps; ++i) {
    now = (now + *testing::GenTickGap(ci, clock.max_cycles)) & clock.mask;
    if (*rc::gen::inRange(0, 8) == 0) {
      timekeeper::Timex txc;
      txc.modes = timekeeper::kAdjFrequency;
      txc.freq = *rc::gen::inRange<int64_t>(-(500ll << 16), 500ll << 16);
      RC_ASSERT(tk.Adjtimex(txc, now).ok());
    } else {
      tk.Advance(timekeeper::AdvanceMode::kTick, now);
    }
  }
  const uint64_t cycle_last = tk.timekeeper().tkr_mono.cycle_last;
  const uint64_t delta =
      *rc::gen::inRange<uint64_t>(0, 2 * clock.max_cycles + 1);
  SyscallContext ctx;
  ctx.cycles = (cycle_last + delta) & clock.mask;
  ctx.timens = &offsets;

  RC_CLASSIFY(offsets.monotonic.tv_sec < 0, "negative MONOTONIC offset");
  RC_CLASSIFY(offsets.boottime.tv_sec >= (1ll << 32),
              "BOOTTIME offset >= 2^32 s");
  RC_CLASSIFY(delta > clock.max_cycles, "delta > max_cycles");
  RC_CLASSIFY(offsets.monotonic.tv_nsec + mono0.tv_nsec >= 1000000000,
              "MONOTONIC nsec carries");

  // Every kernel clock id the vDSO knows, and the aux ids (disabled: the
  // namespace page diverts, the real record sends them to the syscall).
  // On kvm-clock the reader scales the TSC it reads with vCPU 0's pvti: a
  // pvti whose tsc_timestamp is that TSC and whose system_time is the
  // counter wanted (the scale of a 1 GHz TSC, ns = delta).
  uint64_t tsc_read = ctx.cycles;
  if (kvm) {
    tsc_read = *rc::gen::arbitrary<uint64_t>();
    const uint32_t pv = vdso::kPvclockPageOffset;
    page->Store(pv + vdso::kPvtiVersion, 4, 2);
    page->Store(pv + vdso::kPvtiTscTimestamp, 8, tsc_read);
    page->Store(pv + vdso::kPvtiSystemTime, 8, ctx.cycles);
    page->Store(pv + vdso::kPvtiMul, 4, 1u << 31);
    page->Store(pv + vdso::kPvtiShift, 1, 1);
    page->Store(pv + vdso::kPvtiFlags, 1, vdso::kPvclockTscStableBit);
    // The x86 vDSO's counter is 63 bits: past 2^63 the syscall's is not.
    RC_PRE(ctx.cycles < (uint64_t{1} << 63));
  }
  for (ClockId id = 0; id <= kClockAuxLast; ++id) {
    testing::FixedCounterHooks hooks(tsc_read);
    hooks.UseSyscallOf(&tk.timekeeper(), ctx);
    hooks.retry_budget = 0;
    vdso::HookedAccess access(page->data(), &hooks, page->timens_data(),
                              page->size());
    const std::optional<ClockResult> got =
        vdso::upstream::ClockGettime(access, page->timens_data(), id);
    RC_ASSERT(got.has_value());
    // The page is in TSC or PVCLOCK mode: the clocks the vDSO serves come
    // from the pages, not the syscall (whose answer is also right, so only this
    // tells a reader that lost the real time page from one that read it).
    const bool served =
        id < kMaxClocks &&
        ((1u << id) & (kVdsoHres | kVdsoCoarse | kVdsoRaw)) != 0;
    if (served && !hooks.fallbacks().empty()) {
      RC_FAIL(absl::StrFormat(
          "%s in the namespace went to the syscall on a %s page", ClockName(id),
          kvm ? "PVCLOCK" : "TSC"));
    }
    if (id >= kClockAux && tk.AuxEnabled(id - kClockAux)) {
      // An enabled aux clock comes from the pages too, and reads in the
      // namespace what it reads outside it.
      if (!hooks.fallbacks().empty()) {
        RC_FAIL(absl::StrFormat(
            "%s, enabled, in the namespace went to the syscall on a %s page",
            ClockName(id), kvm ? "PVCLOCK" : "TSC"));
      }
      testing::FixedCounterHooks outside(tsc_read);
      outside.retry_budget = 0;
      vdso::HookedAccess direct(page->data(), &outside);
      const std::optional<ClockResult> real =
          vdso::upstream::ClockGettime(direct, page->data(), id);
      RC_ASSERT(real.has_value());
      RC_ASSERT(outside.fallbacks().empty());
      if (!(*got == *real)) {
        RC_FAIL(absl::StrFormat("%s: %s in the namespace, %s outside it",
                                ClockName(id), FormatClockResult(*got),
                                FormatClockResult(*real)));
      }
      continue;
    }
    const ClockResult want = timekeeper::SysClockGettime(tk, id, ctx);
    if (!(*got == want)) {
      RC_FAIL(absl::StrFormat(
          "%s: vDSO %s, syscall in the namespace %s (counter %#x, offsets "
          "mono %s boot %s)",
          ClockName(id), FormatClockResult(*got), FormatClockResult(want),
          ctx.cycles, FormatTimespec(offsets.monotonic),
          FormatTimespec(offsets.boottime)));
    }
  }
}

}  // namespace
}  // namespace vdsolab
