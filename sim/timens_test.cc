// Readers in a time namespace on the simulation: the upstream reader passes
// against the oracle plus the offsets, a reader that drops the offsets is
// caught, a variant without the TIMENS path is refused, and the scenario
// keys keep proc_timens_set_offset()'s domain.

#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "sim/engine.h"
#include "sim/exhaustive.h"
#include "sim/scenario.h"
#include "sim/scenario_toml.h"
#include "variants/registry.h"
#include "variants/upstream.h"
#include "vdso/datapage.h"
#include "vdso/upstream_reader.h"

namespace vdsolab::sim {
namespace {

Scenario InNamespace() {
  Scenario s;
  s.run.duration_ns = 200000000;  // 0.2 s.
  s.kernel.boot_offset = {50, 0};
  s.kernel.timens_monotonic = {-49, 250000000};  // MONOTONIC 1.25 s at boot
  s.kernel.timens_boottime = {3600, 999999999};
  s.readers = {ReaderSpec{}, ReaderSpec{}};
  s.readers[0].clocks = {kClockMonotonic,       kClockBoottime,
                         kClockMonotonicRaw,    kClockRealtime,
                         kClockMonotonicCoarse, kClockTai};
  s.readers[0].timens = true;
  s.readers[1].clocks = {kClockMonotonic, kClockBoottime};
  s.readers[1].period_ns = 7000;
  s.events.push_back(EventSpec{});
  s.events.back().kind = EventKind::kAdjtimexFrequency;
  s.events.back().at_ns = 50000000;
  s.events.back().freq_scaled_ppm = 300ll << 16;
  return s;
}

TEST(Timens, UpstreamReaderAnswersTheSyscallPlusTheOffsets) {
  auto r = RunRandom(InNamespace(), variants::UpstreamVariant());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->failed);
  EXPECT_TRUE(r->violations.empty());
  EXPECT_GT(r->coverage.timens_calls, 1000u);
  EXPECT_LT(r->coverage.timens_calls, r->coverage.calls);
  EXPECT_GT(r->stats[static_cast<int>(Property::kExact) - 1].checked, 1000u);
  EXPECT_GT(r->stats[static_cast<int>(Property::kCausal) - 1].checked, 1000u);
}

// A reader that goes straight to the time page behind the namespace's and
// so never adds the offsets (outside a namespace, page 1 is the namespace
// slot the kernel does not map: the initial namespace's reader reads its
// own page).
std::optional<ClockResult> SkipsTheNamespacePage(vdso::HookedAccess& access,
                                                 const uint8_t* page,
                                                 ClockId clock) {
  const bool in_namespace = page == access.timens_view();
  return vdso::upstream::ClockGettime(
      access, in_namespace ? page + vdso::kPageSize : page, clock);
}

// A reader without lib/vdso's namespace path: it waits for an even seq,
// as for a writer, which the namespace page never gives (a plugin written
// from the do_hres() excerpt of docs/plugins.md).
std::optional<ClockResult> WaitsForAnEvenSeq(vdso::HookedAccess& access,
                                             const uint8_t* page,
                                             ClockId clock) {
  while (access.Load<uint32_t>(page + vdso::kVcSeq) & 1) {
    if (!access.MayRetry()) return std::nullopt;
  }
  return vdso::upstream::ClockGettime(access, page, clock);
}

// Its livelock says where it spun: the message was only "abandoned after
// 10001 loop iterations".
TEST(Timens, ALivelockOnTheNamespacePageSaysSo) {
  variants::Variant broken = variants::UpstreamVariant();
  broken.make_sim_reader = variants::MakeStateless<WaitsForAnEvenSeq>;
  auto r = RunRandom(InNamespace(), broken);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->failed);
  int livelocks = 0;
  for (const Violation& v : r->violations) {
    if (v.property != Property::kLivelock) continue;
    ++livelocks;
    EXPECT_EQ(v.reader, 0) << v.detail;  // The namespace's reader.
    EXPECT_TRUE(absl::StrContains(v.detail, "in a time namespace"))
        << v.detail;
  }
  EXPECT_GT(livelocks, 0);
}

TEST(Timens, AReaderThatDropsTheOffsetsIsCaught) {
  variants::Variant broken = variants::UpstreamVariant();
  broken.make_sim_reader = variants::MakeStateless<SkipsTheNamespacePage>;
  auto r = RunRandom(InNamespace(), broken);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->failed);
  EXPECT_GT(r->stats[static_cast<int>(Property::kExact) - 1].defects, 0u);
  bool monotonic_named = false;
  for (const Violation& v : r->violations) {
    if (v.property == Property::kExact &&
        absl::StrContains(v.detail, "MONOTONIC")) {
      monotonic_named = true;
    }
  }
  EXPECT_TRUE(monotonic_named);
  // Each violation kept at a namespace call says its times are moved off
  // the namespace's timeline, and what the reader returned there; one at
  // the initial namespace's reader does not.
  int noted = 0;
  for (const Violation& v : r->violations) {
    const bool note = absl::StrContains(
        v.detail, "in the time namespace the reader returned");
    EXPECT_EQ(note, v.reader == 0) << v.detail;
    noted += note ? 1 : 0;
  }
  EXPECT_GT(noted, 0);
}

// A namespace reader whose answer is not a normalised timespec (tv_nsec
// one second past its range): the checker leaves it unshifted and the
// sane property reports it, rather than unshifting it again and again.
std::optional<ClockResult> UnnormalisedInTheNamespace(
    vdso::HookedAccess& access, const uint8_t* page, ClockId clock) {
  std::optional<ClockResult> r =
      vdso::upstream::ClockGettime(access, page, clock);
  if (r && r->ret == 0 && clock == kClockMonotonic) {
    r->ts.tv_nsec += 1000000000;
  }
  return r;
}

TEST(Timens, AnUnnormalisedAnswerInTheNamespaceIsReported) {
  variants::Variant broken = variants::UpstreamVariant();
  broken.make_sim_reader = variants::MakeStateless<UnnormalisedInTheNamespace>;
  Scenario s = InNamespace();
  s.run.duration_ns = 20000000;
  s.events.clear();
  auto r = RunRandom(s, broken);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->failed);
  EXPECT_GT(r->stats[static_cast<int>(Property::kSane) - 1].defects, 0u);
}

// The right instant in an unnormalised timespec (a second moved from
// tv_sec into tv_nsec): property 4 reports it, and the properties that
// compare instants judge the instant, as outside a namespace. Left on the
// namespace's timeline, the answer made causality (against the initial
// namespace's reader) and cross-clock defects of a correct instant.
std::optional<ClockResult> CarriesASecondInTheNamespace(
    vdso::HookedAccess& access, const uint8_t* page, ClockId clock) {
  std::optional<ClockResult> r =
      vdso::upstream::ClockGettime(access, page, clock);
  if (r && r->ret == 0 && clock == kClockMonotonic &&
      page == access.timens_view()) {
    r->ts.tv_sec -= 1;
    r->ts.tv_nsec += 1000000000;
  }
  return r;
}

TEST(Timens, AnUnnormalisedRightInstantIsOnlyUnnormalised) {
  variants::Variant broken = variants::UpstreamVariant();
  broken.make_sim_reader =
      variants::MakeStateless<CarriesASecondInTheNamespace>;
  Scenario s = InNamespace();
  s.run.duration_ns = 80000000;  // Past the frequency change at 50 ms.
  auto r = RunRandom(s, broken);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto stats = [&](Property p) { return r->stats[static_cast<int>(p) - 1]; };
  EXPECT_GT(stats(Property::kSane).defects, 0u);
  EXPECT_GT(stats(Property::kCausal).checked, 1000u);
  EXPECT_EQ(stats(Property::kCausal).defects, 0u);
  EXPECT_GT(stats(Property::kCrossClock).checked, 1000u);
  EXPECT_EQ(stats(Property::kCrossClock).defects, 0u);
  EXPECT_EQ(stats(Property::kMonotonic).defects, 0u);
  EXPECT_EQ(stats(Property::kTorn).defects, 0u);
}

TEST(Timens, AVariantWithoutTheTimensPathIsRefusedNotMisjudged) {
  absl::StatusOr<const variants::Variant*> era = variants::FindVariant("6.1");
  ASSERT_TRUE(era.ok());
  ASSERT_FALSE((*era)->timens);
  auto r = RunRandom(InNamespace(), **era);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(),
                                "does not model time namespaces"));
  // Without namespace readers the same variant runs as before.
  Scenario plain = InNamespace();
  plain.readers[0].timens = false;
  EXPECT_TRUE(RunRandom(plain, **era).ok());
}

TEST(Timens, OffsetsOutsideTheKernelsDomainAreBadInput) {
  Scenario s = InNamespace();
  s.kernel.timens_boottime = {0, 1000000000};
  absl::Status st = ValidateScenario(s);
  EXPECT_TRUE(absl::StrContains(st.message(), "timens_boottime")) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "-EINVAL")) << st;
  s = InNamespace();
  s.kernel.timens_monotonic = {-51, 0};  // MONOTONIC -1 s at boot
  st = ValidateScenario(s);
  EXPECT_TRUE(absl::StrContains(st.message(), "-ERANGE")) << st;
}

// The exhaustive strategy runs a namespace reader through the namespace's
// view too: every interleaving of one call with the pending updates, the
// namespace's page written before; the upstream reader passes all of
// them, a reader that never adds the offsets fails.
TEST(Timens, ExhaustiveExploresANamespaceReader) {
  Scenario s;
  s.run.strategy = Strategy::kExhaustive;
  s.kernel.boot_offset = {50, 0};
  s.kernel.timens_monotonic = {-49, 250000000};
  s.readers[0].clocks = {kClockMonotonic};
  s.readers[0].timens = true;
  absl::StatusOr<ExploreResult> ok = Explore(s, variants::UpstreamVariant());
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->complete);
  EXPECT_GT(ok->interleavings, 10u);
  EXPECT_EQ(ok->failing, 0u);
  variants::Variant broken = variants::UpstreamVariant();
  broken.make_sim_reader = variants::MakeStateless<SkipsTheNamespacePage>;
  absl::StatusOr<ExploreResult> bad = Explore(s, broken);
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_EQ(bad->failing, bad->interleavings);
  // A variant without the namespace path is refused here too.
  absl::StatusOr<const variants::Variant*> era = variants::FindVariant("6.1");
  ASSERT_TRUE(era.ok());
  EXPECT_FALSE(Explore(s, **era).ok());
}

TEST(Timens, KeysRoundTripAndStayOutOfOtherScenarios) {
  const Scenario s = InNamespace();
  const std::string text = ScenarioToToml(s);
  EXPECT_TRUE(absl::StrContains(text, "timens = true")) << text;
  absl::StatusOr<Scenario> back = ParseScenario(text, "round-trip");
  ASSERT_TRUE(back.ok()) << back.status();
  // The file spells each reader's id out (-1: its index).
  Scenario want = s;
  want.readers[0].id = 0;
  want.readers[1].id = 1;
  EXPECT_TRUE(*back == want) << text;
  Scenario plain;
  plain.readers = {ReaderSpec{}};
  EXPECT_FALSE(absl::StrContains(ScenarioToToml(plain), "timens"));
}

}  // namespace
}  // namespace vdsolab::sim
