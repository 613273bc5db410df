#include "cli/native_speed.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "common/clockid.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/timekeeping.h"
#include "vdso/vvar_page.h"

namespace vdsolab::cli {
namespace {

// The page `writer` publishes for the model's timekeeper, started on the
// real TSC now: reads for minutes after stay within max_cycles.
class LivePage : public timekeeper::VsyscallSink {
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
    tk_ = std::make_unique<timekeeper::Timekeeping>(*cs, 250, this);
    tk_->Init(__rdtsc(), Timespec64{1764460800, 0}, Timespec64{1, 0});
    return absl::OkStatus();
  }
  void UpdateVsyscall(const timekeeper::Timekeeper& tk) override {
    page_->Apply(writer_.build_update(tk, seq_, variants::PublishContext{}));
    seq_ += 2;
  }
  const uint8_t* data() const { return page_->data(); }

 private:
  const variants::Variant& writer_;
  std::unique_ptr<vdso::VvarPage> page_;
  std::unique_ptr<timekeeper::Timekeeping> tk_;
  uint32_t seq_ = 0;
};

// ns per call of `n` calls, or a negative number when the last one failed.
double Time(const variants::Variant& v, const uint8_t* page, uint64_t n) {
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t last = v.native_loop(page, kClockMonotonic, n);
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  return last == 0 ? -1 : s * 1e9 / static_cast<double>(n);
}

// In the child: the figures, or {-1, -1}.
NativeSpeed Measure(const variants::Variant& v, const variants::Variant& base) {
  LivePage page(base);
  if (!page.Start().ok()) return {-1, -1};
  constexpr uint64_t kCalls = 100000;
  Time(v, page.data(), kCalls / 10);  // Warm up.
  Time(base, page.data(), kCalls / 10);
  NativeSpeed best{1e300, 1e300};
  for (int round = 0; round < 3; ++round) {
    const double a = Time(v, page.data(), kCalls);
    const double b = Time(base, page.data(), kCalls);
    if (a < 0 || b < 0) return {-1, -1};
    best.variant_ns = std::min(best.variant_ns, a);
    best.base_ns = std::min(best.base_ns, b);
  }
  return best;
}

}  // namespace

absl::StatusOr<NativeSpeed> MeasureNativeSpeed(const variants::Variant& v,
                                               const variants::Variant& base) {
  if (v.native_loop == nullptr || base.native_loop == nullptr ||
      base.build_update == nullptr) {
    return absl::UnavailableError("no native build to time");
  }
  int fds[2];
  if (pipe(fds) != 0) return absl::UnavailableError("pipe() failed");
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::UnavailableError("fork() failed");
  }
  if (pid == 0) {
    close(fds[0]);
    const NativeSpeed s = Measure(v, base);
    // One write of 16 bytes to a pipe is atomic.
    [[maybe_unused]] const ssize_t w = write(fds[1], &s, sizeof s);
    _exit(0);
  }
  close(fds[1]);
  // Three rounds of 100,000 calls each way take well under a second at
  // vDSO speeds; calls of 20 us still fit. Past that, no figure.
  constexpr int kBoundMs = 10000;
  pollfd p{fds[0], POLLIN, 0};
  NativeSpeed s{-1, -1};
  bool got = false;
  if (poll(&p, 1, kBoundMs) == 1) {
    got = read(fds[0], &s, sizeof s) == static_cast<ssize_t>(sizeof s);
  }
  close(fds[0]);
  if (!got) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!got) {
    // Killed by the bound, killed by a signal of its own, or ended (a
    // sanitizer's report of a crash exits).
    return absl::UnavailableError(
        WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL
            ? std::string("its native calls did not finish within 10 s")
        : WIFSIGNALED(status)
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
