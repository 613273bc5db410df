#include "hostvdso/internal/era.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/clockid.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/posix_clocks.h"
#include "timekeeper/timekeeping.h"
#include "variants/registry.h"
#include "vdso/vvar_page.h"

namespace vdsolab::hostvdso::internal {
namespace {

// A fixed counter, the timekeeper's syscall; records what the call did.
class ProbeHooks final : public vdso::AccessHooks {
 public:
  ProbeHooks(const timekeeper::Timekeeping* tk, uint64_t counter)
      : tk_(tk), counter_(counter) {}
  void BeforeLoad(uint32_t, uint32_t) override { ++loads; }
  uint64_t ReadCounter(vdso::CounterRead) override {
    ++reads;
    return counter_;
  }
  bool MayRetry() override { return false; }  // A stable page: no retry.
  ClockResult Fallback(ClockId clock) override {
    ++fallbacks;
    timekeeper::SyscallContext ctx;
    ctx.cycles = counter_;
    return timekeeper::SysClockGettime(*tk_, clock, ctx);
  }
  void OnFault(const vdso::CallFault& f) override { fault = f; }

  int loads = 0, reads = 0, fallbacks = 0;
  std::optional<vdso::CallFault> fault;

 private:
  const timekeeper::Timekeeping* tk_;
  uint64_t counter_;
};

class PageSink final : public timekeeper::VsyscallSink {
 public:
  PageSink(const variants::Variant& era, vdso::VvarPage* page)
      : era_(era), page_(page) {}
  void UpdateVsyscall(const timekeeper::Timekeeper& tk) override {
    page_->Apply(era_.build_update(tk, seq_, variants::PublishContext{}));
    seq_ += 2;
  }

 private:
  const variants::Variant& era_;
  vdso::VvarPage* page_;
  uint32_t seq_ = 0;
};

std::string Result(const std::optional<ClockResult>& r) {
  return r ? FormatClockResult(*r) : "no answer";
}

}  // namespace

absl::StatusOr<const variants::Variant*> EraVariantFor(
    int major, int minor, const std::string& what) {
  const int v = major * 100 + minor;
  const char* name = nullptr;
  if (v >= 617) {
    name = "upstream";
  } else if (v >= 615) {
    name = "6.15";
  } else if (v >= 613) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is Linux %d.%d: its vDSO reads struct vdso_data at the start of "
        "the time page (the 6.13 data store), a layout vdsolab has no "
        "variant for (5.3-6.12 keep it at +128, 6.15+ has struct "
        "vdso_time_data)",
        what, major, minor));
  } else if (v >= 610) {
    name = "6.10";
  } else if (v >= 605) {
    name = "6.5";
  } else if (v >= 601) {
    name = "6.1";
  } else if (v >= 503) {
    name = "5.3";
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is Linux %d.%d: before 5.3 the x86 vDSO reads struct "
        "vsyscall_gtod_data, whose layout vdsolab has as a variant of its "
        "own but not for compiled images",
        what, major, minor));
  }
  return variants::FindVariant(name);
}

uint32_t FirstRecordOffset(const variants::Layout& layout) {
  uint32_t first = ~0u;
  for (const variants::Field& f : layout.fields()) {
    if (f.kind == variants::FieldKind::kSeq && f.offset < first) {
      first = f.offset;
    }
  }
  return first == ~0u ? 0 : first;
}

absl::StatusOr<ProbeResult> ProbeImage(const PreparedImage* image,
                                       const variants::Variant& era,
                                       const std::string& what) {
  absl::Status error;
  std::unique_ptr<ImageProcess> proc = AcquireProcess(image, &error);
  if (proc == nullptr) return error;
  ProbeResult result;
  std::vector<ClockId> faulted;
  absl::StatusOr<std::unique_ptr<vdso::VvarPage>> page =
      vdso::VvarPage::Create();
  if (!page.ok()) return page.status();
  absl::StatusOr<timekeeper::Clocksource> cs =
      timekeeper::MakeTscClocksource(2600000);
  if (!cs.ok()) return cs.status();
  PageSink sink(era, page->get());
  timekeeper::Timekeeping tk(*cs, 250, &sink);
  uint64_t now = 1ull << 40;
  tk.Init(now, Timespec64{1764460800, 250000000}, Timespec64{5, 0});
  const uint64_t ci = tk.timekeeper().cycle_interval;
  std::unique_ptr<variants::SimReader> reader = era.make_sim_reader();
  std::vector<ClockId> clocks(std::begin(kVdsoServedClocks),
                              std::end(kVdsoServedClocks));
  clocks.push_back(kClockProcessCputimeId);  // Never from the page.
  for (int step = 0; step < 3; ++step) {
    now += ci + step * 977;
    if (step == 1) {
      timekeeper::Timex txc;
      txc.modes = timekeeper::kAdjFrequency;
      txc.freq = 42ll << 16;
      if (!tk.Adjtimex(txc, now).ok()) {
        return absl::InternalError("the probe's adjtimex failed");
      }
    } else {
      tk.Advance(timekeeper::AdvanceMode::kTick, now);
    }
    const uint64_t last = tk.timekeeper().tkr_mono.cycle_last;
    for (uint64_t counter : {last, last + ci / 3, last + 5 * ci / 2}) {
      for (ClockId clock : clocks) {
        if (std::find(faulted.begin(), faulted.end(), clock) != faulted.end()) {
          continue;
        }
        if (proc == nullptr || !proc->alive()) {
          proc = AcquireProcess(image, &error);
          if (proc == nullptr) return error;
        }
        ProbeHooks ih(&tk, counter), bh(&tk, counter);
        vdso::HookedAccess ia((*page)->data(), &ih), ba((*page)->data(), &bh);
        const std::optional<ClockResult> got =
            proc->Call(ia, (*page)->data(), clock);
        const std::optional<ClockResult> want =
            reader->Call(ba, (*page)->data(), clock);
        if (ih.fault) {
          if (result.fault.empty()) {
            result.fault =
                absl::StrFormat("clock_gettime(%s) %s", ClockName(clock),
                                vdso::DescribeFault(*ih.fault));
          }
          if (ih.fault->kind == vdso::CallFault::Kind::kSpin) return result;
          faulted.push_back(clock);
          continue;
        }
        const bool from_page = bh.fallbacks == 0;
        if (got != want || (ih.fallbacks == 0) != from_page ||
            (from_page && ih.loads == 0)) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s does not read the page layout of built-in variant %s: on a "
              "page its writer published, clock_gettime(%s) at counter %#x "
              "answered %s (%d page loads, %d syscalls), %s's reader %s (%d "
              "syscalls)",
              what, era.name, ClockName(clock), counter, Result(got), ih.loads,
              ih.fallbacks, era.name, Result(want), bh.fallbacks));
        }
        ++result.agreed;
      }
    }
  }
  ReleaseProcess(std::move(proc));
  return result;
}

}  // namespace vdsolab::hostvdso::internal
