#include "kselftest/consistency.h"

#include <array>

#include "absl/strings/str_format.h"
#include "common/rng.h"

namespace vdsolab::kselftest {

bool InOrder(const Timespec64& a, const Timespec64& b) {
  // Unsigned, to avoid false positives at the 2038 rollover.
  const uint64_t as = static_cast<uint64_t>(a.tv_sec);
  const uint64_t bs = static_cast<uint64_t>(b.tv_sec);
  if (as < bs) return true;
  if (as > bs) return false;
  return a.tv_nsec <= b.tv_nsec;
}

ConsistencyResult ConsistencyTest(SimHost& host, ClockId clock, int64_t seconds,
                                  uint64_t max_gap_ns, uint64_t seed,
                                  const std::function<void()>& between,
                                  const std::function<uint64_t()>& next_event) {
  ConsistencyResult out;
  ClockResult first = host.Gettime(clock);
  if (first.ret != 0) {
    out.clock_failed = true;
    return out;
  }
  const int64_t then = first.ts.tv_sec;
  int64_t now = then;
  Rng rng = Rng::Deferred(seed, 0xc0c5, static_cast<uint64_t>(clock), 0);
  std::array<Timespec64, kCallsPerLoop> list;
  // A clock that stops would loop forever here (as the kernel's test
  // would): give up after ten times its duration of true time.
  const uint64_t give_up =
      host.now_ns() + static_cast<uint64_t>(seconds) * 10000000000ull;
  while (now - then < seconds) {
    if (host.now_ns() > give_up) {
      out.ok = false;
      out.failure = absl::StrFormat("%s did not advance %d s in %d s",
                                    ClockName(clock), seconds, seconds * 10);
      return out;
    }
    for (Timespec64& ts : list) {
      // skew_consistency.c flips the frequency from another process: a
      // flip can land between any two reads.
      if (between) between();
      ts = host.Gettime(clock).ts;
    }
    out.reads += kCallsPerLoop;
    ++out.loops;
    for (int i = 0; i + 1 < kCallsPerLoop; ++i) {
      if (!InOrder(list[static_cast<size_t>(i)],
                   list[static_cast<size_t>(i + 1)])) {
        out.ok = false;
        out.failure = absl::StrFormat(
            "%s: %d:%d then %d:%d (delta %d ns) at %d ns of true time",
            ClockName(clock), list[static_cast<size_t>(i)].tv_sec,
            list[static_cast<size_t>(i)].tv_nsec,
            list[static_cast<size_t>(i + 1)].tv_sec,
            list[static_cast<size_t>(i + 1)].tv_nsec,
            TimespecDiffNs(list[static_cast<size_t>(i)],
                           list[static_cast<size_t>(i + 1)]),
            host.now_ns());
        return out;
      }
    }
    now = list[0].tv_sec;
    uint64_t gap = rng.InRange(0, max_gap_ns);
    if (next_event) {
      // Start the next loop just before the event, so that it lands
      // among the loop's reads.
      const uint64_t at = next_event();
      const uint64_t span = kCallsPerLoop * host.options().read_cost_ns;
      if (at > host.now_ns() && host.now_ns() + gap + span > at) {
        const uint64_t before = rng.InRange(0, span - 1);
        gap = at - host.now_ns() > before ? at - host.now_ns() - before : 0;
      }
    }
    host.Sleep(gap);
  }
  return out;
}

}  // namespace vdsolab::kselftest
