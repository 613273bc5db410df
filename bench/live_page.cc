#include "bench/live_page.h"

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstring>

#include "bench/counters.h"
#include "common/bytes.h"
#include "timekeeper/clocksource.h"
#include "vdso/datapage.h"

namespace vdsolab::bench {
namespace {

void SleepFor(std::chrono::microseconds d) {
  struct timespec ts = {0, static_cast<long>(d.count()) * 1000};
  nanosleep(&ts, nullptr);
}

}  // namespace

absl::StatusOr<std::unique_ptr<LiveVariantPage>> LiveVariantPage::Start(
    const variants::Variant& variant, uint32_t tsc_khz, int hz) {
  std::unique_ptr<LiveVariantPage> p(new LiveVariantPage);
  p->variant_ = &variant;
  absl::StatusOr<std::unique_ptr<vdso::VvarPage>> page =
      vdso::VvarPage::Create();
  if (!page.ok()) return page.status();
  p->page_ = *std::move(page);
  absl::StatusOr<timekeeper::Clocksource> cs =
      timekeeper::MakeTscClocksource(tsc_khz);
  if (!cs.ok()) return cs.status();
  p->clocksource_ = std::make_unique<timekeeper::Clocksource>(*cs);
  const uint64_t now = Rdtscp();
  p->ctx_.tsc_khz = tsc_khz;
  p->ctx_.boot_counter = now;
  p->tk_ =
      std::make_unique<timekeeper::Timekeeping>(*p->clocksource_, hz, p.get());
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  struct timespec mono;
  clock_gettime(CLOCK_MONOTONIC, &mono);
  p->tk_->Init(now, Timespec64{wall.tv_sec, wall.tv_nsec},
               Timespec64{mono.tv_sec, mono.tv_nsec});
  p->ticker_ = std::thread([raw = p.get(), hz] { raw->Run(hz); });
  return p;
}

LiveVariantPage::~LiveVariantPage() {
  stop_.store(true);
  if (ticker_.joinable()) ticker_.join();
}

void LiveVariantPage::UpdateVsyscall(const timekeeper::Timekeeper& tk) {
  const vdso::VvarUpdate update = variant_->build_update(tk, seq_, ctx_);
  seq_ += 2;
  for (const vdso::VvarStore& s : update.stores) {
    // smp_wmb(): on x86 a compiler barrier; it pairs with the readers'
    // smp_rmb() in their seq protocol.
    if (s.wmb_before) std::atomic_thread_fence(std::memory_order_release);
    page_->Apply(s);
  }
}

void LiveVariantPage::Run(int hz) {
  const auto tick = std::chrono::microseconds(1000000 / hz);
  while (!stop_.load(std::memory_order_relaxed)) {
    SleepFor(tick);
    tk_->Advance(timekeeper::AdvanceMode::kTick, Rdtscp());
  }
}

absl::StatusOr<std::unique_ptr<HostPageMirror>> HostPageMirror::Start() {
  absl::StatusOr<host::VdsoMappings> maps = host::FindVdsoMappings();
  if (!maps.ok()) return maps.status();
  absl::StatusOr<host::LiveSnapshot> snap = host::TakeSnapshot(*maps);
  if (!snap.ok()) return snap.status();
  if (absl::Status s = host::CheckLayout(*snap, host::RunningKernel());
      !s.ok()) {
    return s;
  }
  std::unique_ptr<HostPageMirror> m(new HostPageMirror);
  m->maps_ = *maps;
  absl::StatusOr<std::unique_ptr<vdso::VvarPage>> page =
      vdso::VvarPage::Create();
  if (!page.ok()) return page.status();
  m->page_ = *std::move(page);
  const int32_t mode = static_cast<int32_t>(
      Load32(snap->time_page, vdso::ClockDataOffset(0) + vdso::kVcClockMode));
  m->mode_ = mode == 1 ? "TSC" : mode == 2 ? "PVCLOCK" : "other";
  m->CopyIn(*snap);
  m->mirror_ = std::thread([raw = m.get()] { raw->Run(); });
  return m;
}

HostPageMirror::~HostPageMirror() {
  stop_.store(true);
  if (mirror_.joinable()) mirror_.join();
}

void HostPageMirror::CopyIn(const host::LiveSnapshot& snap) {
  const uint32_t seq = Load32(snap.time_page, 0);
  if (seq != last_seq_) {
    // The kernel's write protocol on our copy: odd seq in both records,
    // the data, even seq (the fences pair with the readers' smp_rmb()).
    for (int cs : {0, 1}) page_->Store(vdso::ClockDataOffset(cs), 4, seq - 1);
    std::atomic_thread_fence(std::memory_order_release);
    for (uint32_t off = 0; off + 8 <= snap.time_page.size(); off += 8) {
      if (off == vdso::ClockDataOffset(0) || off == vdso::ClockDataOffset(1)) {
        page_->Store(off + 4, 4, Load32(snap.time_page, off + 4));
        continue;  // Not the seq words.
      }
      page_->Store(off, 8, Load64(snap.time_page, off));
    }
    std::atomic_thread_fence(std::memory_order_release);
    for (int cs : {0, 1}) page_->Store(vdso::ClockDataOffset(cs), 4, seq);
    last_seq_ = seq;
  }
  if (snap.pvclock_page.empty()) return;
  const uint32_t version = Load32(snap.pvclock_page, vdso::kPvtiVersion);
  if (version == last_version_) return;
  // The hypervisor's protocol: odd version, the data, even version.
  const uint32_t pv = vdso::kPvclockPageOffset;
  page_->Store(pv, 4, version | 1);
  std::atomic_thread_fence(std::memory_order_release);
  for (uint32_t off = 8; off < 32; off += 8) {
    page_->Store(pv + off, 8, Load64(snap.pvclock_page, off));
  }
  std::atomic_thread_fence(std::memory_order_release);
  page_->Store(pv, 4, version & ~1u);
  last_version_ = version;
}

void HostPageMirror::Run() {
  while (!stop_.load(std::memory_order_relaxed)) {
    SleepFor(std::chrono::microseconds(1000));
    absl::StatusOr<host::LiveSnapshot> snap = host::TakeSnapshot(maps_);
    if (snap.ok()) CopyIn(*snap);
  }
}

}  // namespace vdsolab::bench
