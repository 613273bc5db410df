// Every built-in variant's native build (Variant::native_loop: its reader
// compiled with NativeAccess, plain loads and the real TSC, the code the
// benchmark measures and the closest thing to what the kernel runs) against
// its hooked build (HookedAccess, the code every simulation property
// judges), on the same page.
//
// Each built-in variant is compiled code vdsolab owns, so each must have a
// native build (nullptr is for variants with no in-process code: a plugin
// without one, a kernel tree, a compiled vDSO image). A variant that lost
// it silently drops its benchmark rows; a native build that computed
// differently from the hooked one would make the benchmark measure code no
// property checks.
//
// The native reader reads the real TSC, so its counter is not chosen: the
// test reads the TSC itself just before and just after the call (c0, c1,
// ordered by lfence) and asserts that the native answer lies between the
// hooked reader's answers at c0 and at c1, on a page a generated timekeeper
// history published at real counter values shortly before. Clocks read
// from the page only: a clock the variant sends to the syscall would reach
// the host's real clock_gettime() natively.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <x86intrin.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/timespec.h"
#include "testing/publish_bed.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/timex.h"
#include "variants/registry.h"
#include "variants/variant.h"

namespace vdsolab {
namespace {

constexpr uint32_t kKhz = 2600000;

// lfence; rdtsc; lfence: ordered after every earlier instruction and
// before every later one, so it brackets the native call's own counter
// read.
uint64_t OrderedTsc() {
  _mm_lfence();
  const uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

// The value RunNativeLoop() returns for a call's answer: the time in ns
// (wrapping as its u64 arithmetic does), 0 on an error.
uint64_t AsNativeLoopValue(const ClockResult& r) {
  if (r.ret != 0) return 0;
  return static_cast<uint64_t>(r.ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(r.ts.tv_nsec);
}

// The clocks `v` answers from the page: the kernel ids it serves there
// (the aux clocks aside: the bed publishes no aux record, so they fall
// back), and its own user-space clocks.
std::vector<ClockId> PageClocks(const variants::Variant& v) {
  std::vector<ClockId> clocks;
  for (ClockId c : v.vdso_clocks) {
    if (c >= kClockAux && c <= kClockAuxLast) continue;
    if (v.own_clocks_only && variants::FindOwnClock(v, c) == nullptr) {
      continue;
    }
    clocks.push_back(c);
  }
  for (const variants::ClockDef& c : v.own_clocks) {
    if (c.kind != variants::ClockKind::kUserspace) continue;
    bool listed = false;
    for (ClockId id : clocks) listed |= id == c.id;
    if (!listed) clocks.push_back(c.id);
  }
  return clocks;
}

RC_GTEST_PROP(NativeReader, AgreesWithTheHookedReaderOnTheSamePage, ()) {
  const std::vector<const variants::Variant*> all = variants::AllVariants();
  const variants::Variant& v =
      **rc::gen::elementOf(all).as("variant (index into AllVariants)");
  RC_TAG(std::string(v.name));
  if (v.native_loop == nullptr) {
    RC_FAIL(absl::StrFormat("built-in variant %s has no native build", v.name));
  }
  const std::vector<ClockId> clocks = PageClocks(v);
  RC_PRE(!clocks.empty());
  const ClockId clock = *rc::gen::elementOf(clocks).as("clock");

  // A history published at real counter values: booted up to ten seconds
  // (at kKhz) before now, ticks up to now, sometimes a frequency change.
  const uint64_t real = OrderedTsc();
  const uint64_t ci = uint64_t{kKhz} * 1000 / 250;  // One tick at HZ=250.
  const uint64_t back = *rc::gen::inRange<uint64_t>(0, 2500) * ci / 100;
  const uint64_t boot = real - back;
  variants::PublishContext ctx;
  ctx.tsc_khz = kKhz;
  ctx.boot_counter = boot;
  testing::PublishBed bed(v, testing::Tsc(kKhz), ctx);
  bed.tk().Init(boot,
                Timespec64{*rc::gen::inRange<int64_t>(0, 4000000000),
                           *rc::gen::inRange<int64_t>(0, 1000000000)},
                Timespec64{*rc::gen::inRange<int64_t>(0, 100000), 0});
  uint64_t now = boot;
  while (now + ci <= real) {
    now += ci - ci / 100 + *rc::gen::inRange<uint64_t>(0, ci / 50);
    if (now > real) break;
    if (*rc::gen::inRange(0, 20) == 0) {
      timekeeper::Timex txc;
      txc.modes = timekeeper::kAdjFrequency;
      txc.freq = *rc::gen::inRange<int64_t>(-(500ll << 16), 500ll << 16);
      RC_ASSERT(bed.tk().Adjtimex(txc, now).ok());
    }
    bed.tk().Advance(timekeeper::AdvanceMode::kTick, now);
  }

  // The native call between two counter reads; the hooked reader at both.
  const uint64_t c0 = OrderedTsc();
  const uint64_t native = v.native_loop(bed.page().data(), clock, 1);
  const uint64_t c1 = OrderedTsc();
  RC_ASSERT(c0 <= c1);
  bed.ResetReader();  // The native loop's per-process state starts afresh.
  const std::optional<ClockResult> at0 = bed.Read(clock, c0);
  RC_ASSERT(at0.has_value());
  RC_ASSERT(bed.hooks().fallbacks().empty());
  bed.ResetReader();
  const std::optional<ClockResult> at1 = bed.Read(clock, c1);
  RC_ASSERT(at1.has_value());
  RC_ASSERT(bed.hooks().fallbacks().empty());
  const uint64_t lo = AsNativeLoopValue(*at0);
  const uint64_t hi = AsNativeLoopValue(*at1);
  RC_CLASSIFY(at0->ret != 0, "an error answered from the page");
  RC_CLASSIFY(lo == hi, "no time passed on this clock (coarse)");
  // Between, modulo 2^64: the u64 ns value may wrap (a count stored over
  // tv_sec), but c0..c1 spans microseconds, far less than a wrap.
  if (native - lo > hi - lo) {
    RC_FAIL(absl::StrFormat(
        "%s, %s: native %u is not between the hooked reader's %u (counter "
        "%u) and %u (counter %u)",
        v.name, variants::VariantClockName(v, clock), native, lo, c0, hi, c1));
  }
}

}  // namespace
}  // namespace vdsolab
