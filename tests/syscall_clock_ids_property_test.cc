// clock_gettime()'s answer for every clock id, valid and invalid, of both
// signs, against an expectation written independently of
// timekeeper/posix_clocks.cc: the model decodes an id (clockid_to_kclock(),
// CPUCLOCK_PID(), CPUCLOCK_WHICH(), ...), while this test builds the set of
// ids that name one of the caller's clocks forwards, with the kernel's own
// constructors, and expects 0 exactly for those.
//
// From Linux 6.12 (Debian's linux-source-6.12):
// - kernel/time/posix-timers.c, posix_clocks[]: ids 0..11 have a kclock
//   except CLOCK_SGI_CYCLE (10); every other id >= 0 has none (-EINVAL),
//   but for CONFIG_POSIX_AUX_CLOCKS' 16..23 (6.17+), whose kclock answers
//   -ENODEV while the aux clock is disabled.
// - alarmtimer.c, alarm_clock_get_timespec(): -EINVAL without an RTC.
// - include/linux/posix-timers.h: make_process_cpuclock(pid, clock) =
//   (~pid << 3) | clock, make_thread_cpuclock(tid, clock) = the same with
//   CPUCLOCK_PERTHREAD_MASK (4); clock is CPUCLOCK_PROF (0), _VIRT (1) or
//   _SCHED (2); CLOCKFD (3) with the thread bit clear is an fd clock
//   (posix-clock.c: -EINVAL for an fd that is not open).
// - posix-cpu-timers.c, pid_for_clock(): pid 0 is the caller (its thread
//   or its process); a thread clock needs a thread of the caller's group;
//   clock_gettime() of a process clock takes the caller's tid too.
// The machine is the model's: one process with one thread (tid == tgid,
// timekeeper/posix_clocks.h), no other task, no open fd. So the negative
// ids that succeed are exactly the 12 built from pid 0 or the caller's pid
// with PROF, VIRT or SCHED, process or thread; CLOCK_PROCESS_CPUTIME_ID and
// CLOCK_THREAD_CPUTIME_ID are the pid-0 SCHED ones. A successful CPU clock
// answers the process's or the thread's CPU time.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <climits>
#include <cstdint>
#include <set>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "common/timespec.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeper.h"
#include "timekeeper/timekeeping.h"

namespace vdsolab {
namespace {

constexpr int32_t kPerthread = 4;  // CPUCLOCK_PERTHREAD_MASK
constexpr int32_t kClockfd = 3;    // CLOCKFD
// PID_MAX_LIMIT on 64-bit: the largest pid a task can have.
constexpr int32_t kPidMaxLimit = 4 * 1024 * 1024;

// include/linux/posix-timers.h, computed on unsigned as the kernel does.
ClockId MakeProcessCpuclock(uint32_t pid, int32_t clock) {
  return static_cast<ClockId>((~pid << 3) | static_cast<uint32_t>(clock));
}
ClockId MakeThreadCpuclock(uint32_t tid, int32_t clock) {
  return MakeProcessCpuclock(tid, clock | kPerthread);
}

// What clock_gettime(id) must return for a caller `pid` (its tid too) on a
// kernel whose aux clocks are `aux` (nullptr: without them) of which
// `enabled` are on, with or without an RTC.
struct Expected {
  int32_t ret = -kEinval;
  enum class Cpu { kNo, kProcess, kThread } cpu = Cpu::kNo;
};

Expected Expect(ClockId id, int32_t pid, bool has_rtc, bool aux_clocks,
                const std::array<bool, kMaxAuxClocks>& enabled) {
  // The caller's CPU clocks, built forwards.
  for (uint32_t p : {0u, static_cast<uint32_t>(pid)}) {
    for (int32_t which : {0, 1, 2}) {
      if (id == MakeProcessCpuclock(p, which)) {
        return {0, Expected::Cpu::kProcess};
      }
      if (id == MakeThreadCpuclock(p, which)) {
        return {0, Expected::Cpu::kThread};
      }
    }
  }
  switch (id) {
    case kClockRealtime:
    case kClockMonotonic:
    case kClockMonotonicRaw:
    case kClockRealtimeCoarse:
    case kClockMonotonicCoarse:
    case kClockBoottime:
    case kClockTai:
      return {0};
    case kClockProcessCputimeId:
      return {0, Expected::Cpu::kProcess};
    case kClockThreadCputimeId:
      return {0, Expected::Cpu::kThread};
    case kClockRealtimeAlarm:
    case kClockBoottimeAlarm:
      return {has_rtc ? 0 : -kEinval};
    default:
      break;
  }
  if (aux_clocks && id >= kClockAux && id <= kClockAuxLast) {
    return {enabled[static_cast<size_t>(id - kClockAux)] ? 0 : -kEnodev};
  }
  // Everything else: no kclock, another task's CPU clock (there is none),
  // an fd clock (no fd is open) or CLOCKFD with the thread bit (which >=
  // CPUCLOCK_MAX).
  return {-kEinval};
}

// Where a drawn id comes from, for the classification.
enum class Source { kSmall, kCpuCaller, kCpuOther, kFdClock, kArbitrary };

RC_GTEST_PROP(SyscallClockIds, EveryIdAnswersAsTheKernelDefinesIt, ()) {
  auto tsc = timekeeper::MakeTscClocksource(2600000);
  RC_ASSERT(tsc.ok());
  timekeeper::Timekeeping tk(*tsc, 250, nullptr);
  const uint64_t boot = *rc::gen::inRange<uint64_t>(0, 1ull << 40);
  tk.Init(boot, Timespec64{*rc::gen::inRange<int64_t>(0, 4000000000), 0},
          Timespec64{1, 0});
  uint64_t now = boot + *rc::gen::inRange<uint64_t>(0, 1ull << 32);
  tk.Advance(timekeeper::AdvanceMode::kTick, now);

  // The kernel: with or without aux clocks (some enabled), an RTC or not.
  const bool aux_clocks = *rc::gen::arbitrary<bool>();
  std::array<bool, kMaxAuxClocks> enabled{};
  std::array<timekeeper::Timekeeper, kMaxAuxClocks> aux;
  if (aux_clocks) {
    for (int i = 0; i < kMaxAuxClocks; ++i) {
      if (*rc::gen::inRange(0, 3) == 0) {
        tk.EnableAux(i, now);
        enabled[static_cast<size_t>(i)] = true;
      }
    }
    now += *rc::gen::inRange<uint64_t>(0, 1ull << 24);
    tk.Advance(timekeeper::AdvanceMode::kTick, now);
    for (int i = 0; i < kMaxAuxClocks; ++i) {
      aux[static_cast<size_t>(i)] = tk.aux_timekeeper(i);
    }
  }
  timekeeper::SyscallContext ctx;
  ctx.cycles = now + *rc::gen::inRange<uint64_t>(0, 1ull << 24);
  ctx.has_rtc = *rc::gen::arbitrary<bool>();
  ctx.aux_timekeepers = aux_clocks ? aux.data() : nullptr;
  // One process with one thread: pid 1 (init) up to PID_MAX_LIMIT.
  const int32_t pid = *rc::gen::weightedOneOf<int32_t>(
      {{3, rc::gen::inRange<int32_t>(1, 65536)},
       {1, rc::gen::element<int32_t>(1, kPidMaxLimit - 1, kPidMaxLimit)}});
  ctx.tgid = pid;
  ctx.tid = pid;
  ctx.process_cputime_ns = *rc::gen::inRange<int64_t>(0, 1ll << 50);
  ctx.thread_cputime_ns = *rc::gen::inRange<int64_t>(0, 1ll << 50);
  RC_CLASSIFY(aux_clocks, "aux clocks");
  RC_CLASSIFY(ctx.has_rtc, "RTC");

  // Every id from -64 to 63 (the CPU clocks of pids 0..7, CLOCKFD, the
  // kernel's table and past it), then drawn ones of every kind.
  std::vector<std::pair<ClockId, Source>> ids;
  for (ClockId id = -64; id < 64; ++id) ids.push_back({id, Source::kSmall});
  const int drawn = *rc::gen::inRange(8, 40);
  for (int i = 0; i < drawn; ++i) {
    const int32_t which = *rc::gen::inRange(0, 4);  // CLOCKFD included.
    const bool thread = *rc::gen::arbitrary<bool>();
    switch (*rc::gen::inRange(0, 5)) {
      case 0: {
        const uint32_t p =
            *rc::gen::element<uint32_t>(0, static_cast<uint32_t>(pid));
        ids.push_back({thread ? MakeThreadCpuclock(p, which)
                              : MakeProcessCpuclock(p, which),
                       Source::kCpuCaller});
        break;
      }
      case 1: {
        // Another pid: a neighbour of the caller's, or any.
        const auto u = static_cast<uint32_t>(pid);
        uint32_t p = *rc::gen::weightedOneOf<uint32_t>(
            {{2, rc::gen::element<uint32_t>(u - 1, u + 1, u ^ 1)},
             {1, rc::gen::arbitrary<uint32_t>()}});
        // Not the caller's pid, nor 0 (the caller too): a pid with no task.
        if (p == 0 || p == u) p = u + 2;
        ids.push_back({thread ? MakeThreadCpuclock(p, which)
                              : MakeProcessCpuclock(p, which),
                       Source::kCpuOther});
        break;
      }
      case 2:
        // fd_to_clockid(): any fd, none of them open.
        ids.push_back({MakeProcessCpuclock(
                           *rc::gen::inRange<uint32_t>(0, 1u << 20), kClockfd),
                       Source::kFdClock});
        break;
      case 3:
        ids.push_back(
            {*rc::gen::element<ClockId>(INT_MIN, INT_MIN + 1, INT_MAX,
                                        INT_MAX - 1, 64, kClockAuxLast + 1),
             Source::kArbitrary});
        break;
      default:
        ids.push_back({*rc::gen::arbitrary<ClockId>(), Source::kArbitrary});
        break;
    }
  }

  int ok = 0;
  std::set<Source> sources;
  for (const auto& [id, source] : ids) {
    const Expected want = Expect(id, pid, ctx.has_rtc, aux_clocks, enabled);
    const ClockResult got = timekeeper::SysClockGettime(tk, id, ctx);
    if (got.ret != want.ret) {
      RC_FAIL(absl::StrFormat(
          "clock_gettime(%d) (%#x) for pid %d returned %d, the kernel %d", id,
          static_cast<uint32_t>(id), pid, got.ret, want.ret));
    }
    if (want.cpu != Expected::Cpu::kNo) {
      const int64_t ns = want.cpu == Expected::Cpu::kThread
                             ? ctx.thread_cputime_ns
                             : ctx.process_cputime_ns;
      const Timespec64 want_ts{ns / 1000000000, ns % 1000000000};
      if (Timespec64Compare(got.ts, want_ts) != 0) {
        RC_FAIL(absl::StrFormat("clock_gettime(%d): %d.%09d, CPU time %d ns",
                                id, got.ts.tv_sec, got.ts.tv_nsec, ns));
      }
    }
    sources.insert(source);
    ok += got.ret == 0 ? 1 : 0;
  }
  RC_CLASSIFY(sources.count(Source::kCpuCaller) != 0,
              "drawn: the caller's CPU clock");
  RC_CLASSIFY(sources.count(Source::kCpuOther) != 0,
              "drawn: another pid's CPU clock");
  RC_CLASSIFY(sources.count(Source::kFdClock) != 0, "drawn: an fd clock");
  RC_CLASSIFY(sources.count(Source::kArbitrary) != 0, "drawn: any id");
  // Among the small ids, always: the 7 kernel clocks that need neither an
  // RTC nor aux clocks, the two CPUTIME ids and pid 0's six CPU clocks
  // (-8..-6 for the process, -4..-2 for the thread).
  RC_ASSERT(ok >= 7 + 2 + 6);
}

}  // namespace
}  // namespace vdsolab
