// File: fuzz/tk_fuzz_machine.cc

#include "fuzz/tk_fuzz_machine.h"

#include <cstdint>

namespace vdsolab::fuzz {
namespace {
constexpr uint64_t kNsPerSec = 1000000000;
}  // namespace

int FuzzMachine::Add(const timekeeper::Clocksource& cs, uint64_t hz,
                     uint64_t base) {
  sources_.push_back(Source{cs, hz, base, 0});
  return size() - 1;
}

void FuzzMachine::Run(Source& s, uint64_t ns) {
  const unsigned __int128 total =
      static_cast<unsigned __int128>(ns) * s.hz + s.frac;
  s.count += static_cast<uint64_t>(total / kNsPerSec);
  s.frac = static_cast<uint64_t>(total % kNsPerSec);
}

void FuzzMachine::AdvanceCycles(uint64_t cycles) {
  // The others move by the whole ns those cycles take (less than 1 ns
  // behind per step: immaterial to a timekeeper that reads one counter).
  const uint64_t ns = CyclesToNs(cycles);
  Source& a = sources_[static_cast<size_t>(active_)];
  for (Source& s : sources_) {
    if (&s != &a) Run(s, ns);
  }
  a.count += cycles;
  elapsed_ns_ += ns;
}

void FuzzMachine::AdvanceNs(uint64_t ns) {
  for (Source& s : sources_) Run(s, ns);
  elapsed_ns_ += ns;
}

void FuzzMachine::Sleep(uint64_t ns) {
  for (Source& s : sources_) {
    if (s.cs.suspend_nonstop) Run(s, ns);
  }
  elapsed_ns_ += ns;
}

uint64_t FuzzMachine::Counter(int index) const {
  const Source& s = sources_[static_cast<size_t>(index)];
  return s.count & s.cs.mask;
}

uint64_t FuzzMachine::CyclesToNs(uint64_t cycles) const {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(cycles) *
                               kNsPerSec / hz());
}

uint64_t FuzzMachine::NsToCycles(uint64_t ns) const {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(ns) * hz() /
                               kNsPerSec);
}

}  // namespace vdsolab::fuzz
