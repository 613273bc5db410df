// The spine's end-to-end property: for generated timekeeper histories, the
// upstream vDSO reader, reading the page update_vsyscall() wrote, returns
// bit for bit what the timekeeper's clock_gettime() syscall returns, for
// every clock id, at the same counter value.
//
// The one place the two differ by design is spelled out, not skipped: the
// x86 vDSO computes with a 63-bit counter (S64_MAX mask, bit 62 as the sign
// of the delta), the syscall with the clocksource's 64-bit mask (bit 63). So
// the vDSO's answer is the syscall's at cycle_last + e, where
// e = (counter - cycle_last) mod 2^63, or at cycle_last itself when e has
// bit 62 set. Deltas that large (2^62 cycles is 56 years at 2.6 GHz) only
// arise from a corrupted counter; the test tags how often it draws them.
//
// A second, smaller domain: BOOTTIME and TAI go through ktime_t (s64 ns) in
// the syscall but through sec + ns in the vDSO. Past KTIME_MAX (year 2262),
// or when more than 2^32 s have passed since the last update (the vDSO's
// u32 second carry wraps), they cannot agree; there the test asserts only
// that both calls succeed, and tags the case.
//
// The 6.17+ aux clocks (CLOCK_AUX + 0..7) ride along: generated histories
// enable, disable, set and steer them, VvarPublisher applies their records
// (vdso_time_update_aux()), and each is read back. An enabled aux clock on
// a vDSO-capable clocksource must be answered from the page, not by the
// syscall fallback (the fallback here is the oracle itself, so a record
// never written would otherwise go unseen), and its answer is the
// syscall's or 1 ns below it: vdso_time_update_aux() drops xtime_nsec's
// sub-ns part (timekeeper/vsyscall.h). A disabled one answers -ENODEV
// through the syscall.
//
// The page is also the kernel's byte for byte where no reader looks: every
// record's clocksource fields (clock_mode, cycle_last, max_cycles, mask,
// mult, shift) are the timekeeper's, as fill_clock_configuration() and
// vdso_time_update_aux() copy them, mask included, which the x86 readers
// never load (they compute with S64_MAX) but other architectures' do;
// and each record's seq counts its updates (vdso_write_begin() and
// vdso_write_end() increment it once each), which readers compare only
// for change.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/math64.h"
#include "testing/fixed_counter_hooks.h"
#include "tests/generators.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/vsyscall.h"
#include "vdso/access.h"
#include "vdso/datapage.h"
#include "vdso/upstream_reader.h"
#include "vdso/vvar_page.h"

namespace vdsolab {
namespace {

using timekeeper::SyscallContext;

// The clocksource fields of the vdso_clock record at page offset `vc`
// against `tkr` (`what` names the record in a failure).
void AssertClockConfiguration(const vdso::VvarPage& page, uint32_t vc,
                              const timekeeper::TkReadBase& tkr,
                              const std::string& what) {
  struct Field {
    const char* name;
    uint32_t offset;
    uint8_t size;
    uint64_t want;
  };
  const Field fields[] = {
      {"clock_mode", vdso::kVcClockMode, 4,
       static_cast<uint32_t>(tkr.clock->vdso_clock_mode)},
      {"cycle_last", vdso::kVcCycleLast, 8, tkr.cycle_last},
      {"max_cycles", vdso::kVcMaxCycles, 8, tkr.clock->max_cycles},
      {"mask", vdso::kVcMask, 8, tkr.mask},
      {"mult", vdso::kVcMult, 4, tkr.mult},
      {"shift", vdso::kVcShift, 4, tkr.shift},
  };
  for (const Field& f : fields) {
    const uint64_t got = page.Load(vc + f.offset, f.size);
    if (got != f.want) {
      RC_FAIL(absl::StrFormat("%s.%s on the page is %#x, the timekeeper's %#x",
                              what, f.name, got, f.want));
    }
  }
}

// The clocksource: mostly the TSC; sometimes one the vDSO cannot read.
timekeeper::Clocksource GenClocksource() {
  const bool vdso_capable = *rc::gen::weightedOneOf<bool>(
      {{7, rc::gen::just(true)}, {1, rc::gen::just(false)}});
  if (vdso_capable) {
    auto tsc = timekeeper::MakeTscClocksource(*testing::GenTscKhz());
    RC_ASSERT(tsc.ok());
    return *tsc;
  }
  const bool hpet = *rc::gen::arbitrary<bool>();
  auto cs = hpet ? timekeeper::ClocksourceRegisterScale(
                       "hpet", timekeeper::ClocksourceMask(32), 1, 14318180,
                       timekeeper::kVdsoClockmodeNone, 250)
                 : timekeeper::ClocksourceRegisterScale(
                       "acpi_pm", timekeeper::ClocksourceMask(24), 1, 3579545,
                       timekeeper::kVdsoClockmodeNone, 200);
  RC_ASSERT(cs.ok());
  return *cs;
}

RC_GTEST_PROP(UpstreamReader, MatchesTheSyscallBitForBit, ()) {
  auto page_or = vdso::VvarPage::Create();
  RC_ASSERT(page_or.ok());
  std::unique_ptr<vdso::VvarPage> page = std::move(*page_or);
  timekeeper::VvarPublisher publisher(page.get(), 1);

  const timekeeper::Clocksource clock = GenClocksource();
  const int hz = *testing::GenHz();
  const uint64_t c0 = *testing::GenCounterStart() & clock.mask;
  // REALTIME at boot: anywhere, or 23:59:58.9 and later on some UTC day
  // with a leap second asked for: the NTP second overflow at 23:59:59
  // arms it (second_overflow()), the one at midnight inserts it, so a
  // history past midnight sets the clock.
  const bool near_midnight = *rc::gen::inRange(0, 4) == 0;
  const Timespec64 wall =
      near_midnight
          ? Timespec64{*rc::gen::inRange<int64_t>(1, 1ll << 18) * 86400 - 2,
                       *rc::gen::inRange<int64_t>(900000000, 1000000000)}
          : Timespec64{*rc::gen::inRange<int64_t>(0, 1ll << 34),
                       *rc::gen::inRange<int64_t>(0, 1000000000)};
  const Timespec64 boot{*rc::gen::inRange<int64_t>(0, 100000),
                        *rc::gen::inRange<int64_t>(0, 1000000000)};
  timekeeper::Timekeeping tk(clock, hz, &publisher);
  tk.Init(c0, wall, boot);
  if (near_midnight) {
    timekeeper::Timex txc;
    txc.modes = timekeeper::kAdjStatus;
    txc.status = timekeeper::kStaIns;
    RC_ASSERT(tk.Adjtimex(txc, c0).ok());
  }

  // A history of ticks, frequency changes and aux clock operations, each
  // published to the page.
  const uint64_t ci = tk.timekeeper().cycle_interval;
  uint64_t now = c0;
  int aux_ops = 0;
  int leaps = 0;
  const auto apply_aux = [&tk, &now, &aux_ops](const testing::AuxOp& op) {
    ++aux_ops;
    switch (op.kind) {
      case testing::AuxOp::Kind::kEnable:
        tk.EnableAux(op.index, now);
        break;
      case testing::AuxOp::Kind::kDisable:
        tk.DisableAux(op.index);
        break;
      case testing::AuxOp::Kind::kSetTime:
        RC_ASSERT(tk.AuxSetTime(op.index, Timespec64{op.sec, op.nsec}, now) ==
                  (tk.AuxEnabled(op.index) ? 0 : -kEnodev));
        break;
      case testing::AuxOp::Kind::kFrequency: {
        timekeeper::Timex txc;
        txc.modes = timekeeper::kAdjFrequency;
        txc.freq = op.freq;
        const bool enabled = tk.AuxEnabled(op.index);
        const int ret = tk.AuxAdjtimex(op.index, &txc, now);
        RC_ASSERT((enabled ? ret >= 0 : ret == -kEnodev));
        break;
      }
    }
  };
  if (*rc::gen::arbitrary<bool>()) {
    testing::AuxOp enable = *testing::GenAuxOp();
    enable.kind = testing::AuxOp::Kind::kEnable;
    apply_aux(enable);
  }
  const int steps = *rc::gen::inRange(0, 40);
  for (int i = 0; i < steps; ++i) {
    now = (now + *testing::GenTickGap(ci, clock.max_cycles)) & clock.mask;
    const int what = *rc::gen::inRange(0, 12);
    if (what >= 10) {
      apply_aux(*testing::GenAuxOp());
    } else if (what == 0) {
      timekeeper::Timex txc;
      txc.modes =
          *rc::gen::element(timekeeper::kAdjFrequency, timekeeper::kAdjTick);
      txc.freq = *rc::gen::inRange<int64_t>(-(500ll << 16), 500ll << 16);
      txc.tick = *rc::gen::inRange<int64_t>(9000, 11001);
      RC_ASSERT(tk.Adjtimex(txc, now).ok());
    } else {
      // Advance() says whether the tick set the clock (a leap second):
      // exactly when REALTIME's offset from MONOTONIC moved.
      const Ktime offs_real = tk.timekeeper().offs_real;
      const bool clock_set = tk.Advance(timekeeper::AdvanceMode::kTick, now);
      RC_ASSERT(clock_set == (tk.timekeeper().offs_real != offs_real));
      leaps += clock_set ? 1 : 0;
    }
  }

  // The records' seqs: 2 per update from a zeroed page; even when done.
  const uint32_t want_seq =
      static_cast<uint32_t>(2 * publisher.updates_published());
  for (int cs : {vdso::kCsHresCoarse, vdso::kCsRaw}) {
    const uint64_t seq =
        page->Load(vdso::ClockDataOffset(cs) + vdso::kVcSeq, 4);
    if (seq != want_seq) {
      RC_FAIL(absl::StrFormat("clock_data[%d].seq is %u after %u updates", cs,
                              seq, publisher.updates_published()));
    }
  }
  for (int i = 0; i < kMaxAuxClocks; ++i) {
    RC_ASSERT(page->Load(vdso::AuxClockDataOffset(i) + vdso::kVcSeq, 4) % 2 ==
              0);
  }

  // The records' clocksource fields, read by no x86 reader or not.
  if (clock.vdso_clock_mode != timekeeper::kVdsoClockmodeNone) {
    AssertClockConfiguration(*page, vdso::ClockDataOffset(vdso::kCsHresCoarse),
                             tk.timekeeper().tkr_mono, "clock_data[CS_HRES]");
    AssertClockConfiguration(*page, vdso::ClockDataOffset(vdso::kCsRaw),
                             tk.timekeeper().tkr_raw, "clock_data[CS_RAW]");
    for (int i = 0; i < kMaxAuxClocks; ++i) {
      if (!tk.AuxEnabled(i)) continue;
      AssertClockConfiguration(*page, vdso::AuxClockDataOffset(i),
                               tk.aux_timekeeper(i).tkr_mono,
                               absl::StrFormat("aux_clock_data[%d]", i));
    }
  }

  // Where the reader's counter sits relative to the published cycle_last.
  const uint64_t cycle_last = tk.timekeeper().tkr_mono.cycle_last;
  const uint64_t delta = *testing::GenProbeDelta(ci, clock.max_cycles);
  std::array<timekeeper::Timekeeper, kMaxAuxClocks> aux;
  for (int i = 0; i < kMaxAuxClocks; ++i) {
    aux[static_cast<size_t>(i)] = tk.aux_timekeeper(i);
  }
  SyscallContext ctx;
  ctx.cycles = cycle_last + delta;
  ctx.aux_timekeepers = aux.data();
  ctx.process_cputime_ns = *rc::gen::inRange<int64_t>(0, 1ll << 40);
  ctx.thread_cputime_ns = *rc::gen::inRange<int64_t>(0, 1ll << 40);

  // The counter the x86 vDSO effectively converts (see the file comment).
  const uint64_t e = (ctx.cycles - cycle_last) & kS64Max;
  const uint64_t vdso_cycles =
      (e & (1ull << 62)) != 0 ? cycle_last : cycle_last + e;
  const bool tsc = clock.vdso_clock_mode == timekeeper::kVdsoClockmodeTsc;
  if (!tsc) {
    RC_TAG("fallback: clocksource not vDSO-capable");
  } else if (delta >= (1ull << 63) + (1ull << 62)) {
    RC_TAG("negative motion: both clamp to the base");
  } else if (delta >= (1ull << 62)) {
    RC_TAG("|delta| >= 2^62: vDSO and syscall differ by design");
  } else if (delta > clock.max_cycles) {
    RC_TAG("delta > max_cycles: overflow-safe multiply");
  } else {
    RC_TAG("delta in range");
  }
  RC_CLASSIFY(c0 >= (1ull << 63) || cycle_last >= (1ull << 63),
              "counter >= 2^63");

  // Seconds since the update the vDSO adds, from cycles alone.
  const auto& mono = tk.timekeeper().tkr_mono;
  const unsigned __int128 ns_since_update =
      (static_cast<unsigned __int128>(vdso_cycles - cycle_last) * mono.mult +
       mono.xtime_nsec) >>
      mono.shift;
  const bool carry_may_wrap =
      ns_since_update >=
      static_cast<unsigned __int128>((1ull << 32) - 2) * kNsecPerSec;

  bool not_compared = false;
  SyscallContext vdso_ctx = ctx;
  vdso_ctx.cycles = tsc ? vdso_cycles : ctx.cycles;
  const std::vector<ClockId> ids = {0, 1, 2,  3,  4,  5,       6,      7,
                                    8, 9, 10, 11, -1, INT_MIN, INT_MAX};
  // A stable page: the counter fixed, the syscall at that counter as the
  // fallback, and no spinning allowed. The answer, and whether it came
  // from the fallback.
  const auto read_stable = [&](ClockId id) {
    testing::FixedCounterHooks hooks(ctx.cycles);
    hooks.UseSyscallOf(&tk.timekeeper(), ctx);
    hooks.retry_budget = 0;
    vdso::HookedAccess access(page->data(), &hooks);
    const std::optional<ClockResult> got =
        vdso::upstream::ClockGettime(access, page->data(), id);
    return std::make_pair(got, !hooks.fallbacks().empty());
  };
  for (ClockId id : ids) {
    const std::optional<ClockResult> got = read_stable(id).first;
    RC_ASSERT(got.has_value());
    const bool hres = id >= 0 && id < kMaxClocks &&
                      ((1u << id) & (kVdsoHres | kVdsoRaw)) != 0;
    const ClockResult want =
        timekeeper::SysClockGettime(tk, id, hres ? vdso_ctx : ctx);
    if (tsc && (id == kClockBoottime || id == kClockTai)) {
      const __int128 total_ns =
          static_cast<__int128>(got->ts.tv_sec) * 1000000000 + got->ts.tv_nsec;
      if (carry_may_wrap || total_ns >= kKtimeMax - 1000000000ll) {
        not_compared = true;
        RC_ASSERT(got->ret == 0);
        RC_ASSERT(want.ret == 0);
        continue;
      }
    }
    if (!(*got == want)) {
      RC_FAIL(
          absl::StrFormat("%s: vDSO %s, syscall %s (counter %#x, "
                          "cycle_last %#x)",
                          ClockName(id), FormatClockResult(*got),
                          FormatClockResult(want), ctx.cycles, cycle_last));
    }
  }
  RC_CLASSIFY(not_compared, "BOOTTIME/TAI beyond ktime range: not compared");

  // The aux clocks.
  int enabled = 0;
  bool aux_not_compared = false;
  bool aux_below = false;
  for (int i = 0; i < kMaxAuxClocks; ++i) {
    const ClockId id = kClockAux + i;
    const auto [got, fell_back] = read_stable(id);
    RC_ASSERT(got.has_value());
    if (!tk.AuxEnabled(i)) {
      const ClockResult want = timekeeper::SysClockGettime(tk, id, ctx);
      RC_ASSERT(want.ret == -kEnodev);
      RC_ASSERT(*got == want);
      continue;
    }
    ++enabled;
    if (tsc && fell_back) {
      RC_FAIL(
          absl::StrFormat("%s is enabled on a TSC page, but the vDSO "
                          "went to the syscall",
                          ClockName(id)));
    }
    // The counter the vDSO converts, from the aux record's own cycle_last
    // (an aux timekeeper accumulates from where it was enabled).
    const auto& amono = aux[static_cast<size_t>(i)].tkr_mono;
    const uint64_t ae = (ctx.cycles - amono.cycle_last) & kS64Max;
    SyscallContext aux_ctx = ctx;
    if (tsc) {
      aux_ctx.cycles =
          (ae & (1ull << 62)) != 0 ? amono.cycle_last : amono.cycle_last + ae;
    }
    const ClockResult want = timekeeper::SysClockGettime(tk, id, aux_ctx);
    RC_ASSERT(got->ret == 0);
    RC_ASSERT(want.ret == 0);
    const __int128 got_ns =
        static_cast<__int128>(got->ts.tv_sec) * 1000000000 + got->ts.tv_nsec;
    const __int128 want_ns =
        static_cast<__int128>(want.ts.tv_sec) * 1000000000 + want.ts.tv_nsec;
    const unsigned __int128 aux_since_update =
        (static_cast<unsigned __int128>(aux_ctx.cycles - amono.cycle_last) *
             amono.mult +
         amono.xtime_nsec) >>
        amono.shift;
    if (aux_since_update >=
            static_cast<unsigned __int128>((1ull << 32) - 2) * kNsecPerSec ||
        got_ns >= kKtimeMax - 1000000000ll) {
      // As for BOOTTIME and TAI: the ktime_t syscall and the sec + ns
      // vDSO part ways there.
      aux_not_compared = true;
      continue;
    }
    const __int128 below = want_ns - got_ns;
    if (below != 0 && !(tsc && below == 1)) {
      RC_FAIL(absl::StrFormat(
          "%s: vDSO %s, syscall %s (counter %#x, aux cycle_last %#x)",
          ClockName(id), FormatClockResult(*got), FormatClockResult(want),
          ctx.cycles, amono.cycle_last));
    }
    aux_below |= below == 1;
  }
  RC_CLASSIFY(aux_below, "aux clock 1 ns below the syscall");
  RC_CLASSIFY(leaps > 0, "a tick inserted a leap second");
  RC_CLASSIFY(aux_ops > 0, "aux clock operations");
  RC_CLASSIFY(enabled > 0, "aux clock enabled");
  RC_CLASSIFY(aux_not_compared, "aux clock beyond ktime range: not compared");
}

}  // namespace
}  // namespace vdsolab
