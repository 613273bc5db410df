// File: fuzz/tk_fuzz_machine.h
//
// The machine under the timekeeper fuzzer: several clocksources whose
// counters all run from one virtual time, so that a clocksource change, a
// suspend (the counters keep running, or stop, as the hardware's do) and
// the RTC agree on how much time passed. Each counter is
// base + elapsed_ns * frequency / 1e9, masked to its width; the remainder is
// carried, so no counter drifts from the others.
//
// Example:
//   FuzzMachine m;
//   m.Add(*tsc, 2600000000, /*base=*/0);
//   m.AdvanceCycles(10400000);   // On the active source, exactly.
//   uint64_t now = m.Counter();  // The active source's counter.

#ifndef VDSOLAB_FUZZ_TK_FUZZ_MACHINE_H_
#define VDSOLAB_FUZZ_TK_FUZZ_MACHINE_H_

#include <cstdint>
#include <vector>

#include "timekeeper/clocksource.h"

namespace vdsolab::fuzz {

class FuzzMachine {
 public:
  // Adds a clocksource running at `hz` whose counter reads `base` now.
  // The first one added is the active one. Returns its index.
  int Add(const timekeeper::Clocksource& cs, uint64_t hz, uint64_t base);

  // Moves time forward by exactly `cycles` of the active counter (the
  // others by the same time, to within a cycle).
  void AdvanceCycles(uint64_t cycles);
  // Moves time forward by `ns`.
  void AdvanceNs(uint64_t ns);
  // A suspend: time passes, counters that stop in suspend do not move.
  void Sleep(uint64_t ns);

  int active() const { return active_; }
  void set_active(int index) { active_ = index; }
  int size() const { return static_cast<int>(sources_.size()); }
  const timekeeper::Clocksource& source(int index) const {
    return sources_[static_cast<size_t>(index)].cs;
  }
  const timekeeper::Clocksource& source() const { return source(active_); }
  uint64_t hz() const { return sources_[static_cast<size_t>(active_)].hz; }
  // A counter's value now (masked to its width).
  uint64_t Counter(int index) const;
  uint64_t Counter() const { return Counter(active_); }
  // Virtual time since the machine started, including sleep.
  uint64_t elapsed_ns() const { return elapsed_ns_; }
  // Converts the active counter's cycles to ns, rounding down.
  uint64_t CyclesToNs(uint64_t cycles) const;
  uint64_t NsToCycles(uint64_t ns) const;

 private:
  struct Source {
    timekeeper::Clocksource cs;
    uint64_t hz = 0;
    uint64_t count = 0;  // Unmasked.
    uint64_t frac = 0;   // ns * hz not yet a whole cycle, < 1e9.
  };
  void Run(Source& s, uint64_t ns);

  std::vector<Source> sources_;
  int active_ = 0;
  uint64_t elapsed_ns_ = 0;
};

}  // namespace vdsolab::fuzz

#endif  // VDSOLAB_FUZZ_TK_FUZZ_MACHINE_H_
