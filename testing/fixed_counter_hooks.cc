#include "testing/fixed_counter_hooks.h"

namespace vdsolab::testing {

void FixedCounterHooks::BeforeLoad(uint32_t offset, uint32_t size) {
  if (before_load) before_load(accesses_.size(), offset);
  accesses_.push_back(Access{true, offset, size, vdso::CounterRead::kOrdered});
}

uint64_t FixedCounterHooks::ReadCounter(vdso::CounterRead kind) {
  accesses_.push_back(Access{false, 0, 0, kind});
  return counter;
}

bool FixedCounterHooks::MayRetry() { return ++retries_ <= retry_budget; }

ClockResult FixedCounterHooks::Fallback(ClockId clock) {
  fallbacks_.push_back(clock);
  if (tk_ == nullptr) return ClockResult::Error(-kEinval);
  timekeeper::SyscallContext ctx = context_;
  ctx.cycles = counter;
  return timekeeper::SysClockGettime(*tk_, clock, ctx);
}

std::vector<uint32_t> FixedCounterHooks::load_offsets() const {
  std::vector<uint32_t> out;
  for (const Access& a : accesses_) {
    if (a.is_load) out.push_back(a.offset);
  }
  return out;
}

std::vector<vdso::CounterRead> FixedCounterHooks::counter_reads() const {
  std::vector<vdso::CounterRead> out;
  for (const Access& a : accesses_) {
    if (!a.is_load) out.push_back(a.read);
  }
  return out;
}

size_t FixedCounterHooks::loads_before_counter() const {
  size_t loads = 0;
  for (const Access& a : accesses_) {
    if (!a.is_load) break;
    ++loads;
  }
  return loads;
}

std::vector<std::string> FixedCounterHooks::Described(
    const std::function<std::string(uint32_t offset)>& name_of) const {
  std::vector<std::string> out;
  for (const Access& a : accesses_) {
    out.push_back(a.is_load ? name_of(a.offset) : "COUNTER");
  }
  return out;
}

std::vector<std::string> FixedCounterHooks::Described(
    const variants::Layout& layout) const {
  return Described(
      [&layout](uint32_t offset) { return layout.DescribeOffset(offset); });
}

void FixedCounterHooks::Reset() {
  accesses_.clear();
  fallbacks_.clear();
  retries_ = 0;
}

}  // namespace vdsolab::testing
