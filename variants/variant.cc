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

bool ServesFromPage(const Variant& variant, ClockId clock) {
  return std::find(variant.vdso_clocks.begin(), variant.vdso_clocks.end(),
                   clock) != variant.vdso_clocks.end();
}

}  // namespace vdsolab::variants
