// Property suite for the perf mmap page reader (variant perf-mmap): on any
// page the perf_event_mmap_page ABI allows, every capability combination,
// every time_shift the ABI's arithmetic is exact for, short counters of
// every width, the reader answers what include/uapi/linux/perf_event.h
// documents, written out here in 128 bits:
//
//   if (cap_user_time_short)
//     cyc = time_cycles + ((cyc - time_cycles) & time_mask);
//   timestamp = time_zero + cyc * time_mult >> time_shift   (mod 2^64)
//
// (the header splits cyc into quot and rem so that 64 bits suffice; the
// two agree for time_shift <= 32, which covers the kernel's <= 31), and
// -EOPNOTSUPP without cap_user_time_zero. The model's x86 writer never sets
// cap_user_time_short (x86 counters are 64 bits wide), so without this
// property the reader's short-counter path would meet no input at all.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "testing/fixed_counter_hooks.h"
#include "testing/publish_bed.h"
#include "timekeeper/timekeeping.h"
#include "variants/layout.h"
#include "variants/registry.h"
#include "variants/variant.h"
#include "vdso/access.h"
#include "vdso/vvar_page.h"

namespace vdsolab {
namespace {

// The capability bits (perf_event.h's bitfield, bit 0 first).
constexpr uint64_t kCapBit0IsDeprecated = 1ull << 1;
constexpr uint64_t kCapUserTime = 1ull << 3;
constexpr uint64_t kCapUserTimeZero = 1ull << 4;
constexpr uint64_t kCapUserTimeShort = 1ull << 5;
constexpr int32_t kEopnotsupp = 95;

const variants::Variant& Perf() {
  static const variants::Variant* v = [] {
    absl::StatusOr<const variants::Variant*> found =
        variants::FindVariant("perf-mmap");
    EXPECT_TRUE(found.ok()) << found.status();
    return *found;
  }();
  return *v;
}

uint32_t Offset(const char* field) {
  for (const variants::Field& f : Perf().layout->fields()) {
    if (f.name == field) return f.offset;
  }
  ADD_FAILURE() << "perf-mmap's layout has no field " << field;
  return 0;
}

// A value near 0, near the top, or anywhere: the edges of u64 arithmetic.
rc::Gen<uint64_t> GenU64() {
  return rc::gen::oneOf(rc::gen::inRange<uint64_t>(0, 1u << 20),
                        rc::gen::map(rc::gen::inRange<uint64_t>(0, 1u << 20),
                                     [](uint64_t x) { return ~x; }),
                        rc::gen::arbitrary<uint64_t>());
}

RC_GTEST_PROP(PerfPageProperty, AnswersTheHeadersFormula, ()) {
  const bool user_time = *rc::gen::arbitrary<bool>().as("cap_user_time");
  const bool zero = *rc::gen::arbitrary<bool>().as("cap_user_time_zero");
  const bool short_counter =
      *rc::gen::arbitrary<bool>().as("cap_user_time_short");
  const uint64_t caps = kCapBit0IsDeprecated | (user_time ? kCapUserTime : 0) |
                        (zero ? kCapUserTimeZero : 0) |
                        (short_counter ? kCapUserTimeShort : 0);
  const uint64_t time_zero = *GenU64().as("time_zero");
  const uint32_t mult =
      *rc::gen::oneOf(rc::gen::inRange<uint32_t>(0, 1u << 16),
                      rc::gen::inRange<uint32_t>(1u << 31, 0xffffffffu),
                      rc::gen::just<uint32_t>(0xffffffffu))
           .as("time_mult");
  const uint32_t shift = *rc::gen::inRange<uint32_t>(0, 33).as("time_shift");
  // A counter of `width` bits: time_mask = 2^width - 1 (all ones at 64).
  const int width = *rc::gen::inRange(1, 65).as("counter width");
  const uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1;
  const uint64_t time_cycles = *GenU64().as("time_cycles");
  const uint64_t counter = *GenU64().as("counter (rdtsc)");
  const uint32_t lock = 2 * *rc::gen::inRange<uint32_t>(0, 1u << 30);

  // One page for every case: each case writes every field the reader may
  // load.
  static vdso::VvarPage* const shared = [] {
    absl::StatusOr<std::unique_ptr<vdso::VvarPage>> p =
        vdso::VvarPage::Create();
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? p->release() : nullptr;
  }();
  RC_ASSERT(shared != nullptr);
  vdso::VvarPage& page = *shared;
  page.Store(Offset("lock"), 4, lock);
  page.Store(Offset("capabilities"), 8, caps);
  page.Store(Offset("time_zero"), 8, time_zero);
  page.Store(Offset("time_mult"), 4, mult);
  page.Store(Offset("time_shift"), 2, shift);
  page.Store(Offset("time_cycles"), 8, time_cycles);
  page.Store(Offset("time_mask"), 8, mask);

  const ClockId clock = Perf().own_clocks.front().id;
  testing::FixedCounterHooks hooks(counter);
  vdso::HookedAccess access(page.data(), &hooks);
  const std::optional<ClockResult> got =
      Perf().make_sim_reader()->Call(access, page.data(), clock);
  RC_ASSERT(got.has_value());

  ClockResult want = ClockResult::Error(-kEopnotsupp);
  if (zero) {
    uint64_t cyc = counter;
    if (short_counter) cyc = time_cycles + ((cyc - time_cycles) & mask);
    const uint64_t ns =
        time_zero + static_cast<uint64_t>(
                        (static_cast<unsigned __int128>(cyc) * mult) >> shift);
    want = ClockResult::Ok(Timespec64{static_cast<int64_t>(ns / 1000000000u),
                                      static_cast<int64_t>(ns % 1000000000u)});
  }
  RC_CLASSIFY(!zero, "no cap_user_time_zero");
  RC_CLASSIFY(zero && short_counter, "short counter");
  RC_CLASSIFY(zero && short_counter && ((counter - time_cycles) & ~mask) != 0,
              "counter beyond time_mask");
  RC_CLASSIFY(zero && !short_counter, "full-width counter");
  if (!(*got == want)) {
    RC_FAIL(absl::StrFormat(
        "caps %#x, time_zero %#x, time_mult %#x, time_shift %d, time_cycles "
        "%#x, time_mask %#x, counter %#x: read %s, the header's formula %s",
        caps, time_zero, mult, shift, time_cycles, mask, counter,
        FormatClockResult(*got), FormatClockResult(want)));
  }
}

// The writer's side of the same ABI: the capabilities word x86's
// arch_perf_update_userpage() leaves on the page, bit by bit as
// perf_event.h lays the bitfield out: cap_bit0 (bit 0) always 0 and
// cap_bit0_is_deprecated (bit 1) always 1 (perf_event_init_userpage(),
// 3.12+); no user rdpmc (bit 2) for the modelled event; cap_user_time and
// cap_user_time_zero (bits 3 and 4) exactly when the TSC is known and
// synchronised (sched_clock_stable()); never cap_user_time_short (bit 5:
// x86 counters are 64 bits wide); no other bit.
RC_GTEST_PROP(PerfPageProperty, TheWritersCapabilitiesAreTheAbis, ()) {
  variants::PublishContext ctx;
  ctx.tsc_khz =
      *rc::gen::element<uint32_t>(0, 1000000, 2600000, 3579545).as("tsc_khz");
  ctx.counters_synced = *rc::gen::arbitrary<bool>().as("counters synced");
  ctx.boot_counter = *GenU64().as("boot counter");
  testing::PublishBed bed(Perf(), testing::Tsc(2600000), ctx);
  bed.tk().Init(ctx.boot_counter, Timespec64{1000, 0}, Timespec64{0, 0});
  bed.tk().Advance(timekeeper::AdvanceMode::kTick,
                   ctx.boot_counter + *rc::gen::inRange<uint64_t>(1, 1u << 30));
  const uint64_t caps = bed.page().Load(Offset("capabilities"), 8);
  const bool available = ctx.tsc_khz != 0 && ctx.counters_synced;
  RC_CLASSIFY(available, "user time available");
  const uint64_t want =
      kCapBit0IsDeprecated |
      (available ? kCapUserTime | kCapUserTimeZero : uint64_t{0});
  if (caps != want) {
    RC_FAIL(
        absl::StrFormat("tsc_khz %d, synced %d: capabilities %#x, the "
                        "ABI's %#x",
                        ctx.tsc_khz, ctx.counters_synced, caps, want));
  }
}

}  // namespace
}  // namespace vdsolab
