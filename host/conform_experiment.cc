#include "host/conform_experiment.h"

#include <time.h>

#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/bytes.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/rng.h"
#include "host/conform_sandbox.h"
#include "host/counter_regimes.h"
#include "host/inspect.h"
#include "host/live_vvar.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/vsyscall.h"
#include "vdso/datapage.h"
#include "vdso/upstream_reader.h"
#include "vdso/vvar_page.h"

namespace vdsolab::host {
namespace {

using conform_internal::CellMessage;
using conform_internal::MessageKind;
using conform_internal::MessageWriter;

constexpr size_t kMaxDetails = 5;

// Compared and mismatched calls by clock and regime.
using Cells = uint64_t[kMaxClocks][kNumRegimes][2];

// A time page the timekeeper model publishes for a TSC: a random
// frequency, HZ, boot counter, a few ticks, NTP frequency and tick
// corrections.
absl::StatusOr<LiveSnapshot> SyntheticTscPage(Rng& rng) {
  static constexpr uint32_t kKhz[] = {2600000, 2095998, 3000000, 2596005,
                                      3699999, 1000000, 4294967};
  static constexpr int kHz[] = {100, 250, 300, 1000};
  absl::StatusOr<timekeeper::Clocksource> cs =
      timekeeper::MakeTscClocksource(kKhz[rng.Below(std::size(kKhz))]);
  if (!cs.ok()) return cs.status();
  absl::StatusOr<std::unique_ptr<vdso::VvarPage>> page =
      vdso::VvarPage::Create();
  if (!page.ok()) return page.status();
  timekeeper::VvarPublisher publisher(page->get(), 1);
  timekeeper::Timekeeping tk(*cs, kHz[rng.Below(std::size(kHz))], &publisher);
  uint64_t now = rng.InRange(0, 1ull << 44);
  tk.Init(now,
          {static_cast<int64_t>(rng.InRange(1000000000, 2000000000)),
           static_cast<int64_t>(rng.Below(1000000000))},
          {static_cast<int64_t>(rng.Below(100000)),
           static_cast<int64_t>(rng.Below(1000000000))});
  const uint64_t ci = tk.timekeeper().cycle_interval;
  const int steps = static_cast<int>(rng.InRange(1, 40));
  for (int i = 0; i < steps; ++i) {
    now += rng.InRange(ci / 2, 3 * ci);
    if (rng.Below(6) == 0) {
      timekeeper::Timex txc;
      txc.modes =
          rng.Below(2) == 0 ? timekeeper::kAdjFrequency : timekeeper::kAdjTick;
      txc.freq = static_cast<int64_t>(rng.Below(1000ull << 16)) - (500ll << 16);
      txc.tick = static_cast<int64_t>(rng.InRange(9000, 11000));
      if (!tk.Adjtimex(txc, now).ok()) {
        return absl::InternalError("adjtimex in the model failed");
      }
    } else {
      tk.Advance(timekeeper::AdvanceMode::kTick, now);
    }
  }
  LiveSnapshot snap;
  snap.time_page.assign((*page)->data(), (*page)->data() + vdso::kPageSize);
  return snap;
}

// Puts pages into the patched vDSO's area and compares the host code with
// vdsolab's reader on them.
class PageComparison {
 public:
  PageComparison(const PatchedVdso& vdso, const KernelVersion& kernel, Rng& rng,
                 MessageWriter& out)
      : vdso_(vdso), kernel_(kernel), rng_(rng), out_(out) {}

  // Every served clock in every counter regime on `snap`; `live` is the
  // counter for the live regime.
  void Compare(const LiveSnapshot& snap, uint64_t live, Cells& cells) {
    uint8_t* area = vdso_.area();
    std::memcpy(area, snap.time_page.data(), snap.time_page.size());
    LiveSnapshot fast;
    if (!snap.pvclock_page.empty()) fast = FastPvclockPage(snap, rng_);
    for (int r = 0; r < kNumRegimes; ++r) {
      const bool use_fast = r == static_cast<int>(Regime::kFarBehind) &&
                            !snap.pvclock_page.empty();
      const LiveSnapshot& page = use_fast ? fast : snap;
      if (!page.pvclock_page.empty()) {
        std::memcpy(area + vdso::kPvclockPageOffset, page.pvclock_page.data(),
                    page.pvclock_page.size());
      }
      const uint64_t tsc = ChooseTsc(static_cast<Regime>(r), page, live, rng_);
      if (TooFarAhead(page, tsc)) continue;
      for (ClockId clock : kVdsoServedClocks) {
        CompareClock(page, static_cast<Regime>(r), clock, tsc, cells[clock][r]);
      }
    }
  }

 private:
  void CompareClock(const LiveSnapshot& page, Regime regime, ClockId clock,
                    uint64_t tsc, uint64_t (&cell)[2]) {
    struct timespec ts = {};
    const int ret = vdso_.ClockGettime(clock, tsc, &ts);
    const ClockResult host_result =
        ret == 0 ? ClockResult::Ok({ts.tv_sec, ts.tv_nsec})
                 : ClockResult::Error(ret);
    FixedTscAccess access{tsc};
    const std::optional<ClockResult> ours =
        vdso::upstream::ClockGettime(access, vdso_.area(), clock);
    if (!ours || access.fell_back) return;  // Both went to the syscall.
    ++cell[0];
    if (*ours == host_result) return;
    ++cell[1];
    if (details_++ < kMaxDetails) {
      out_.Text(MessageKind::kMismatch,
                absl::StrFormat("%s, %s: tsc %#x (vDSO counter %#x): host vDSO "
                                "%s, vdsolab %s\n%s",
                                ClockName(clock), RegimeName(regime), tsc,
                                VdsoCounter(page, tsc),
                                FormatClockResult(host_result),
                                FormatClockResult(*ours),
                                DescribeSnapshotText(page, kernel_)));
    }
  }

  const PatchedVdso& vdso_;
  const KernelVersion& kernel_;
  Rng& rng_;
  MessageWriter& out_;
  size_t details_ = 0;
};

void SendCells(MessageWriter& out, MessageKind kind, const Cells& cells) {
  for (ClockId clock : kVdsoServedClocks) {
    for (int r = 0; r < kNumRegimes; ++r) {
      out.Cell(kind,
               CellMessage{clock, r, cells[clock][r][0], cells[clock][r][1]});
    }
  }
}

uint64_t LiveTsc() {
  unsigned int lo, hi;
  asm volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

}  // namespace

int RunConformExperiment(const ConformOptions& options, MessageWriter& out) {
  absl::StatusOr<VdsoMappings> maps = FindVdsoMappings();
  if (!maps.ok()) {
    out.Text(MessageKind::kSkip, maps.status().message());
    return 0;
  }
  const KernelVersion kernel = RunningKernel();
  out.Text(MessageKind::kKernel, kernel.release);
  absl::StatusOr<LiveSnapshot> first = TakeSnapshot(*maps);
  if (!first.ok()) {
    out.Text(MessageKind::kSkip, first.status().message());
    return 0;
  }
  if (absl::Status s = CheckLayout(*first, kernel); !s.ok()) {
    out.Text(MessageKind::kSkip, s.message());
    return 0;
  }
  out.Text(MessageKind::kClockMode,
           first->pvclock_page.empty() ? "TSC" : "PVCLOCK");
  absl::StatusOr<std::unique_ptr<PatchedVdso>> vdso =
      PatchedVdso::Create(*maps);
  if (!vdso.ok()) {
    const bool failed = absl::IsInternal(vdso.status());
    out.Text(failed ? MessageKind::kError : MessageKind::kSkip,
             vdso.status().message());
    return failed ? 1 : 0;
  }
  out.Count(MessageKind::kPatchedSites,
            static_cast<uint64_t>((*vdso)->patched_sites()));

  // What the updates between snapshots show (tk_setup_internals check).
  std::vector<LiveSnapshot> samples;
  for (int i = 0; i < options.analysis_samples; ++i) {
    absl::StatusOr<LiveSnapshot> s = TakeSnapshot(*maps);
    if (s.ok()) samples.push_back(*std::move(s));
    struct timespec pause = {0, 500000};
    nanosleep(&pause, nullptr);
  }
  out.Analysis(AnalyzeUpdates(samples, KernelHz()));

  Rng rng(options.seed);
  PageComparison comparison(**vdso, kernel, rng, out);

  // The live page: the kernel's own data, copied consistently.
  uint64_t races = 0;
  Cells live_cells = {};
  for (int done = 0; done < options.samples; ++done) {
    absl::StatusOr<LiveSnapshot> snap = TakeSnapshot(*maps);
    if (!snap.ok()) {
      out.Text(MessageKind::kError, snap.status().message());
      return 1;
    }
    races += snap->retries;
    comparison.Compare(*snap, LiveTsc(), live_cells);
  }
  SendCells(out, MessageKind::kCell, live_cells);

  // Synthetic TSC pages: the timekeeper model's own updates for TSCs of
  // several frequencies, HZ values and NTP corrections, in clock mode TSC,
  // so that the host code's TSC arithmetic is compared with realistic
  // mult/shift and sub-ns remainders even on a kvm-clock host.
  Cells synthetic_cells = {};
  std::memset((*vdso)->area() + vdso::kPvclockPageOffset, 0, vdso::kPageSize);
  for (int done = 0; done < options.synthetic_samples; ++done) {
    absl::StatusOr<LiveSnapshot> snap = SyntheticTscPage(rng);
    if (!snap.ok()) {
      out.Text(MessageKind::kError, snap.status().message());
      return 1;
    }
    const uint64_t cycle_last = Load64(snap->time_page, vdso::kVcCycleLast);
    comparison.Compare(*snap, cycle_last + rng.InRange(0, 1ull << 24),
                       synthetic_cells);
  }
  SendCells(out, MessageKind::kSyntheticCell, synthetic_cells);
  out.Count(MessageKind::kPageRaces, races);
  out.Count(MessageKind::kCounterTraps, PatchedVdso::counter_traps());
  return 0;
}

}  // namespace vdsolab::host
