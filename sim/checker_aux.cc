// The checker's exact and torn properties for the 6.17+ aux clocks
// (sim/checker.h): an aux clock's page state is one publication of its own
// record (seq / 2 numbers it), not a core update.

#include "absl/strings/str_format.h"
#include "sim/aux_oracle.h"
#include "sim/checker.h"
#include "sim/checker_internal.h"

namespace vdsolab::sim {

bool Checker::AuxPublicationGives(const CallRecord& call) const {
  if (!call.read_counter) return false;
  const ClockResult& got = *call.result;
  for (const AuxRecord& r : writer_->AuxUpdates(call.clock - kClockAux)) {
    if (r.start_ns > call.end_ns) break;
    if (AuxVdso(r.tk, call.counter) == got ||
        AuxSyscall(r.tk, call.counter) == got) {
      return true;
    }
  }
  return false;
}

const AuxRecord* Checker::CheckAuxExactAndTorn(const CallRecord& call) {
  const int aux = call.clock - kClockAux;
  const AuxRecord* state = (call.begin_seq & 1) == 0
                               ? writer_->AuxUpdate(aux, call.begin_seq / 2)
                               : nullptr;
  if (!call.read_counter) return state;
  const ClockResult& got = *call.result;
  bool validated_gives_it = false;
  if (scenario_.checks.exact && state != nullptr) {
    PropertyStats& s = stats_[static_cast<int>(Property::kExact) - 1];
    ++s.checked;
    const ClockResult want = AuxSyscall(state->tk, call.counter);
    const ClockResult vdso = AuxVdso(state->tk, call.counter);
    validated_gives_it = got == want || got == vdso;
    if (!(got == want)) {
      Report(Property::kExact,
             got == vdso ? Verdict::kKnownKernel : Verdict::kDefect,
             got == vdso ? kAuxTruncationWhy
                         : ArithmeticWhy(),
             absl::StrFormat("%s: vDSO %s, syscall %s at counter %#x (aux "
                             "record publication %d, seq %d)",
                             Name(call.clock), FormatClockResult(got),
                             FormatClockResult(want), call.counter,
                             state->number, call.begin_seq),
             call);
    }
  }
  if (scenario_.checks.torn) {
    PropertyStats& s = stats_[static_cast<int>(Property::kTorn) - 1];
    ++s.checked;
    bool found = validated_gives_it;
    for (const AuxRecord& r : writer_->AuxUpdates(aux)) {
      if (found) break;
      // Publications current at some point of the call.
      if (r.start_ns > call.end_ns) break;
      found = AuxVdso(r.tk, call.counter) == got ||
              AuxSyscall(r.tk, call.counter) == got;
    }
    if (!found) {
      Report(Property::kTorn, Verdict::kDefect,
             "mixed fields of different page states",
             absl::StrFormat("%s returned %s at counter %#x; no publication "
                             "of its record gives that",
                             Name(call.clock), FormatClockResult(got),
                             call.counter),
             call);
    }
  }
  return state;
}

}  // namespace vdsolab::sim
