#include "variants/perf/perf_mmap_writer.h"

#include "common/math64.h"
#include "timekeeper/clocksource.h"
#include "variants/perf/perf_mmap_page.h"
#include "vdso/store_list.h"

namespace vdsolab::variants::perf {
namespace {

using vdso::StoreList;

inline constexpr uint32_t kNsecPerMsec = 1000000;  // NSEC_PER_MSEC

// local_clock() when the modelled event was enabled: boot, where the
// boot-time cyc2ns offset makes it 0.
inline constexpr uint64_t kEventEnabledAt = 0;

// mul_u64_u32_shr() for x86-64: the 128-bit product, shifted.
uint64_t MulU64U32Shr(uint64_t a, uint32_t mul, uint32_t shift) {
  return MulU64U32AddU64Shr(a, mul, 0, shift);
}

// arch_perf_update_userpage() (x86, 4.x-6.18). The cap_* bitfield
// assignments are read-modify-writes of the capabilities word: each is
// one store of the whole word here.
void ArchPerfUpdateUserpage(StoreList& out, const PublishContext& ctx,
                            uint64_t now) {
  // perf_event_init_userpage() set cap_bit0_is_deprecated at mmap() time;
  // the bitfield writes below keep it.
  uint64_t caps = kCapBit0IsDeprecated;
  // cap_user_time = cap_user_time_zero = 0; cap_user_rdpmc = 0 (no
  // PERF_EVENT_FLAG_USER_READ_CNT on the modelled event).
  out.U64(kPcCapabilities, caps);
  out.U16(kPcPmcWidth, kX86CntvalBits);
  if (!UserTimeAvailable(ctx)) return;

  // cyc2ns_read_begin(): the boot-time scale (never recalibrated here).
  const Cyc2nsData data = SetCyc2nsScale(ctx.tsc_khz, ctx.boot_counter);
  const uint64_t offset = data.cyc2ns_offset + kSchedClockOffset;

  caps |= kCapUserTime;
  out.U64(kPcCapabilities, caps);
  out.U32(kPcTimeMult, data.cyc2ns_mul);
  // cyc2ns_shift <= 31 (the shift-32 clamp), so the u16 holds it.
  out.U16(kPcTimeShift, static_cast<uint16_t>(data.cyc2ns_shift));
  out.U64(kPcTimeOffset, offset - now);  // u64 wrap, as the kernel's.
  // !event->attr.use_clockid: the modelled event uses perf's own clock.
  caps |= kCapUserTimeZero;
  out.U64(kPcCapabilities, caps);
  out.U64(kPcTimeZero, offset);
}

}  // namespace

// Models __set_cyc2ns_scale() (arch/x86/kernel/tsc.c, 2019+ with the
// shift-32 clamp) as cyc2ns_init_boot_cpu() calls it.
Cyc2nsData SetCyc2nsScale(uint32_t khz, uint64_t tsc_now) {
  Cyc2nsData data;
  // set_cyc2ns_scale() leaves the zeroed data alone without a frequency.
  if (khz == 0) return data;
  // cycles_2_ns(tsc_now) on the zeroed boot data: 0 + (tsc_now * 0 >> 0).
  const uint64_t ns_now = 0;
  // maxsec 0: no headroom, so mult may use all 32 bits.
  timekeeper::ClocksCalcMultShift(&data.cyc2ns_mul, &data.cyc2ns_shift, khz,
                                  kNsecPerMsec, 0);
  // The perf page's documented conversion shifted a 32-bit value: keep
  // time_shift <= 31 (the halved mult loses its low bit, as in the kernel).
  if (data.cyc2ns_shift == 32) {
    data.cyc2ns_shift = 31;
    data.cyc2ns_mul >>= 1;
  }
  // Continuity at tsc_now: sched_clock() reads ns_now there.
  data.cyc2ns_offset =
      ns_now - MulU64U32Shr(tsc_now, data.cyc2ns_mul, data.cyc2ns_shift);
  return data;
}

// Models cycles_2_ns() / __cycles_2_ns() (arch/x86/kernel/tsc.c).
uint64_t Cycles2Ns(const Cyc2nsData& data, uint64_t cyc) {
  return data.cyc2ns_offset +
         MulU64U32Shr(cyc, data.cyc2ns_mul, data.cyc2ns_shift);
}

bool UserTimeAvailable(const PublishContext& ctx) {
  return ctx.tsc_khz != 0 && ctx.counters_synced;
}

// Models perf_event_update_userpage() (kernel/events/core.c, 4.x-6.18).
vdso::VvarUpdate BuildPerfUpdate(const timekeeper::Timekeeper& tk, uint32_t seq,
                                 const PublishContext& ctx) {
  // calc_timer_values(): now = perf_clock() = local_clock(), which with a
  // stable TSC sched clock is cycles_2_ns(rdtsc()) + __sched_clock_offset;
  // modelled at the update's counter (cycle_last).
  const Cyc2nsData data = SetCyc2nsScale(ctx.tsc_khz, ctx.boot_counter);
  const uint64_t now =
      Cycles2Ns(data, tk.tkr_mono.cycle_last) + kSchedClockOffset;
  // Enabled at boot and never descheduled.
  const uint64_t enabled = now - kEventEnabledAt;
  const uint64_t running = enabled;

  StoreList out;
  // ++userpg->lock; barrier(). The barrier pairs with the reader's
  // barrier() after it loads lock. It is only a compiler barrier: the
  // kernel updates the page from the CPU the self-monitoring task runs on
  // (schedule-in, IPI, NMI), so the reader never interleaves with it.
  out.U32(kPcLock, seq + 1);
  out.Wmb();  // barrier()
  if (seq == 0) {
    // perf_event_init_userpage() ran at mmap() time, before any update;
    // folded into the first update so every store is under the lock.
    out.U32(kPcSize, kPcHeaderSize);
  }
  out.U32(kPcIndex, 0);   // perf_event_index(): no user rdpmc.
  out.U64(kPcOffset, 0);  // perf_event_count(): the count is not modelled.
  out.U64(kPcTimeEnabled, enabled);
  out.U64(kPcTimeRunning, running);
  ArchPerfUpdateUserpage(out, ctx, now);
  // barrier(); ++userpg->lock. Pairs with the reader's barrier() before
  // its second load of lock.
  out.Wmb();  // barrier()
  out.U32(kPcLock, seq + 2);
  return out.Take();
}

}  // namespace vdsolab::variants::perf
