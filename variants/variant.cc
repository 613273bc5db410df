#include "variants/variant.h"

#include <algorithm>

namespace vdsolab::variants {

const ClockDef* FindOwnClock(const Variant& variant, ClockId clock) {
  for (const ClockDef& c : variant.own_clocks) {
    if (c.id == clock) return &c;
  }
  return nullptr;
}

std::string VariantClockName(const Variant& variant, ClockId clock) {
  if (const ClockDef* c = FindOwnClock(variant, clock)) {
    return std::string(c->name);
  }
  return ClockName(clock);
}

ClockResult VariantSyscall(const Variant& variant, const PublishContext& ctx,
                           const timekeeper::Timekeeper& tk, ClockId clock,
                           const timekeeper::SyscallContext& sc) {
  const ClockDef* own = FindOwnClock(variant, clock);
  if (own != nullptr && own->kind == ClockKind::kVariantSyscall &&
      variant.syscall != nullptr) {
    return variant.syscall(clock, sc.cycles, ctx);
  }
  return timekeeper::SysClockGettime(tk, clock, sc);
}

bool ServesFromPage(const Variant& variant, ClockId clock) {
  return std::find(variant.vdso_clocks.begin(), variant.vdso_clocks.end(),
                   clock) != variant.vdso_clocks.end();
}

}  // namespace vdsolab::variants
