#include "common/math64.h"
#include "timekeeper/clocksource.h"
#include "variants/gtod/trace_clock.h"
#include "variants/gtod/update_vsyscall.h"
#include "vdso/store_list.h"

namespace vdsolab::variants::gtod {

using vdso::StoreList;

int32_t VclockModeFrom(int32_t vdso_clock_mode) {
  switch (vdso_clock_mode) {
    case timekeeper::kVdsoClockmodeTsc:
      return kVclockTsc;
    case timekeeper::kVdsoClockmodePvclock:
      return kVclockPvclock;
    case timekeeper::kVdsoClockmodeHvclock:
      return kVclockHvclock;
    default:
      return kVclockNone;
  }
}

// Models update_vsyscall() (4.16) with the patches' additions.
vdso::VvarUpdate BuildUpdate416(const GtodFields& f,
                                const timekeeper::Timekeeper& tk, uint32_t seq,
                                const PublishContext& ctx) {
  StoreList out;
  const timekeeper::TkReadBase& mono = tk.tkr_mono;
  const timekeeper::TkReadBase& raw = tk.tkr_raw;
  const Timespec64& wtm = tk.wall_to_monotonic;

  // gtod_write_begin(): an odd seq tells readers a write is in progress;
  // the smp_wmb() pairs with the smp_rmb() in gtod_read_begin().
  out.U32(f.seq, seq + 1);
  out.Wmb();

  out.U32(f.vclock_mode,
          static_cast<uint32_t>(VclockModeFrom(mono.clock->vdso_clock_mode)));
  out.U64(f.cycle_last, mono.cycle_last);
  out.U64(f.mask, mono.mask);
  out.U32(f.mult, mono.mult);
  out.U32(f.shift, mono.shift);

  // Seeds 000/001: the raw clock's parameters.
  if (f.raw_cycle_last != kNoField) out.U64(f.raw_cycle_last, raw.cycle_last);
  if (f.raw_mask != kNoField) out.U64(f.raw_mask, raw.mask);
  if (f.raw_mult != kNoField) out.U32(f.raw_mult, raw.mult);
  if (f.raw_shift != kNoField) out.U32(f.raw_shift, raw.shift);
  // static_cpu_has(X86_FEATURE_RDTSCP); the calibrated tsc_khz.
  if (f.has_rdtscp != kNoField) out.U32(f.has_rdtscp, ctx.has_rdtscp ? 1 : 0);
  if (f.tsc_khz != kNoField) out.U32(f.tsc_khz, ctx.tsc_khz);

  out.U64(f.wall_time_sec, tk.xtime_sec);
  out.U64(f.wall_time_snsec, mono.xtime_nsec);

  // CLOCK_MONOTONIC in shifted ns, normalised with the kernel's loop.
  uint64_t mono_sec = tk.xtime_sec + static_cast<uint64_t>(wtm.tv_sec);
  uint64_t mono_snsec =
      mono.xtime_nsec + (static_cast<uint64_t>(wtm.tv_nsec) << mono.shift);
  NormaliseShiftedNsec(&mono_sec, &mono_snsec, mono.shift);
  out.U64(f.monotonic_time_sec, mono_sec);
  out.U64(f.monotonic_time_snsec, mono_snsec);

  // The coarse clocks: xtime_nsec >> shift at this update (before 6.15's
  // coarse_nsec), in plain ns.
  const uint64_t coarse_nsec = mono.xtime_nsec >> mono.shift;
  out.U64(f.wall_time_coarse_sec, tk.xtime_sec);
  out.U64(f.wall_time_coarse_nsec, coarse_nsec);
  uint64_t mono_coarse_sec = tk.xtime_sec + static_cast<uint64_t>(wtm.tv_sec);
  uint64_t mono_coarse_nsec = coarse_nsec + static_cast<uint64_t>(wtm.tv_nsec);
  NormaliseShiftedNsec(&mono_coarse_sec, &mono_coarse_nsec, 0);
  out.U64(f.monotonic_time_coarse_sec, mono_coarse_sec);
  out.U64(f.monotonic_time_coarse_nsec, mono_coarse_nsec);

  // Seeds 000/001: CLOCK_MONOTONIC_RAW at cycle_last, ns << raw shift.
  if (f.monotonic_time_raw_sec != kNoField) {
    out.U64(f.monotonic_time_raw_sec, tk.raw_sec);
    out.U64(f.monotonic_time_raw_nsec, raw.xtime_nsec);
  }

  // Seed 002: cpu_khz >> CYC2NS_SCALE_FACTOR and _trace_clock_is_sync.
  if (f.cpu_khz != kNoField) {
    out.U64(f.cpu_khz, TraceClockScaledKhz(ctx.tsc_khz));
  }
  if (f.trace_clock_is_sync != kNoField) {
    out.U32(f.trace_clock_is_sync, ctx.counters_synced ? 1 : 0);
  }

  // gtod_write_end(): the smp_wmb() pairs with the smp_rmb() in
  // gtod_read_retry(); an even seq marks the data consistent.
  out.Wmb();
  out.U32(f.seq, seq + 2);
  return out.Take();
}

}  // namespace vdsolab::variants::gtod
