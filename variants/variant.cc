#include "variants/variant.h"

#include <algorithm>

#include "absl/strings/str_format.h"

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
  if (own != nullptr && own->same_as >= 0) {
    // The kernel clock it stands for, through this function again for its
    // era's coarse clocks.
    return VariantSyscall(variant, ctx, tk, own->same_as, sc);
  }
  if (own != nullptr && own->kind == ClockKind::kVariantSyscall &&
      variant.syscall != nullptr) {
    return variant.syscall(clock, sc.cycles, ctx);
  }
  // The variant's kernel's syscall: before 6.15 its coarse clocks read
  // tk_xtime(), as its vDSO did. A patch sending the coarse clocks to the
  // syscall must get that era's answer, not 6.15's (whose coarse clock can
  // run a second ahead).
  if (!variant.semantics.coarse_from_coarse_nsec &&
      (clock == kClockRealtimeCoarse || clock == kClockMonotonicCoarse)) {
    timekeeper::SyscallContext era = sc;
    era.coarse_pre615 = true;
    return timekeeper::SysClockGettime(tk, clock, era);
  }
  return timekeeper::SysClockGettime(tk, clock, sc);
}

bool ServesFromPage(const Variant& variant, ClockId clock) {
  return std::find(variant.vdso_clocks.begin(), variant.vdso_clocks.end(),
                   clock) != variant.vdso_clocks.end();
}

std::string RawSyscallShare(const Measured& measured) {
  auto it = measured.clocks.find(kClockMonotonicRaw);
  const uint64_t total =
      it == measured.clocks.end()
          ? 0
          : it->second.page + it->second.syscall + it->second.page_errors;
  if (total == 0) return "MONOTONIC_RAW not called";
  std::string text =
      absl::StrFormat("MONOTONIC_RAW %.1f%% by the syscall (%d of %d calls)",
                      100.0 * static_cast<double>(it->second.syscall) /
                          static_cast<double>(total),
                      it->second.syscall, total);
  if (it->second.page_errors != 0) {
    absl::StrAppendFormat(&text, ", %d answered with an error by the vDSO",
                          it->second.page_errors);
  }
  return text;
}

}  // namespace vdsolab::variants
