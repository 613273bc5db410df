#include "common/clockid.h"
#include "common/math64.h"
#include "variants/gtod/update_vsyscall.h"
#include "vdso/store_list.h"

namespace vdsolab::variants::gtod {

using vdso::StoreList;

namespace {

void Base(StoreList& out, const Gtod420Fields& f, ClockId clk, uint64_t sec,
          uint64_t nsec) {
  out.U64(f.BasetimeSec(clk), sec);
  out.U64(f.BasetimeNsec(clk), nsec);
}

}  // namespace

// Models update_vsyscall() (4.20) with seed 003's additions.
vdso::VvarUpdate BuildUpdate420(const Gtod420Fields& f,
                                const timekeeper::Timekeeper& tk, uint32_t seq,
                                const PublishContext& /*ctx*/) {
  StoreList out;
  const timekeeper::TkReadBase& mono = tk.tkr_mono;
  const Timespec64& wtm = tk.wall_to_monotonic;

  // gtod_write_begin(): the smp_wmb() pairs with gtod_read_begin()'s
  // smp_rmb().
  out.U32(f.seq, seq + 1);
  out.Wmb();

  out.U32(f.vclock_mode,
          static_cast<uint32_t>(VclockModeFrom(mono.clock->vdso_clock_mode)));
  out.U64(f.cycle_last, mono.cycle_last);
  out.U64(f.mask, mono.mask);
  out.U32(f.mult, mono.mult);
  out.U32(f.shift, mono.shift);
  if (f.raw_mult != kNoField) {  // Seed 003.
    out.U32(f.raw_mult, tk.tkr_raw.mult);
    out.U32(f.raw_shift, tk.tkr_raw.shift);
  }

  Base(out, f, kClockRealtime, tk.xtime_sec, mono.xtime_nsec);
  Base(
      out, f, kClockTai,
      tk.xtime_sec + static_cast<uint64_t>(static_cast<int64_t>(tk.tai_offset)),
      mono.xtime_nsec);

  uint64_t sec = tk.xtime_sec + static_cast<uint64_t>(wtm.tv_sec);
  uint64_t nsec =
      mono.xtime_nsec + (static_cast<uint64_t>(wtm.tv_nsec) << mono.shift);
  NormaliseShiftedNsec(&sec, &nsec, mono.shift);
  Base(out, f, kClockMonotonic, sec, nsec);

  if (f.raw_mult != kNoField) {  // Seed 003: {raw_sec, tkr_raw.xtime_nsec}.
    Base(out, f, kClockMonotonicRaw, tk.raw_sec, tk.tkr_raw.xtime_nsec);
  }

  // Coarse: xtime_nsec >> shift at this update, in plain ns.
  const uint64_t coarse_nsec = mono.xtime_nsec >> mono.shift;
  Base(out, f, kClockRealtimeCoarse, tk.xtime_sec, coarse_nsec);
  sec = tk.xtime_sec + static_cast<uint64_t>(wtm.tv_sec);
  nsec = coarse_nsec + static_cast<uint64_t>(wtm.tv_nsec);
  NormaliseShiftedNsec(&sec, &nsec, 0);
  Base(out, f, kClockMonotonicCoarse, sec, nsec);

  // gtod_write_end(): the smp_wmb() pairs with gtod_read_retry()'s
  // smp_rmb().
  out.Wmb();
  out.U32(f.seq, seq + 2);
  return out.Take();
}

}  // namespace vdsolab::variants::gtod
