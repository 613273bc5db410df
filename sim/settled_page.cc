#include "sim/settled_page.h"

#include "sim/engine.h"
#include "timekeeper/timens.h"
#include "vdso/access.h"

namespace vdsolab::sim {
namespace {

// Nothing happens between the reader's steps: no store lands, time does
// not matter, and every counter read returns the value the call read.
class SettledHooks final : public vdso::AccessHooks {
 public:
  SettledHooks(uint64_t counter, uint32_t budget)
      : counter_(counter), budget_(budget) {}
  void BeforeLoad(uint32_t /*page_offset*/, uint32_t /*size*/) override {}
  uint64_t ReadCounter(vdso::CounterRead /*kind*/) override { return counter_; }
  bool MayRetry() override { return ++iterations_ <= budget_; }
  ClockResult Fallback(ClockId /*clock*/) override {
    answered_ = false;
    return ClockResult::Error(-kEnosys);
  }
  void OnFault(const vdso::CallFault& /*fault*/) override { answered_ = false; }
  bool answered() const { return answered_; }

 private:
  uint64_t counter_;
  uint32_t budget_;
  uint32_t iterations_ = 0;
  bool answered_ = true;
};

}  // namespace

std::optional<ClockResult> SettledPage::Answer(const CallRecord& call,
                                               const UpdateRecord& state) {
  // kvm-clock scales the TSC with a pvclock page this page lacks; a
  // state's id is 1 or more (update 1 publishes seq 2).
  if (unusable_ || writer_.hypervisor() != nullptr || !call.read_counter ||
      call.pvclock_read || state.id == 0 ||
      state.source != CounterSource::kMachine) {
    return std::nullopt;
  }
  if (page_ == nullptr) {
    const bool timens = UsesTimens(scenario_);
    absl::StatusOr<std::unique_ptr<vdso::VvarPage>> page =
        timens ? vdso::VvarPage::CreateWithTimensView()
               : vdso::VvarPage::Create();
    if (!page.ok()) {
      unusable_ = true;
      return std::nullopt;
    }
    page_ = std::move(*page);
    if (timens) {
      page_->ApplyTimens(variant_.build_timens_page(
          timekeeper::TimensOffsets{scenario_.kernel.timens_monotonic,
                                    scenario_.kernel.timens_boottime}));
    }
  }
  // A reader of its own each time: what one question's call leaves in a
  // reader instance must not answer the next (a plugin's process-wide
  // statics are its own, which docs/plugins.md rules out).
  const std::unique_ptr<variants::SimReader> reader =
      variant_.make_sim_reader();
  // Every field update_vsyscall() writes, and the seq the state left: an
  // update on seq S leaves S + 2, and update N's state has seq 2N.
  page_->Apply(variant_.build_update(state.tk, 2 * (state.id - 1),
                                     writer_.publish_context()));
  SettledHooks hooks(call.counter, scenario_.checks.livelock_budget);
  vdso::HookedAccess access =
      call.timens ? vdso::HookedAccess(page_->data(), &hooks,
                                       page_->timens_data(), page_->size())
                  : vdso::HookedAccess(page_->data(), &hooks);
  const std::optional<ClockResult> answer = reader->Call(
      access, call.timens ? page_->timens_data() : page_->data(), call.clock);
  if (!answer || !hooks.answered()) return std::nullopt;
  return answer;
}

}  // namespace vdsolab::sim
