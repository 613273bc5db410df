// File: sim/settled_answers.h
//
// A wrong answer from a call that raced an update is torn only if the race
// made it. The same call on a page that holds the state it validated, whole
// (no store landing), with the counter value it read, may give the same
// wrong answer: then the reader's arithmetic made it, which the exact check
// reports, and calling it torn too sent users looking for a missing
// barrier. The checker asks this of a call it would report torn (with the
// exact check on, for a validated state current during the call); both
// strategies answer with sim/settled_page.h.

#ifndef VDSOLAB_SIM_SETTLED_ANSWERS_H_
#define VDSOLAB_SIM_SETTLED_ANSWERS_H_

#include <optional>

#include "common/clock_result.h"
#include "sim/call.h"
#include "sim/writer.h"

namespace vdsolab::sim {

class SettledAnswers {
 public:
  virtual ~SettledAnswers() = default;
  // The variant's answer to `call` (its clock, namespace and counter value)
  // on a page holding `state` whole; nullopt when that cannot be told (the
  // call fell back, faulted or kept looping there; a kvm-clock machine).
  virtual std::optional<ClockResult> Answer(const CallRecord& call,
                                            const UpdateRecord& state) = 0;
};

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_SETTLED_ANSWERS_H_
