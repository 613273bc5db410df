#include "timekeeper/vsyscall.h"

#include "common/clockid.h"
#include "common/math64.h"
#include "vdso/datapage.h"
#include "vdso/store_list.h"

namespace vdsolab::timekeeper {
namespace {

using vdso::ClockDataOffset;
using vdso::kCsHresCoarse;
using vdso::kCsRaw;
using vdso::StoreList;
using vdso::VcBasetimeNsec;
using vdso::VcBasetimeSec;

// One clock's basetime[idx] in vdso_clock cs.
void Timestamp(StoreList& out, int cs, int idx, uint64_t sec, uint64_t nsec) {
  out.U64(ClockDataOffset(cs) + VcBasetimeSec(idx), sec);
  out.U64(ClockDataOffset(cs) + VcBasetimeNsec(idx), nsec);
}

// fill_clock_configuration().
void FillClockConfiguration(StoreList& out, int cs, const TkReadBase& base) {
  const uint32_t vc = ClockDataOffset(cs);
  out.U64(vc + vdso::kVcCycleLast, base.cycle_last);
  out.U64(vc + vdso::kVcMaxCycles, base.clock->max_cycles);
  out.U64(vc + vdso::kVcMask, base.mask);
  out.U32(vc + vdso::kVcMult, base.mult);
  out.U32(vc + vdso::kVcShift, base.shift);
}

// update_vdso_time_data(): the parts only a vDSO-capable clocksource needs.
void UpdateVdsoTimeData(StoreList& out, const Timekeeper& tk,
                        bool boottime_shift_overflow) {
  FillClockConfiguration(out, kCsHresCoarse, tk.tkr_mono);
  FillClockConfiguration(out, kCsRaw, tk.tkr_raw);

  const uint32_t shift = tk.tkr_mono.shift;

  // CLOCK_MONOTONIC: xtime + wall_to_monotonic, in shifted ns.
  uint64_t sec =
      tk.xtime_sec + static_cast<uint64_t>(tk.wall_to_monotonic.tv_sec);
  uint64_t nsec = tk.tkr_mono.xtime_nsec;
  nsec += static_cast<uint64_t>(tk.wall_to_monotonic.tv_nsec) << shift;
  NormaliseShiftedNsec(&sec, &nsec, shift);
  Timestamp(out, kCsHresCoarse, kClockMonotonic, sec, nsec);

  // CLOCK_BOOTTIME: MONOTONIC + monotonic_to_boot.
  if (boottime_shift_overflow) {
    // 5.3: wall_to_monotonic.tv_nsec + offs_boot as one ns count, shifted
    // in u64 (kernel/time/vsyscall.c before b99328a60a48).
    sec = tk.xtime_sec + static_cast<uint64_t>(tk.wall_to_monotonic.tv_sec);
    nsec = tk.tkr_mono.xtime_nsec +
           (static_cast<uint64_t>(tk.wall_to_monotonic.tv_nsec + tk.offs_boot)
            << shift);
  } else {
    sec += static_cast<uint64_t>(tk.monotonic_to_boot.tv_sec);
    nsec += static_cast<uint64_t>(tk.monotonic_to_boot.tv_nsec) << shift;
  }
  NormaliseShiftedNsec(&sec, &nsec, shift);
  Timestamp(out, kCsHresCoarse, kClockBoottime, sec, nsec);

  // CLOCK_MONOTONIC_RAW.
  Timestamp(out, kCsRaw, kClockMonotonicRaw, tk.raw_sec, tk.tkr_raw.xtime_nsec);

  // CLOCK_TAI.
  Timestamp(
      out, kCsHresCoarse, kClockTai,
      tk.xtime_sec + static_cast<uint64_t>(static_cast<int64_t>(tk.tai_offset)),
      tk.tkr_mono.xtime_nsec);
}

}  // namespace

// Models update_vsyscall() with vdso_write_begin()/vdso_write_end().
vdso::VvarUpdate BuildUpdateVsyscall(const Timekeeper& tk, uint32_t seq_hres,
                                     uint32_t seq_raw, uint32_t hrtimer_res,
                                     bool boottime_shift_overflow) {
  StoreList out;
  const uint32_t hres = ClockDataOffset(kCsHresCoarse);
  const uint32_t raw = ClockDataOffset(kCsRaw);

  // vdso_write_begin(): odd seq tells readers a write is in progress. The
  // smp_wmb() after it pairs with the smp_rmb() in the readers'
  // vdso_read_begin().
  out.U32(hres + vdso::kVcSeq, seq_hres + 1);
  out.U32(raw + vdso::kVcSeq, seq_raw + 1);
  out.Wmb();

  const int32_t clock_mode = tk.tkr_mono.clock->vdso_clock_mode;
  out.U32(hres + vdso::kVcClockMode, static_cast<uint32_t>(clock_mode));
  out.U32(raw + vdso::kVcClockMode, static_cast<uint32_t>(clock_mode));

  // CLOCK_REALTIME is always written: time() needs it.
  Timestamp(out, kCsHresCoarse, kClockRealtime, tk.xtime_sec,
            tk.tkr_mono.xtime_nsec);
  // CLOCK_REALTIME_COARSE, in plain ns.
  Timestamp(out, kCsHresCoarse, kClockRealtimeCoarse, tk.xtime_sec,
            tk.coarse_nsec);
  // CLOCK_MONOTONIC_COARSE.
  uint64_t nsec = tk.coarse_nsec;
  nsec += static_cast<uint64_t>(tk.wall_to_monotonic.tv_nsec);
  uint64_t rem = 0;
  const uint32_t carry =
      IterDivU64Rem(nsec, static_cast<uint32_t>(kNsecPerSec), &rem);
  Timestamp(
      out, kCsHresCoarse, kClockMonotonicCoarse,
      tk.xtime_sec + static_cast<uint64_t>(tk.wall_to_monotonic.tv_sec) + carry,
      rem);

  // Read without the seq by clock_getres(): WRITE_ONCE().
  out.U32(vdso::kHrtimerRes, hrtimer_res);

  // A clocksource the vDSO cannot read leaves the hres parts stale.
  if (clock_mode != kVdsoClockmodeNone) {
    UpdateVdsoTimeData(out, tk, boottime_shift_overflow);
  }

  // vdso_write_end(): the smp_wmb() pairs with the smp_rmb() in the
  // readers' vdso_read_retry(); even seq marks the data consistent.
  out.Wmb();
  out.U32(hres + vdso::kVcSeq, seq_hres + 2);
  out.U32(raw + vdso::kVcSeq, seq_raw + 2);
  return out.Take();
}

// Models vdso_time_update_aux() with vdso_write_begin_clock() /
// vdso_write_end_clock().
vdso::VvarUpdate BuildUpdateAux(const Timekeeper& tk, uint32_t seq) {
  StoreList out;
  const uint32_t vc = vdso::AuxClockDataOffset(tk.id - kTimekeeperAuxFirst);
  int32_t clock_mode = tk.tkr_mono.clock != nullptr
                           ? tk.tkr_mono.clock->vdso_clock_mode
                           : kVdsoClockmodeNone;
  if (!tk.clock_valid) clock_mode = kVdsoClockmodeNone;

  out.U32(vc + vdso::kVcSeq, seq + 1);
  out.Wmb();
  out.U32(vc + vdso::kVcClockMode, static_cast<uint32_t>(clock_mode));
  if (clock_mode != kVdsoClockmodeNone) {
    out.U64(vc + vdso::kVcCycleLast, tk.tkr_mono.cycle_last);
    out.U64(vc + vdso::kVcMaxCycles, tk.tkr_mono.clock->max_cycles);
    out.U64(vc + vdso::kVcMask, tk.tkr_mono.mask);
    out.U32(vc + vdso::kVcMult, tk.tkr_mono.mult);
    out.U32(vc + vdso::kVcShift, tk.tkr_mono.shift);
    const uint32_t shift = tk.tkr_mono.shift;
    uint64_t sec =
        tk.xtime_sec + static_cast<uint64_t>(tk.monotonic_to_aux.tv_sec);
    uint64_t nsec = tk.tkr_mono.xtime_nsec >> shift;
    nsec += static_cast<uint64_t>(tk.monotonic_to_aux.tv_nsec);
    uint64_t rem = 0;
    sec += IterDivU64Rem(nsec, static_cast<uint32_t>(kNsecPerSec), &rem);
    out.U64(vc + VcBasetimeSec(vdso::kVdsoBaseAux), sec);
    out.U64(vc + VcBasetimeNsec(vdso::kVdsoBaseAux), rem << shift);
  }
  out.Wmb();
  out.U32(vc + vdso::kVcSeq, seq + 2);
  return out.Take();
}

// timens_setup_vdso_clock_data() (timens_setup_vdso_data() before 6.15)
// for each record base.
vdso::VvarUpdate BuildTimensRecords(const TimensOffsets& o,
                                    const std::vector<uint32_t>& records,
                                    const TimensRecordShape& shape) {
  StoreList out;
  for (const uint32_t vc : records) {
    out.U32(vc + shape.seq, 1);
    out.U32(vc + shape.clock_mode, static_cast<uint32_t>(kVdsoClockmodeTimens));
    auto offset = [&](ClockId clk, const Timespec64& ts) {
      // offset_from_ts(): sec as s64, nsec as u64; struct timens_offset
      // is 16 bytes, in the union with basetime[].
      const uint32_t at = vc + shape.offset + 16 * static_cast<uint32_t>(clk);
      out.U64(at, static_cast<uint64_t>(ts.tv_sec));
      out.U64(at + 8, static_cast<uint64_t>(ts.tv_nsec));
    };
    offset(kClockMonotonic, o.monotonic);
    offset(kClockMonotonicRaw, o.monotonic);
    offset(kClockMonotonicCoarse, o.monotonic);
    offset(kClockBoottime, o.boottime);
    offset(kClockBoottimeAlarm, o.boottime);
  }
  return out.Take();
}

// Models timens_set_vvar_page() (kernel/time/namespace.c, 6.17+).
vdso::VvarUpdate BuildTimensPage(const TimensOffsets& offsets,
                                 bool aux_clocks) {
  std::vector<uint32_t> records;
  for (int cs = 0; cs < vdso::kCsBases; ++cs) {
    records.push_back(ClockDataOffset(cs));
  }
  if (aux_clocks) {
    for (int i = 0; i < kMaxAuxClocks; ++i) {
      records.push_back(vdso::AuxClockDataOffset(i));
    }
  }
  return BuildTimensRecords(
      offsets, records,
      TimensRecordShape{vdso::kVcSeq, vdso::kVcClockMode,
                        vdso::VcOffsetSec(kClockRealtime)});
}

VvarPublisher::VvarPublisher(vdso::VvarPage* page, uint32_t hrtimer_res,
                             bool boottime_shift_overflow)
    : page_(page),
      hrtimer_res_(hrtimer_res),
      boottime_shift_overflow_(boottime_shift_overflow) {
  seq_[0] = static_cast<uint32_t>(
      page->Load(ClockDataOffset(kCsHresCoarse) + vdso::kVcSeq, 4));
  seq_[1] = static_cast<uint32_t>(
      page->Load(ClockDataOffset(kCsRaw) + vdso::kVcSeq, 4));
  for (int i = 0; i < kMaxAuxClocks; ++i) {
    aux_seq_[i] = static_cast<uint32_t>(
        page->Load(vdso::AuxClockDataOffset(i) + vdso::kVcSeq, 4));
  }
}

void VvarPublisher::UpdateAux(const Timekeeper& tk) {
  // In 64 bits: an id near INT_MIN must not overflow on its way to "not aux".
  const int64_t index = int64_t{tk.id} - kTimekeeperAuxFirst;
  if (index < 0 || index >= kMaxAuxClocks) return;
  uint32_t& seq = aux_seq_[index];
  page_->Apply(BuildUpdateAux(tk, seq));
  seq += 2;
}

void VvarPublisher::UpdateVsyscall(const Timekeeper& tk) {
  page_->Apply(BuildUpdateVsyscall(tk, seq_[0], seq_[1], hrtimer_res_,
                                   boottime_shift_overflow_));
  seq_[0] += 2;
  seq_[1] += 2;
  ++updates_published_;
}

}  // namespace vdsolab::timekeeper
