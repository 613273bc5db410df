#include "host/conform.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "host/conform_messages.h"
#include "host/conform_sandbox.h"
#include "host/inspect.h"
#include "host/live_vvar.h"
#include "host/vdso_elf.h"
#include "vdso/datapage.h"

namespace vdsolab::host {
namespace {

TEST(ParseVdsoMappings, FindsTheThreeRegions) {
  const std::string maps =
      "7f27233f9000-7f27233fd000 r--p 00000000 00:00 0      [vvar]\n"
      "7f27233fd000-7f27233ff000 r--p 00000000 00:00 0      [vvar_vclock]\n"
      "7f27233ff000-7f2723401000 r-xp 00000000 00:00 0      [vdso]\n"
      "7ffd0000-7ffd1000 rw-p 00000000 00:00 0              [stack]\n";
  VdsoMappings m = ParseVdsoMappings(maps);
  ASSERT_TRUE(m.vvar && m.vvar_vclock && m.vdso);
  EXPECT_EQ(m.vvar->start, 0x7f27233f9000u);
  EXPECT_EQ(m.vvar_vclock->start - m.vvar->start, vdso::kPvclockPageOffset);
  EXPECT_EQ(m.vdso->end, 0x7f2723401000u);
  EXPECT_FALSE(ParseVdsoMappings("00400000-00401000 r-xp 0 0 0 /bin/x\n").vvar);
}

LiveSnapshot GoodTscSnapshot() {
  LiveSnapshot s;
  s.time_page.assign(vdso::kPageSize, 0);
  auto put32 = [&](uint32_t off, uint32_t v) {
    std::memcpy(s.time_page.data() + off, &v, 4);
  };
  auto put64 = [&](uint32_t off, uint64_t v) {
    std::memcpy(s.time_page.data() + off, &v, 8);
  };
  for (int cs : {vdso::kCsHresCoarse, vdso::kCsRaw}) {
    const uint32_t vc = vdso::ClockDataOffset(cs);
    put32(vc + vdso::kVcSeq, 8);
    put32(vc + vdso::kVcClockMode, 1);  // TSC
    put64(vc + vdso::kVcCycleLast, 906944898113);
    put64(vc + vdso::kVcMaxCycles, 2571610966296);  // From the live doc.
    put64(vc + vdso::kVcMask, ~0ull);
    put32(vc + vdso::kVcMult, 6462365);
    put32(vc + vdso::kVcShift, 24);
  }
  return s;
}

TEST(CheckLayout, AcceptsThe618PageOfTheLiveVvarDoc) {
  const KernelVersion k{6, 18, "6.18.0"};
  EXPECT_TRUE(CheckLayout(GoodTscSnapshot(), k).ok())
      << CheckLayout(GoodTscSnapshot(), k);
}

TEST(CheckLayout, SaysPlainlyWhatDoesNotFit) {
  const KernelVersion k{6, 18, "6.18.0"};
  LiveSnapshot old = GoodTscSnapshot();
  EXPECT_NE(CheckLayout(old, {6, 1, "6.1.0"}).message().find("predates"),
            std::string::npos);
  LiveSnapshot none = GoodTscSnapshot();
  for (int cs : {0, 1}) none.time_page[vdso::ClockDataOffset(cs) + 4] = 0;
  EXPECT_NE(CheckLayout(none, k).message().find("clock mode NONE"),
            std::string::npos);
  LiveSnapshot torn = GoodTscSnapshot();
  torn.time_page[vdso::ClockDataOffset(1)] = 9;  // Odd, and unequal.
  EXPECT_NE(CheckLayout(torn, k).message().find("seqs"), std::string::npos);
  LiveSnapshot shifted = GoodTscSnapshot();
  shifted.time_page[vdso::kVcMaxCycles] ^= 1;  // Wrong offsets look like this.
  EXPECT_NE(CheckLayout(shifted, k).message().find("max_cycles"),
            std::string::npos);
}

// Found by fuzz/page_fuzzer under UBSan: a garbled shift made the decoder
// shift a 128-bit value by more than its width.
TEST(DescribeSnapshot, AGarbledShiftIsShownNotUndefined) {
  LiveSnapshot s = GoodTscSnapshot();
  const uint32_t shift = 1381653;
  std::memcpy(s.time_page.data() + vdso::ClockDataOffset(0) + vdso::kVcShift,
              &shift, 4);
  const std::string text = DescribeSnapshotText(s, {6, 18, "6.18.0"});
  EXPECT_NE(text.find("shift 1381653 is out of range"), std::string::npos)
      << text;
  EXPECT_NE(DescribeSnapshotJson(s, {6, 18, "6.18.0"}).find("1381653"),
            std::string::npos);
}

// Sets one snapshot's seq, cycle_last (both records) and RAW/MONOTONIC
// shifted nsec, for a 1 GHz counter with mult 2^23, shift 23.
LiveSnapshot PageAt(uint32_t seq, uint64_t cycles_since_boot) {
  LiveSnapshot s = GoodTscSnapshot();
  const uint64_t last = 1000000000 + cycles_since_boot;
  const uint32_t mult = 1u << 23, shift = 23;
  for (int cs : {0, 1}) {
    const uint32_t vc = vdso::ClockDataOffset(cs);
    std::memcpy(s.time_page.data() + vc + vdso::kVcSeq, &seq, 4);
    std::memcpy(s.time_page.data() + vc + vdso::kVcCycleLast, &last, 8);
    std::memcpy(s.time_page.data() + vc + vdso::kVcMult, &mult, 4);
    std::memcpy(s.time_page.data() + vc + vdso::kVcShift, &shift, 4);
  }
  // Seconds stay 0: the shifted nsec carries the whole time (< 2^41 ns).
  const uint64_t nsec = cycles_since_boot << 23;
  std::memcpy(s.time_page.data() + vdso::ClockDataOffset(1) +
                  vdso::VcBasetimeNsec(kClockMonotonicRaw),
              &nsec, 8);
  std::memcpy(s.time_page.data() + vdso::VcBasetimeNsec(kClockMonotonic), &nsec,
              8);
  return s;
}

TEST(AnalyzeUpdates, InfersTheIntervalAndChecksTheIncrements) {
  // Three updates of a 1 GHz counter (mult 2^23, shift 23) at HZ=250:
  // RAW and MONOTONIC advance 4 ms per update, in shifted ns.
  std::vector<LiveSnapshot> samples;
  for (uint32_t i = 0; i < 3; ++i) {
    samples.push_back(PageAt(2 + 2 * i, 4000000ull * i));
  }
  const UpdateAnalysis a = AnalyzeUpdates(samples, 0);
  EXPECT_EQ(a.updates_seen, 2);
  EXPECT_EQ(a.hz, 250);
  EXPECT_EQ(a.predicted_cycle_interval, 4000000u);
  EXPECT_EQ(a.steps_whole_intervals, 2);
  EXPECT_EQ(a.raw_increments_exact, 2);
  EXPECT_EQ(a.mono_increments_exact, 2);

  // One shifted ns too many in the last RAW basetime: one increment is off.
  std::vector<LiveSnapshot> off = samples;
  uint8_t* raw_nsec = off[2].time_page.data() + vdso::ClockDataOffset(1) +
                      vdso::VcBasetimeNsec(kClockMonotonicRaw);
  uint64_t nsec = 0;
  std::memcpy(&nsec, raw_nsec, 8);
  ++nsec;
  std::memcpy(raw_nsec, &nsec, 8);
  EXPECT_EQ(AnalyzeUpdates(off, 250).raw_increments_exact, 1);
  EXPECT_EQ(AnalyzeUpdates(off, 250).mono_increments_exact, 2);

  // A step of one and a half intervals: not a whole cycle_interval.
  std::vector<LiveSnapshot> odd = samples;
  const uint64_t last = 1000000000 + 6000000;
  for (int cs : {0, 1}) {
    std::memcpy(odd[1].time_page.data() + vdso::ClockDataOffset(cs) +
                    vdso::kVcCycleLast,
                &last, 8);
  }
  EXPECT_LT(AnalyzeUpdates(odd, 250).steps_whole_intervals, 2);
  EXPECT_FALSE(PredictionHolds(AnalyzeUpdates(odd, 250)));
  EXPECT_TRUE(PredictionHolds(a));
}

TEST(AnalyzeUpdates, ToleratesARareForwardNowButNotAWrongInterval) {
  // Ticks every 4 ms, and once an adjtimex(ADJ_SETOFFSET)'s forward_now()
  // 1.5 ms after one: cycle_last lands off the tick grid, RAW advances
  // exactly step * mult. The next tick accumulates whole intervals from
  // there (on a live 6.18 host two such calls gave exactly two off-tick
  // updates, each with RAW exact).
  std::vector<LiveSnapshot> samples;
  const uint64_t at[] = {0, 4000000, 8000000, 9500000, 13500000, 17500000};
  for (uint32_t i = 0; i < 6; ++i) samples.push_back(PageAt(2 + 2 * i, at[i]));
  const UpdateAnalysis a = AnalyzeUpdates(samples, 250);
  EXPECT_EQ(a.updates_seen, 5);
  EXPECT_EQ(a.steps_whole_intervals, 4);
  EXPECT_EQ(a.off_tick_updates, 1);
  EXPECT_EQ(a.off_tick_raw_exact, 1);
  EXPECT_TRUE(PredictionHolds(a)) << FormatUpdateAnalysis(a);
  EXPECT_NE(FormatUpdateAnalysis(a).find("prediction: holds"),
            std::string::npos);

  // forward_now() that lost or gained a shifted ns of RAW: not the kernel's.
  std::vector<LiveSnapshot> lossy = samples;
  uint8_t* raw_nsec = lossy[3].time_page.data() + vdso::ClockDataOffset(1) +
                      vdso::VcBasetimeNsec(kClockMonotonicRaw);
  uint64_t nsec = 0;
  std::memcpy(&nsec, raw_nsec, 8);
  ++nsec;
  std::memcpy(raw_nsec, &nsec, 8);
  const UpdateAnalysis l = AnalyzeUpdates(lossy, 250);
  EXPECT_EQ(l.off_tick_raw_exact, 0);
  EXPECT_EQ(l.raw_increments_exact, 3);  // The tick after it is off by one.
  EXPECT_FALSE(PredictionHolds(l));
  EXPECT_NE(FormatUpdateAnalysis(l).find("DOES NOT HOLD"), std::string::npos);

  // At HZ=100 the predicted interval is 10 ms: no step is on its grid, so
  // the prediction is wrong, not the host.
  const UpdateAnalysis wrong = AnalyzeUpdates(samples, 100);
  EXPECT_EQ(wrong.steps_whole_intervals, 0);
  EXPECT_FALSE(PredictionHolds(wrong));

  // An update that did not move cycle_last (a TAI change) is off-tick too.
  std::vector<LiveSnapshot> still = samples;
  still.push_back(PageAt(14, 17500000));
  const UpdateAnalysis t = AnalyzeUpdates(still, 250);
  EXPECT_EQ(t.off_tick_updates, 2);
  EXPECT_TRUE(PredictionHolds(t));
}

TEST(FindVdsoSymbol, FindsClockGettime) {
  absl::StatusOr<VdsoMappings> maps = FindVdsoMappings();
  if (!maps.ok() || !maps->vdso) {
    GTEST_SKIP() << "no vDSO here: " << maps.status();
  }
  const uint64_t size = maps->vdso->end - maps->vdso->start;
  absl::StatusOr<VdsoSymbol> fn = FindVdsoSymbol("__vdso_clock_gettime", size);
  ASSERT_TRUE(fn.ok()) << fn.status();
  EXPECT_GE(fn->address, maps->vdso->start);
  EXPECT_LT(fn->address, maps->vdso->end);
  EXPECT_GT(fn->size, 0u);
  EXPECT_FALSE(FindVdsoSymbol("__vdso_no_such_thing", size).ok());
}

// The acceptance test: a short conformance pass on this machine.
TEST(RunInChild, ReturnsWhatTheChildWroteAndHowItEnded) {
  absl::StatusOr<ChildOutcome> done =
      RunInChild([](int fd) { return write(fd, "hi", 2) == 2 ? 3 : 4; }, 10);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->output, "hi");
  EXPECT_TRUE(done->exited);
  EXPECT_EQ(done->exit_code, 3);
  EXPECT_EQ(done->signal, 0);

  absl::StatusOr<ChildOutcome> hung = RunInChild(
      [](int) {
        pause();  // Until the alarm.
        return 0;
      },
      1);
  ASSERT_TRUE(hung.ok()) << hung.status();
  EXPECT_FALSE(hung->exited);
  EXPECT_EQ(hung->signal, SIGALRM);
}

// The child's typed records, through a pipe, into the parent's report.
TEST(ConformMessages, TravelThroughAPipeIntoTheReport) {
  using conform_internal::CellMessage;
  using conform_internal::MessageKind;
  absl::StatusOr<ChildOutcome> child = RunInChild(
      [](int fd) {
        conform_internal::MessageWriter out(fd);
        out.Text(MessageKind::kKernel, "6.18.0-test");
        out.Text(MessageKind::kClockMode, "PVCLOCK");
        out.Count(MessageKind::kPatchedSites, 5);
        UpdateAnalysis a;
        a.updates_seen = 17;
        a.hz = 250;
        a.raw_mult = 6860657;
        out.Analysis(a);
        out.Cell(MessageKind::kCell, CellMessage{1, 2, 100, 3});
        out.Cell(MessageKind::kCell, CellMessage{4, 0, 50, 0});
        out.Cell(MessageKind::kSyntheticCell, CellMessage{1, 6, 7, 1});
        out.Count(MessageKind::kPageRaces, 9);
        out.Count(MessageKind::kCounterTraps, 123);
        out.Text(MessageKind::kMismatch, "two\nlines");
        return 0;
      },
      10);
  ASSERT_TRUE(child.ok()) << child.status();
  ConformReport r;
  ASSERT_TRUE(conform_internal::ReadMessages(child->output, &r).ok());
  EXPECT_EQ(r.kernel, "6.18.0-test");
  EXPECT_EQ(r.clock_mode, "PVCLOCK");
  EXPECT_EQ(r.patched_sites, 5);
  EXPECT_EQ(r.analysis.updates_seen, 17);
  EXPECT_EQ(r.analysis.hz, 250);
  EXPECT_EQ(r.analysis.raw_mult, 6860657u);
  EXPECT_EQ(r.cells.size(), 2u);
  EXPECT_EQ(r.cells[std::make_pair(1, 2)].mismatches, 3u);
  EXPECT_EQ(r.compared, 150u);
  EXPECT_EQ(r.mismatches, 3u);
  EXPECT_EQ(r.synthetic_compared, 7u);
  EXPECT_EQ(r.synthetic_mismatches, 1u);
  EXPECT_EQ(r.page_races, 9u);
  EXPECT_EQ(r.counter_traps, 123u);
  EXPECT_EQ(r.mismatch_details, std::vector<std::string>{"two\nlines"});
  EXPECT_TRUE(r.skip_reason.empty());

  // An error record is the result; a record cut short is not read.
  std::string bytes;
  {
    absl::StatusOr<ChildOutcome> failed = RunInChild(
        [](int fd) {
          conform_internal::MessageWriter out(fd);
          out.Text(MessageKind::kSkip, "no vDSO here");
          out.Text(MessageKind::kError, "mmap failed");
          return 1;
        },
        10);
    ASSERT_TRUE(failed.ok());
    bytes = failed->output;
  }
  ConformReport e;
  const absl::Status s = conform_internal::ReadMessages(bytes, &e);
  EXPECT_EQ(s.message(), "mmap failed");
  EXPECT_EQ(e.skip_reason, "no vDSO here");
  ConformReport cut;
  EXPECT_TRUE(conform_internal::ReadMessages(
                  child->output.substr(0, child->output.size() - 3), &cut)
                  .ok());
  EXPECT_TRUE(cut.mismatch_details.empty());
  EXPECT_EQ(cut.counter_traps, 123u);
}

TEST(Conform, HostVdsoAgreesBitForBit) {
  ConformOptions options;
  options.samples = 400;
  options.synthetic_samples = 200;
  options.analysis_samples = 60;
  absl::StatusOr<ConformReport> report = RunConform(options);
  ASSERT_TRUE(report.ok()) << report.status();
  if (!report->supported) {
    GTEST_SKIP() << "the host cannot run the conformance pass: "
                 << report->skip_reason;
  }
  std::printf("%s", FormatConformReport(*report).c_str());
  EXPECT_EQ(report->mismatches, 0u);
  EXPECT_EQ(report->synthetic_mismatches, 0u);
  EXPECT_EQ(report->compared, 400u * 7 * kNumRegimes);
  EXPECT_GT(report->synthetic_compared, 0u);
  EXPECT_GT(report->counter_traps, 0u);
  EXPECT_TRUE(report->prediction_holds);
}

}  // namespace
}  // namespace vdsolab::host
