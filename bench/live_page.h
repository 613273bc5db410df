// File: bench/live_page.h
//
// Pages the native readers run on while they are measured, kept current
// the way the kernel keeps the vvar page current:
//
// - LiveVariantPage: the timekeeper model on a TSC clocksource at the
//   measured TSC frequency, ticked at HZ from the real TSC by a background
//   thread, publishing through a variant's writer (its layout, its seq
//   protocol). Every variant's native reader runs on its own.
// - HostPageMirror: the host's live time page and pvclock page, copied into
//   a vdsolab page under the seq protocol every millisecond, so vdsolab's
//   upstream reader runs on exactly what the host's vDSO reads.

#ifndef VDSOLAB_BENCH_LIVE_PAGE_H_
#define VDSOLAB_BENCH_LIVE_PAGE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"
#include "host/live_vvar.h"
#include "timekeeper/timekeeping.h"
#include "variants/variant.h"
#include "vdso/vvar_page.h"

namespace vdsolab::bench {

class LiveVariantPage final : public timekeeper::VsyscallSink {
 public:
  static absl::StatusOr<std::unique_ptr<LiveVariantPage>> Start(
      const variants::Variant& variant, uint32_t tsc_khz, int hz = 250);
  ~LiveVariantPage() override;

  const uint8_t* data() const { return page_->data(); }
  // update_vsyscall(): the variant's stores, in order, onto the page.
  void UpdateVsyscall(const timekeeper::Timekeeper& tk) override;

 private:
  LiveVariantPage() = default;
  void Run(int hz);

  const variants::Variant* variant_ = nullptr;
  variants::PublishContext ctx_;
  uint32_t seq_ = 0;
  std::unique_ptr<vdso::VvarPage> page_;
  std::unique_ptr<timekeeper::Clocksource> clocksource_;
  std::unique_ptr<timekeeper::Timekeeping> tk_;
  std::atomic<bool> stop_{false};
  std::thread ticker_;
};

class HostPageMirror {
 public:
  // Fails where `vdsolab inspect` would (no [vvar], unknown layout, ...).
  static absl::StatusOr<std::unique_ptr<HostPageMirror>> Start();
  ~HostPageMirror();

  const uint8_t* data() const { return page_->data(); }
  const std::string& clock_mode() const { return mode_; }

 private:
  HostPageMirror() = default;
  void CopyIn(const host::LiveSnapshot& snap);
  void Run();

  host::VdsoMappings maps_;
  std::unique_ptr<vdso::VvarPage> page_;
  std::string mode_;
  uint32_t last_seq_ = 0;
  uint32_t last_version_ = 0;
  std::atomic<bool> stop_{false};
  std::thread mirror_;
};

}  // namespace vdsolab::bench

#endif  // VDSOLAB_BENCH_LIVE_PAGE_H_
