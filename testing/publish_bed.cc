#include "testing/publish_bed.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "timekeeper/posix_clocks.h"

namespace vdsolab::testing {
namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "testing: %s\n", what.c_str());
  std::abort();
}

}  // namespace

PublishBed::PublishBed(const variants::Variant& variant,
                       const timekeeper::Clocksource& clock,
                       const variants::PublishContext& context, int hz)
    : variant_(variant), context_(context) {
  absl::StatusOr<std::unique_ptr<vdso::VvarPage>> page =
      vdso::VvarPage::Create();
  if (!page.ok()) Die(std::string(page.status().message()));
  page_ = *std::move(page);
  tk_ = std::make_unique<timekeeper::Timekeeping>(clock, hz, this);
}

void PublishBed::UpdateVsyscall(const timekeeper::Timekeeper& tk) {
  vdso::VvarUpdate update = variant_.build_update(tk, seq_, context_);
  seq_ += 2;
  last_update_ = update;
  if (queue) {
    pending_.push_back(std::move(update));
  } else {
    page_->Apply(update);
  }
}

FixedCounterHooks PublishBed::NewHooks(uint64_t counter) const {
  FixedCounterHooks hooks(counter);
  hooks.UseSyscallOf(&tk_->timekeeper());
  return hooks;
}

std::optional<ClockResult> PublishBed::Read(ClockId clock,
                                            FixedCounterHooks& hooks) {
  if (reader_ == nullptr) reader_ = variant_.make_sim_reader();
  vdso::HookedAccess access(page_->data(), &hooks);
  return reader_->Call(access, page_->data(), clock);
}

std::optional<ClockResult> PublishBed::Read(
    ClockId clock, uint64_t counter,
    std::function<void(size_t, uint32_t)> before_load) {
  hooks_ = std::make_unique<FixedCounterHooks>(NewHooks(counter));
  hooks_->before_load = std::move(before_load);
  return Read(clock, *hooks_);
}

ClockResult PublishBed::Syscall(ClockId clock, uint64_t counter) const {
  timekeeper::SyscallContext ctx;
  ctx.cycles = counter;
  return timekeeper::SysClockGettime(*tk_, clock, ctx);
}

timekeeper::Clocksource Tsc(uint32_t khz) {
  absl::StatusOr<timekeeper::Clocksource> tsc =
      timekeeper::MakeTscClocksource(khz);
  if (!tsc.ok()) Die(std::string(tsc.status().message()));
  return *tsc;
}

const variants::Variant& VariantNamed(
    const std::vector<const variants::Variant*>& variants,
    std::string_view name) {
  for (const variants::Variant* v : variants) {
    if (v->name == name) return *v;
  }
  Die("no variant " + std::string(name));
}

}  // namespace vdsolab::testing
