#include "kselftest/sim_host.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "testing/fixed_counter_hooks.h"
#include "timekeeper/clocksource.h"
#include "vdso/access.h"
#include "vdso/upstream_reader.h"

namespace vdsolab::kselftest {

namespace {

// True time simulated by every SimHost of this process, printed at exit.
struct SimulatedTotal {
  std::atomic<uint64_t> ns{0};
  ~SimulatedTotal() {
    std::printf("simulated time, all SimHosts of this test: %.3f s\n",
                static_cast<double>(ns.load()) / 1e9);
  }
};
SimulatedTotal g_simulated;

}  // namespace

SimHost::~SimHost() { g_simulated.ns += now_ns_; }

SimHost::SimHost(const SimHostOptions& options)
    : options_(options),
      tick_ns_(kNsecPerSec / static_cast<uint64_t>(options.hz)) {
  absl::StatusOr<std::unique_ptr<vdso::VvarPage>> page =
      vdso::VvarPage::Create();
  absl::StatusOr<timekeeper::Clocksource> tsc =
      timekeeper::MakeTscClocksource(options.tsc_khz);
  if (!page.ok() || !tsc.ok()) {
    std::fprintf(stderr, "SimHost: cannot set up the machine\n");
    std::abort();
  }
  page_ = *std::move(page);
  tsc->suspend_nonstop = options.nonstop_tsc;
  publisher_ = std::make_unique<timekeeper::VvarPublisher>(
      page_.get(), 1, options.profile.defects.vsyscall_boottime_shift_overflow);
  tk_ = std::make_unique<timekeeper::Timekeeping>(
      *tsc, options.hz, publisher_.get(), options.profile);
  tk_->Init(Counter(), options.boot_realtime, {1, 0});
}

uint64_t SimHost::CounterAt(uint64_t t_ns) const {
  return counter_start_ +
         static_cast<uint64_t>(static_cast<unsigned __int128>(t_ns) *
                               options_.tsc_hz / kNsecPerSec);
}

void SimHost::RunTo(uint64_t t_ns) {
  while (next_tick_ * tick_ns_ <= t_ns) {
    tk_->Advance(timekeeper::AdvanceMode::kTick,
                 CounterAt(next_tick_ * tick_ns_));
    ++next_tick_;
  }
  now_ns_ = t_ns;
}

void SimHost::Sleep(uint64_t ns) { RunTo(now_ns_ + ns); }

ClockResult SimHost::Gettime(ClockId clock) {
  RunTo(now_ns_ + options_.read_cost_ns);
  timekeeper::SyscallContext ctx;
  // The test process runs all the time: its CPU time is true time.
  ctx.process_cputime_ns = static_cast<int64_t>(now_ns_);
  ctx.thread_cputime_ns = static_cast<int64_t>(now_ns_);
  if (clock >= kClockAux && clock <= kClockAuxLast) {
    for (int i = 0; i < kMaxAuxClocks; ++i) {
      aux_[static_cast<size_t>(i)] = tk_->aux_timekeeper(i);
    }
    ctx.aux_timekeepers = aux_.data();
  }
  testing::FixedCounterHooks hooks(Counter());
  hooks.UseSyscallOf(&tk_->timekeeper(), ctx);
  vdso::HookedAccess access(page_->data(), &hooks);
  const std::optional<ClockResult> r =
      vdso::upstream::ClockGettime(access, page_->data(), clock);
  return r.value_or(ClockResult::Error(-1));
}

int SimHost::Adjtimex(timekeeper::Timex* txc) {
  RunTo(now_ns_ + options_.syscall_cost_ns);
  return tk_->Adjtimex(txc, Counter());
}

int SimHost::ClockAdjtime(ClockId clock, timekeeper::Timex* txc) {
  if (clock == kClockRealtime) return Adjtimex(txc);
  RunTo(now_ns_ + options_.syscall_cost_ns);
  return tk_->AuxAdjtimex(clock - kClockAux, txc, Counter());
}

int SimHost::Settimeofday(const Timespec64& ts) {
  RunTo(now_ns_ + options_.syscall_cost_ns);
  return tk_->SetTimeOfDay(ts, Counter());
}

void SimHost::Suspend(uint64_t ns, Timespec64 persistent_now) {
  tk_->Suspend(Counter(), persistent_now);
  // No ticks in suspend.
  now_ns_ += ns;
  while (next_tick_ * tick_ns_ <= now_ns_) ++next_tick_;
  Timespec64 later = persistent_now;
  if (later.tv_sec != 0) later.tv_sec += static_cast<int64_t>(ns / kNsecPerSec);
  tk_->Resume({Counter(), later});
}

bool SimHost::SleepUntilRealtimeTimer(const Timespec64& deadline,
                                      uint64_t limit_ns) {
  const uint64_t give_up = now_ns_ + limit_ns;
  const Ktime deadline_ns = Timespec64ToKtime(deadline);
  timekeeper::HrtimerOffsets offs;
  timekeeper::KtimeGetUpdateOffsetsNow(tk_->timekeeper(), Counter(), &offs,
                                       options_.hrtimer_leap_adjust);
  // The clock event is programmed in MONOTONIC from the cached offset.
  Ktime program = deadline_ns - offs.offs_real;
  while (now_ns_ < give_up) {
    // Run to the programmed MONOTONIC time: MONOTONIC runs within 10% of
    // true time, so a few steps home in on it.
    for (;;) {
      const timekeeper::TkReadBase& tkr = tk_->timekeeper().tkr_mono;
      const Ktime mono =
          tkr.base +
          static_cast<Ktime>(timekeeper::TimekeepingCyclesToNs(tkr, Counter()));
      if (mono >= program || now_ns_ >= give_up) break;
      uint64_t step = static_cast<uint64_t>(program - mono);
      step = step > 10 ? step * 9 / 10 : 1;
      RunTo(std::min(now_ns_ + step, give_up));
    }
    // hrtimer_interrupt(): now in MONOTONIC and the offsets in force.
    const Ktime mono = timekeeper::KtimeGetUpdateOffsetsNow(
        tk_->timekeeper(), Counter(), &offs, options_.hrtimer_leap_adjust);
    if (mono + offs.offs_real >= deadline_ns) return true;
    program = deadline_ns - offs.offs_real;  // Not yet: re-programmed.
  }
  return false;
}

}  // namespace vdsolab::kselftest
