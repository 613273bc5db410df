// The host variant's acceptance criterion: the running kernel's compiled
// vDSO, run as machine code under the simulation's hooks, agrees bit for
// bit with vdsolab's built-in reader of the same layout (the variant its
// era names: "upstream" on a 6.17+ kernel) on random consistent pages (a
// timekeeper history published by that variant's writer) and random
// counters, in every regime: in range, delta past max_cycles (the 128-bit
// path), negative motion (bit 62 of the masked delta), clock modes the
// vDSO does not read; and on kvm-clock pages through the image's own
// vread_pvclock(). Results, fallbacks and counter reads (kind included)
// must be equal. Kernel builds' images (Debian's 6.1 and 6.12 vdso64.so,
// say) are compared with their eras' readers where present. The seed is
// printed; VDSOLAB_SEED replays another.

#include <glob.h>
#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/math64.h"
#include "common/rng.h"
#include "hostvdso/host_variant.h"
#include "hostvdso/testing/test_images.h"
#include "testing/fixed_counter_hooks.h"
#include "testing/publish_bed.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/ntp.h"
#include "variants/registry.h"
#include "vdso/datapage.h"
#include "vdso/upstream_reader.h"

namespace vdsolab::hostvdso {
namespace {

using vdsolab::testing::FixedCounterHooks;
using vdsolab::testing::PublishBed;

constexpr int kPages = 1000;
constexpr int kCountersPerPage = 5;

uint64_t Seed() {
  const char* s = std::getenv("VDSOLAB_SEED");
  return s != nullptr ? std::strtoull(s, nullptr, 0) : 0x686f7374ull;
}

timekeeper::Clocksource GenClocksource(Rng& rng) {
  if (rng.Below(8) != 0) {
    static constexpr uint32_t kKhz[] = {2600000, 2400000, 3000000, 2596005,
                                        2095998, 3699999, 1000000};
    const uint32_t khz =
        rng.Below(3) == 0 ? static_cast<uint32_t>(rng.InRange(500000, 6000000))
                          : kKhz[rng.Below(7)];
    return *timekeeper::MakeTscClocksource(khz);
  }
  // A clocksource the vDSO cannot read: the writer publishes mode NONE.
  return *timekeeper::ClocksourceRegisterScale(
      "hpet", timekeeper::ClocksourceMask(32), 1, 14318180,
      timekeeper::kVdsoClockmodeNone, 250);
}

uint64_t GenCounterStart(Rng& rng) {
  switch (rng.Below(8)) {
    case 0:
      return rng.InRange((1ull << 32) - (1ull << 26),
                         (1ull << 32) + (1ull << 26));
    case 1:
      return rng.InRange((1ull << 62) - (1ull << 40),
                         (1ull << 62) + (1ull << 20));
    case 2:
      return rng.InRange((1ull << 63) - (1ull << 40),
                         (1ull << 63) + (1ull << 20));
    case 3:
      return rng.InRange(~0ull - (1ull << 40), ~0ull);
    default:
      return rng.InRange(0, 1ull << 44);
  }
}

uint64_t GenTickGap(Rng& rng, uint64_t ci, uint64_t max_cycles) {
  switch (rng.Below(14)) {
    case 0:
    case 1:
      return rng.InRange(0, ci);
    case 2:
    case 3:
      return rng.InRange(ci, 64 * ci);
    case 4:
      return rng.InRange(max_cycles - 2, max_cycles + 3);
    case 5:
      return rng.InRange(max_cycles, 4 * max_cycles);
    default:
      return rng.InRange(ci - ci / 50, ci + ci / 50);
  }
}

// The probe counter's distance from cycle_last (two's complement).
uint64_t GenProbeDelta(Rng& rng, uint64_t ci, uint64_t max_cycles) {
  static constexpr uint64_t kSpecial[] = {0,
                                          1,
                                          ~0ull,
                                          ~0ull - 1,
                                          (1ull << 62) - 1,
                                          1ull << 62,
                                          (1ull << 62) + 1,
                                          (1ull << 63) - 1,
                                          1ull << 63,
                                          (1ull << 63) + 1,
                                          (1ull << 63) + (1ull << 62)};
  switch (rng.Below(20)) {
    case 0:
    case 1:
      return kSpecial[rng.Below(sizeof(kSpecial) / sizeof(kSpecial[0]))];
    case 2:
    case 3:
    case 4:
      return ~0ull - rng.InRange(0, 1ull << 24);  // Behind cycle_last.
    case 5:
    case 6:
      return max_cycles - 1 + rng.Below(4);
    case 7:
    case 8:
    case 9:
      return rng.InRange(max_cycles, 1ull << 62);
    case 10:
    case 11:
      return rng.Next();
    default:
      return rng.InRange(0, 2 * ci);
  }
}

uint32_t FieldOffset(const variants::Variant& v, const std::string& name) {
  for (const variants::Field& f : v.layout->fields()) {
    if (f.name == name) return f.offset;
  }
  ADD_FAILURE() << "no field " << name;
  return 0;
}

std::string Regime(bool masked63, int32_t mode, uint64_t counter,
                   uint64_t cycle_last, uint64_t max_cycles) {
  if (mode != 1) return "fallback: clock mode the vDSO does not read";
  if (!masked63) {
    if ((counter >> 63) != 0) return "fallback: counter bit 63 set";
    if (counter <= cycle_last) return "negative motion: clamped to cycle_last";
    if (counter - cycle_last > max_cycles) {
      return "delta past max_cycles: multiply wraps";
    }
    return "delta in range";
  }
  const uint64_t delta = (counter & kS64Max) - cycle_last;
  if (delta > max_cycles) {
    return (delta & (1ull << 62)) != 0 ? "negative motion: bit 62"
                                       : "delta past max_cycles: 128-bit path";
  }
  return "delta in range";
}

std::string Describe(const std::optional<ClockResult>& r) {
  return r ? FormatClockResult(*r) : "abandoned";
}

// The image of `host` against the built-in reader of its era on `pages`
// random pages x 5 counters, every clock id.
void Agree(const variants::Variant* host, int pages) {
  const HostImageInfo* info = FindHostImageInfo(host);
  ASSERT_NE(info, nullptr);
  absl::StatusOr<const variants::Variant*> builtin_or =
      variants::FindVariant(info->era);
  ASSERT_TRUE(builtin_or.ok());
  const variants::Variant& builtin = **builtin_or;
  const bool masked63 =
      builtin.semantics.counter == variants::CounterSemantics::kMasked63;
  EXPECT_EQ(host->layout, builtin.layout);
  EXPECT_EQ(host->build_update, builtin.build_update);
  EXPECT_EQ(host->semantics, builtin.semantics);
  const uint64_t seed = Seed();
  std::printf(
      "seed %#llx (VDSOLAB_SEED=... to replay another); Linux %s vs "
      "built-in %s\n",
      static_cast<unsigned long long>(seed), info->version.c_str(),
      info->era.c_str());
  std::unique_ptr<variants::SimReader> host_reader = host->make_sim_reader();
  std::unique_ptr<variants::SimReader> builtin_reader =
      builtin.make_sim_reader();
  const std::string record =
      builtin.layout->FieldAt(0) != nullptr ? "clock_data" : "vdso_data";
  const uint32_t mode_offsets[] = {
      FieldOffset(builtin, record + "[0].clock_mode"),
      FieldOffset(builtin, record + "[1].clock_mode")};
  std::vector<ClockId> ids;
  for (ClockId id = -1; id <= kMaxClocks; ++id) ids.push_back(id);
  for (ClockId id : {23, 24, INT_MAX, INT_MIN}) ids.push_back(id);

  Rng rng(seed);
  std::map<std::string, uint64_t> regimes;
  uint64_t cases = 0, calls = 0, from_page = 0, order_differs = 0;
  int failures = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int p = 0; p < pages && failures < 10; ++p) {
    const timekeeper::Clocksource cs = GenClocksource(rng);
    static constexpr int kHz[] = {100, 250, 300, 1000};
    PublishBed bed(builtin, cs, {}, kHz[rng.Below(4)]);
    bed.tk().Init(GenCounterStart(rng) & cs.mask,
                  Timespec64{static_cast<int64_t>(rng.InRange(0, 1ull << 34)),
                             static_cast<int64_t>(rng.InRange(0, 999999999))},
                  Timespec64{static_cast<int64_t>(rng.InRange(0, 100000)),
                             static_cast<int64_t>(rng.InRange(0, 999999999))});
    const uint64_t ci = bed.state().cycle_interval;
    uint64_t now = bed.state().tkr_mono.cycle_last;
    const int steps = static_cast<int>(rng.Below(41));
    for (int i = 0; i < steps; ++i) {
      now = (now + GenTickGap(rng, ci, cs.max_cycles)) & cs.mask;
      if (rng.Below(10) == 0) {
        timekeeper::Timex txc;
        txc.modes = rng.Below(2) == 0 ? timekeeper::kAdjFrequency
                                      : timekeeper::kAdjTick;
        txc.freq =
            static_cast<int64_t>(rng.InRange(0, 1000ull << 16)) - (500ll << 16);
        txc.tick = static_cast<int64_t>(rng.InRange(9000, 11000));
        ASSERT_TRUE(bed.tk().Adjtimex(txc, now).ok());
      } else {
        bed.tk().Advance(timekeeper::AdvanceMode::kTick, now);
      }
    }
    int32_t mode = static_cast<int32_t>(bed.page().Load(mode_offsets[0], 4));
    if (rng.Below(10) == 0) {
      static constexpr int32_t kModes[] = {0, 2, 3, 7, -1};
      mode = kModes[rng.Below(5)];
      for (uint32_t off : mode_offsets) {
        bed.page().Store(off, 4, static_cast<uint32_t>(mode));
      }
    }
    const uint64_t cycle_last = bed.state().tkr_mono.cycle_last;
    for (int c = 0; c < kCountersPerPage; ++c) {
      uint64_t counter = cycle_last + GenProbeDelta(rng, ci, cs.max_cycles);
      // 6.10+'s __iter_div_u64_rem() subtracts NSEC_PER_SEC once per
      // second of the delta: far deltas are drawn up to 16 max_cycles.
      const uint64_t d = (counter & kS64Max) - cycle_last;
      if (masked63 && d > 16 * cs.max_cycles && (d & (1ull << 62)) == 0) {
        counter = cycle_last + cs.max_cycles + rng.Below(15 * cs.max_cycles);
      }
      ++cases;
      ++regimes[Regime(masked63, mode, counter, cycle_last, cs.max_cycles)];
      for (ClockId id : ids) {
        FixedCounterHooks th = bed.NewHooks(counter);
        FixedCounterHooks bh = bed.NewHooks(counter);
        th.retry_budget = bh.retry_budget = 0;
        vdso::HookedAccess ta(bed.page().data(), &th);
        vdso::HookedAccess ba(bed.page().data(), &bh);
        const std::optional<ClockResult> got =
            host_reader->Call(ta, bed.page().data(), id);
        const std::optional<ClockResult> want =
            builtin_reader->Call(ba, bed.page().data(), id);
        ++calls;
        if (bh.fallbacks().empty()) ++from_page;
        if (th.load_offsets() != bh.load_offsets()) ++order_differs;
        const bool same = got == want && th.fallbacks() == bh.fallbacks() &&
                          th.counter_reads() == bh.counter_reads();
        if (!same && ++failures <= 10) {
          ADD_FAILURE() << "page " << p << " counter " << std::hex << counter
                        << " cycle_last " << cycle_last << std::dec << " mode "
                        << mode << " clock " << id << ": host " << Describe(got)
                        << " (" << th.fallbacks().size() << " fallbacks, "
                        << th.counter_reads().size()
                        << " counter reads), built-in " << Describe(want)
                        << " (" << bh.fallbacks().size() << " fallbacks, "
                        << bh.counter_reads().size() << " counter reads)";
        }
      }
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf(
      "host (Linux %s) vs built-in %s: %llu cases (pages x counters), %llu "
      "calls compared (%llu answered from the page), all equal unless "
      "reported above; %.1f s, %.0f host calls/s\n",
      info->version.c_str(), info->era.c_str(),
      static_cast<unsigned long long>(cases),
      static_cast<unsigned long long>(calls),
      static_cast<unsigned long long>(from_page), secs,
      static_cast<double>(calls) / secs);
  for (const auto& [regime, n] : regimes) {
    std::printf("  %7llu  %s\n", static_cast<unsigned long long>(n),
                regime.c_str());
    EXPECT_GE(n, static_cast<uint64_t>(pages) / 5) << regime;
  }
  std::printf(
      "  calls whose page loads differ from the built-in reader's: "
      "%llu\n",
      static_cast<unsigned long long>(order_differs));
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(regimes.size(), masked63 ? 4u : 5u);
}

TEST(HostAgreement, RunningVdsoMatchesTheBuiltInReaderOfItsLayout) {
  VDSOLAB_HOST_VARIANT_OR_SKIP(host);
  Agree(host, kPages);
}

// Images from kernel builds (vdso64.so or vdso64.so.dbg): those named in
// VDSOLAB_VDSO_IMAGES (colon-separated), else those Debian's
// linux-image-*-dbg packages install. Their alternatives are not applied
// (the original rdtsc runs as the ordered read the kernel patches in).
TEST(HostAgreement, KernelBuildImagesMatchTheBuiltInReaderOfTheirEra) {
  std::vector<std::string> images;
  if (const char* env = std::getenv("VDSOLAB_VDSO_IMAGES")) {
    std::string list = env;
    for (size_t at = 0; at <= list.size();) {
      const size_t end = std::min(list.find(':', at), list.size());
      if (end > at) images.push_back(list.substr(at, end - at));
      at = end + 1;
    }
  } else {
    glob_t g;
    if (glob("/usr/lib/debug/lib/modules/*/vdso/vdso64.so", 0, nullptr, &g) ==
        0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) images.push_back(g.gl_pathv[i]);
    }
    globfree(&g);
  }
  if (images.empty()) {
    GTEST_SKIP() << "no kernel build's vdso64.so here: set "
                    "VDSOLAB_VDSO_IMAGES=a.so:b.so, or install a "
                    "linux-image-*-dbg package (docs/host-variant.md)";
  }
  for (const std::string& path : images) {
    SCOPED_TRACE(path);
    absl::StatusOr<const variants::Variant*> v = LoadHostVariant(path);
    ASSERT_TRUE(v.ok()) << v.status();
    std::printf("%s: %s\n", path.c_str(), std::string((*v)->name).c_str());
    Agree(*v, 300);
  }
}

// kvm-clock: the image's own vread_pvclock() reads the simulated pvclock
// page through the hooks (its loads fault like any other). Its answer must
// be the built-in reader's in TSC mode at the counter
// __pvclock_read_cycles() makes of the TSC (masked to 63 bits, as 6.5+
// masks every counter).
TEST(HostAgreement, KvmClockThroughTheImagesOwnVreadPvclock) {
  VDSOLAB_HOST_VARIANT_OR_SKIP(host);
  const variants::Variant& builtin =
      **variants::FindVariant(FindHostImageInfo(host)->era);
  std::unique_ptr<variants::SimReader> host_reader = host->make_sim_reader();
  std::unique_ptr<variants::SimReader> builtin_reader =
      builtin.make_sim_reader();
  const uint32_t modes[] = {FieldOffset(builtin, "clock_data[0].clock_mode"),
                            FieldOffset(builtin, "clock_data[1].clock_mode")};
  Rng rng(Seed() ^ 0x6b766dull);
  int compared = 0, from_pvclock = 0;
  for (int p = 0; p < 300; ++p) {
    PublishBed bed(builtin, vdsolab::testing::Tsc(2600000));
    bed.tk().Init(rng.InRange(0, 1ull << 44), Timespec64{1700000000, 0},
                  Timespec64{10, 0});
    bed.tk().Advance(
        timekeeper::AdvanceMode::kTick,
        bed.state().tkr_mono.cycle_last + bed.state().cycle_interval);
    // A stable pvclock page whose clock runs near the timekeeper's.
    const uint32_t pv = vdso::kPvclockPageOffset;
    const uint64_t tsc_ts = rng.InRange(0, 1ull << 44);
    const uint64_t cycle_last = bed.state().tkr_mono.cycle_last;
    const uint64_t system_time =
        cycle_last + rng.InRange(0, 1ull << 30) - (1ull << 29);
    const uint32_t mul = static_cast<uint32_t>(rng.InRange(1u << 30, ~0u));
    const int8_t shift = static_cast<int8_t>(rng.InRange(0, 3)) - 1;
    bed.page().Store(pv + vdso::kPvtiVersion, 4, 2 * rng.Below(1000));
    bed.page().Store(pv + vdso::kPvtiTscTimestamp, 8, tsc_ts);
    bed.page().Store(pv + vdso::kPvtiSystemTime, 8, system_time);
    bed.page().Store(pv + vdso::kPvtiMul, 4, mul);
    bed.page().Store(pv + vdso::kPvtiShift, 1, static_cast<uint8_t>(shift));
    bed.page().Store(pv + vdso::kPvtiFlags, 1, vdso::kPvclockTscStableBit);
    for (int c = 0; c < 3; ++c) {
      const uint64_t tsc = tsc_ts + rng.InRange(0, 1ull << 34);
      const uint64_t cycles =
          (system_time + vdso::upstream::upstream_internal::PvclockScaleDelta(
                             tsc - tsc_ts, mul, shift)) &
          kS64Max;
      for (ClockId id : {kClockRealtime, kClockMonotonic, kClockBoottime,
                         kClockTai, kClockMonotonicRaw}) {
        for (uint32_t off : modes) bed.page().Store(off, 4, 2);  // PVCLOCK
        FixedCounterHooks th = bed.NewHooks(tsc);
        vdso::HookedAccess ta(bed.page().data(), &th);
        const std::optional<ClockResult> got =
            host_reader->Call(ta, bed.page().data(), id);
        for (uint32_t off : modes) bed.page().Store(off, 4, 1);  // TSC
        FixedCounterHooks bh = bed.NewHooks(cycles);
        vdso::HookedAccess ba(bed.page().data(), &bh);
        const std::optional<ClockResult> want =
            builtin_reader->Call(ba, bed.page().data(), id);
        ASSERT_TRUE(got.has_value());
        EXPECT_EQ(*got, *want) << "clock " << id << " tsc " << tsc << ": host "
                               << Describe(got) << ", want " << Describe(want);
        EXPECT_EQ(th.fallbacks(), bh.fallbacks());
        ++compared;
        if (th.fallbacks().empty()) ++from_pvclock;
        bool loaded_pvti = false;
        for (uint32_t o : th.load_offsets()) {
          loaded_pvti |= o >= pv && o < pv + 32;
        }
        EXPECT_TRUE(loaded_pvti) << "the pvclock page was read through the "
                                    "hooks";
      }
    }
  }
  std::printf(
      "host on kvm-clock: %d calls compared, %d answered from the "
      "pvclock page\n",
      compared, from_pvclock);
  EXPECT_GT(from_pvclock, compared / 2);
}

}  // namespace
}  // namespace vdsolab::hostvdso
