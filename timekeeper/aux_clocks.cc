// The POSIX aux clocks (kernel/time/timekeeping.c, CONFIG_POSIX_AUX_CLOCKS,
// 6.17+): independent timekeepers on the core timekeeper's clocksource, each
// with its own NTP state and an offset instead of a REALTIME, enabled
// through /sys/kernel/time/aux_clocks/N/aux_clock_enable.

#include "common/clock_result.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/tk_internal.h"

namespace vdsolab::timekeeper {

using tk_internal::kTkUpdateAll;

// tk_aux_setup() / tkd_basic_setup(): every aux timekeeper has its id and
// is not valid until enabled.
void Timekeeping::SetupAux() {
  for (int i = 0; i < kMaxAuxTimekeepers; ++i) {
    Timekeeper tk;
    tk.id = kTimekeeperAuxFirst + i;
    tk.clock_valid = false;
    aux_[static_cast<size_t>(i)].emplace(
        TkData{tk, tk, Ntp(hz_, profile_.ntp, /*aux=*/true, ntp_tick_adj_)});
  }
}

Timekeeping::TkData* Timekeeping::Aux(int index) {
  if (index < 0 || index >= kMaxAuxTimekeepers) return nullptr;
  return &*aux_[static_cast<size_t>(index)];
}

const Timekeeping::TkData* Timekeeping::Aux(int index) const {
  if (index < 0 || index >= kMaxAuxTimekeepers) return nullptr;
  return &*aux_[static_cast<size_t>(index)];
}

// Models aux_clock_enable(): a fresh timekeeper on the core's raw
// clocksource, starting at 0 with no NTP correction.
void Timekeeping::EnableAux(int index, uint64_t now) {
  TkData* aux = Aux(index);
  if (!profile_.aux_clocks || aux == nullptr ||
      aux->shadow_timekeeper.clock_valid) {
    return;
  }
  TkData& tkd = *aux;
  Timekeeper& tks = tkd.shadow_timekeeper;
  const int id = tks.id;
  tks = Timekeeper{};  // Remove leftovers of a previous registration.
  tks.id = id;
  tks.clock_valid = false;
  SetupInternals(tks, core_.timekeeper.tkr_raw.clock, now);
  tks.clock_valid = true;
  UpdateFromShadow(tkd, kTkUpdateAll);
}

// Models aux_clock_disable(): published invalid, so readers fall back to
// the syscall, which answers -ENODEV.
void Timekeeping::DisableAux(int index) {
  TkData* aux = Aux(index);
  if (aux == nullptr || !aux->shadow_timekeeper.clock_valid) return;
  aux->shadow_timekeeper.clock_valid = false;
  UpdateFromShadow(*aux, kTkUpdateAll);
}

bool Timekeeping::AuxEnabled(int index) const {
  const TkData* aux = Aux(index);
  return aux != nullptr && aux->timekeeper.clock_valid;
}

// Models aux_clock_set(): clock_settime() on an aux clock becomes its
// offset from its own MONOTONIC.
int Timekeeping::AuxSetTime(int index, const Timespec64& ts, uint64_t now) {
  if (!tk_internal::Timespec64ValidSettod(ts)) return -kEinval;
  TkData* aux = Aux(index);
  if (aux == nullptr) return -kEinval;  // clockid_aux_valid()
  TkData& tkd = *aux;
  Timekeeper& tks = tkd.shadow_timekeeper;
  if (!tks.clock_valid) return -kEnodev;
  ForwardNow(tks, now);
  tk_internal::TkUpdateKtimeData(tks);
  const uint64_t nsecs =
      TimekeepingCyclesToNs(tks.tkr_mono, tks.tkr_mono.cycle_last);
  const Ktime tnow =
      static_cast<Ktime>(static_cast<uint64_t>(tks.tkr_mono.base) + nsecs);
  tk_internal::TkUpdateAuxOffs(tks, Timespec64ToKtime(ts) - tnow);
  UpdateFromShadow(tkd, kTkUpdateAll);
  return 0;
}

// Models aux_clock_adj(): __do_adjtimex() on the aux timekeeper.
int Timekeeping::AuxAdjtimex(int index, Timex* txc, uint64_t now) {
  TkData* aux = Aux(index);
  if (aux == nullptr) return -kEinval;
  return DoAdjtimex(*aux, txc, now);
}

// An index outside 0..7 reads aux clock 0 (callers validate ids first).
const Timekeeper& Timekeeping::aux_timekeeper(int index) const {
  const TkData* aux = Aux(index);
  return (aux != nullptr ? aux : Aux(0))->timekeeper;
}

const Ntp& Timekeeping::aux_ntp(int index) const {
  const TkData* aux = Aux(index);
  return (aux != nullptr ? aux : Aux(0))->ntp;
}

}  // namespace vdsolab::timekeeper
