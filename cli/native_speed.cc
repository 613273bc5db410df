#include "cli/native_speed.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "common/clockid.h"
#include "sim/page_publisher.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/timekeeping.h"
#include "vdso/vvar_page.h"

namespace vdsolab::cli {
namespace {

// The page `writer` publishes for the model's timekeeper, started on the
// real TSC now: reads for minutes after stay within max_cycles.
class LivePage {
 public:
  explicit LivePage(const variants::Variant& writer) : writer_(writer) {}
  absl::Status Start() {
    absl::StatusOr<std::unique_ptr<vdso::VvarPage>> p =
        vdso::VvarPage::Create();
    if (!p.ok()) return p.status();
    page_ = *std::move(p);
    absl::StatusOr<timekeeper::Clocksource> cs =
        timekeeper::MakeTscClocksource(2600000);
    if (!cs.ok()) return cs.status();
    publisher_ = std::make_unique<sim::PagePublisher>(&writer_, page_.get());
    tk_ = std::make_unique<timekeeper::Timekeeping>(*cs, 250, publisher_.get());
    tk_->Init(__rdtsc(), Timespec64{1764460800, 0}, Timespec64{1, 0});
    return absl::OkStatus();
  }
  const uint8_t* data() const { return page_->data(); }

 private:
  const variants::Variant& writer_;
  std::unique_ptr<vdso::VvarPage> page_;
  std::unique_ptr<sim::PagePublisher> publisher_;
  std::unique_ptr<timekeeper::Timekeeping> tk_;
};

// ns per call over at least `seconds` (batches doubling from one call, so
// that a slow call is timed in as few calls as fit), or a negative number
// when a call failed.
double Time(const variants::Variant& v, ClockId clock, const uint8_t* page,
            double seconds) {
  uint64_t calls = 0;
  double elapsed = 0;
  for (uint64_t batch = 1; elapsed < seconds; batch *= 2) {
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t last = v.native_loop(page, clock, batch);
    elapsed +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    if (last == 0) return -1;
    calls += batch;
  }
  return elapsed * 1e9 / static_cast<double>(calls);
}

// In the child: the figures, or {-1, -1}. The baseline first in each round,
// so that a patched tree too slow to finish is told from a slow machine.
NativeSpeed Measure(const variants::Variant& v, const variants::Variant& base,
                    ClockId clock, ClockId base_clock) {
  LivePage page(base);
  if (!page.Start().ok()) return {-1, -1};
  constexpr double kRound = 0.1;  // Seconds per variant and round.
  Time(base, base_clock, page.data(), kRound / 4);  // Warm up.
  Time(v, clock, page.data(), kRound / 4);
  NativeSpeed best{1e300, 1e300};
  for (int round = 0; round < 3; ++round) {
    const double b = Time(base, base_clock, page.data(), kRound);
    const double a = Time(v, clock, page.data(), kRound);
    if (a < 0 || b < 0) return {-1, -1};
    best.variant_ns = std::min(best.variant_ns, a);
    best.base_ns = std::min(best.base_ns, b);
  }
  return best;
}

}  // namespace

absl::StatusOr<NativeSpeed> MeasureNativeSpeed(const variants::Variant& v,
                                               const variants::Variant& base,
                                               ClockId clock,
                                               ClockId base_clock) {
  if (v.native_loop == nullptr || base.native_loop == nullptr ||
      base.build_update == nullptr) {
    return absl::UnavailableError("no native build to time");
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::UnavailableError("pipe() failed");
  }
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::UnavailableError("fork() failed");
  }
  if (pid == 0) {
    close(fds[0]);
    const NativeSpeed s = Measure(v, base, clock, base_clock);
    // One write of 16 bytes to a pipe is atomic.
    [[maybe_unused]] const ssize_t w = write(fds[1], &s, sizeof s);
    _exit(0);
  }
  close(fds[1]);
  // Three rounds of 0.1 s each way and the warm-up take under a second,
  // or a few for calls of a second each. Past the bound, no figure.
  constexpr auto kBound = std::chrono::seconds(10);
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  NativeSpeed s{-1, -1};
  bool got = false;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int n = poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n == 1) {
      got = read(fds[0], &s, sizeof s) == static_cast<ssize_t>(sizeof s);
    }
    timed_out = n == 0;
    break;
  }
  close(fds[0]);
  if (!got) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!got && timed_out) {
    return absl::DeadlineExceededError(
        "its native calls did not finish within 10 s");
  }
  if (!got) {
    // Killed by a signal of its own, or ended (a sanitizer's report of a
    // crash exits).
    return absl::UnavailableError(
        WIFSIGNALED(status)
            ? absl::StrFormat("its native calls died of signal %d",
                              WTERMSIG(status))
            : absl::StrFormat("its native calls ended the process (exit "
                              "status %d)",
                              WEXITSTATUS(status)));
  }
  if (s.variant_ns < 0) {
    return absl::UnavailableError("a native call answered an error");
  }
  return s;
}

}  // namespace vdsolab::cli
