// File: sim/settled_page.h
//
// sim/settled_answers.h for both strategies: a page of its own, on which
// the variant's update_vsyscall() of the validated state is published
// whole, and a fresh reader instance per question, whose hooks return the
// call's counter value and land no store.

#ifndef VDSOLAB_SIM_SETTLED_PAGE_H_
#define VDSOLAB_SIM_SETTLED_PAGE_H_

#include <memory>
#include <optional>

#include "sim/scenario.h"
#include "sim/settled_answers.h"
#include "sim/writer.h"
#include "variants/variant.h"
#include "vdso/vvar_page.h"

namespace vdsolab::sim {

class SettledPage final : public SettledAnswers {
 public:
  SettledPage(const Scenario& scenario, const variants::Variant& variant,
              const Writer& writer)
      : scenario_(scenario), variant_(variant), writer_(writer) {}
  std::optional<ClockResult> Answer(const CallRecord& call,
                                    const UpdateRecord& state) override;

 private:
  const Scenario& scenario_;
  const variants::Variant& variant_;
  const Writer& writer_;
  // Made at the first question (most runs ask none).
  std::unique_ptr<vdso::VvarPage> page_;
  bool unusable_ = false;  // The page could not be made.
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_SETTLED_PAGE_H_
