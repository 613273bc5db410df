#include "variants/eras/era_writers.h"

#include <utility>

#include "common/clockid.h"
#include "common/math64.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/vsyscall.h"
#include "variants/eras/datapage.h"
#include "variants/eras/era_reader.h"
#include "vdso/datapage.h"
#include "vdso/store_list.h"

namespace vdsolab::variants::eras {
namespace {

using timekeeper::Timekeeper;
using timekeeper::TkReadBase;
using vdso::StoreList;

// vdata[cs] of a pre-6.15 page.
class Record {
 public:
  Record(StoreList* out, const RecordOffsets& r, int cs)
      : out_(out), r_(r), base_(VdsoDataOffset(r, cs)) {}
  void U32(uint32_t field, uint32_t value) {
    out_->Add(base_ + field, 4, value);
  }
  void U64(uint32_t field, uint64_t value) {
    out_->Add(base_ + field, 8, value);
  }
  void Timestamp(ClockId idx, uint64_t sec, uint64_t nsec) {
    U64(r_.BasetimeSec(idx), sec);
    U64(r_.BasetimeNsec(idx), nsec);
  }
  const RecordOffsets& offsets() const { return r_; }

 private:
  StoreList* out_;
  const RecordOffsets& r_;
  uint32_t base_;
};

// vdso_write_begin(): odd seq in both records tells readers a write is in
// progress; the smp_wmb() pairs with the smp_rmb() in the readers'
// vdso_read_begin().
void WriteBegin(StoreList& out, Record& hres, Record& raw, uint32_t seq) {
  hres.U32(hres.offsets().seq, seq + 1);
  raw.U32(raw.offsets().seq, seq + 1);
  out.Wmb();
}

// vdso_write_end(): the smp_wmb() pairs with the smp_rmb() in the readers'
// vdso_read_retry(); even seq marks the data consistent.
void WriteEnd(StoreList& out, Record& hres, Record& raw, uint32_t seq) {
  out.Wmb();
  hres.U32(hres.offsets().seq, seq + 2);
  raw.U32(raw.offsets().seq, seq + 2);
}

// CLOCK_REALTIME_COARSE and CLOCK_MONOTONIC_COARSE before 6.15: the ns part
// of REALTIME at the last update, tkr_mono.xtime_nsec >> shift.
void WriteCoarsePre615(Record& hres, const Timekeeper& tk) {
  const uint64_t coarse = tk.tkr_mono.xtime_nsec >> tk.tkr_mono.shift;
  hres.Timestamp(kClockRealtimeCoarse, tk.xtime_sec, coarse);
  uint64_t rem = 0;
  const uint32_t carry = IterDivU64Rem(
      coarse + static_cast<uint64_t>(tk.wall_to_monotonic.tv_nsec),
      static_cast<uint32_t>(kNsecPerSec), &rem);
  hres.Timestamp(
      kClockMonotonicCoarse,
      tk.xtime_sec + static_cast<uint64_t>(tk.wall_to_monotonic.tv_sec) + carry,
      rem);
}

// cycle_last, [max_cycles], mask, mult, shift of one record.
void WriteClockConfiguration(Record& rec, const TkReadBase& tkr) {
  const RecordOffsets& r = rec.offsets();
  rec.U64(r.cycle_last, tkr.cycle_last);
  // CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT (6.10+).
  if (r.max_cycles != kNoField) rec.U64(r.max_cycles, tkr.clock->max_cycles);
  rec.U64(r.mask, tkr.mask);
  rec.U32(r.mult, tkr.mult);
  rec.U32(r.shift, tkr.shift);
}

// CLOCK_MONOTONIC in shifted ns: xtime + wall_to_monotonic, normalised.
void MonotonicShifted(const Timekeeper& tk, uint64_t* sec, uint64_t* nsec) {
  *sec = tk.xtime_sec + static_cast<uint64_t>(tk.wall_to_monotonic.tv_sec);
  *nsec = tk.tkr_mono.xtime_nsec +
          (static_cast<uint64_t>(tk.wall_to_monotonic.tv_nsec)
           << tk.tkr_mono.shift);
  NormaliseShiftedNsec(sec, nsec, tk.tkr_mono.shift);
}

// CLOCK_TAI: REALTIME + tai_offset seconds.
void WriteTai(Record& hres, const Timekeeper& tk) {
  hres.Timestamp(
      kClockTai,
      tk.xtime_sec + static_cast<uint64_t>(static_cast<int64_t>(tk.tai_offset)),
      tk.tkr_mono.xtime_nsec);
}

// update_vdso_data(), 5.3.
void UpdateVdsoData53(Record& hres, Record& raw, const Timekeeper& tk,
                      uint32_t hrtimer_res) {
  WriteClockConfiguration(hres, tk.tkr_mono);
  WriteClockConfiguration(raw, tk.tkr_raw);

  hres.Timestamp(kClockRealtime, tk.xtime_sec, tk.tkr_mono.xtime_nsec);

  uint64_t sec = 0, nsec = 0;
  MonotonicShifted(tk, &sec, &nsec);
  hres.Timestamp(kClockMonotonic, sec, nsec);

  raw.Timestamp(kClockMonotonicRaw, tk.raw_sec, tk.tkr_raw.xtime_nsec);

  // CLOCK_BOOTTIME, 5.3: wall_to_monotonic.tv_nsec + offs_boot as one s64
  // ns count, shifted: wraps in u64 once offs_boot passes ~2^64 >> shift ns
  // (about 18 minutes of suspend at shift 24). Fixed in 5.4 by
  // monotonic_to_boot.
  sec = tk.xtime_sec + static_cast<uint64_t>(tk.wall_to_monotonic.tv_sec);
  nsec = tk.tkr_mono.xtime_nsec +
         (static_cast<uint64_t>(tk.wall_to_monotonic.tv_nsec + tk.offs_boot)
          << tk.tkr_mono.shift);
  NormaliseShiftedNsec(&sec, &nsec, tk.tkr_mono.shift);
  hres.Timestamp(kClockBoottime, sec, nsec);

  WriteTai(hres, tk);

  // Read without the seq by clock_getres(): WRITE_ONCE().
  hres.U32(hres.offsets().hrtimer_res, hrtimer_res);
}

// update_vdso_data(), 6.1 (6.10: with max_cycles, by the record layout).
void UpdateVdsoData61(Record& hres, Record& raw, const Timekeeper& tk) {
  WriteClockConfiguration(hres, tk.tkr_mono);
  WriteClockConfiguration(raw, tk.tkr_raw);

  uint64_t sec = 0, nsec = 0;
  MonotonicShifted(tk, &sec, &nsec);
  hres.Timestamp(kClockMonotonic, sec, nsec);

  // CLOCK_BOOTTIME: MONOTONIC + monotonic_to_boot.
  sec += static_cast<uint64_t>(tk.monotonic_to_boot.tv_sec);
  nsec += static_cast<uint64_t>(tk.monotonic_to_boot.tv_nsec)
          << tk.tkr_mono.shift;
  NormaliseShiftedNsec(&sec, &nsec, tk.tkr_mono.shift);
  hres.Timestamp(kClockBoottime, sec, nsec);

  raw.Timestamp(kClockMonotonicRaw, tk.raw_sec, tk.tkr_raw.xtime_nsec);

  WriteTai(hres, tk);
}

// update_vsyscall(), 6.1-6.12, on the record layout `r`.
vdso::VvarUpdate BuildUpdateVsyscall61On(const RecordOffsets& r,
                                         const Timekeeper& tk, uint32_t seq,
                                         const PublishContext& ctx) {
  StoreList out;
  Record hres(&out, r, vdso::kCsHresCoarse);
  Record raw(&out, r, vdso::kCsRaw);
  WriteBegin(out, hres, raw, seq);

  const int32_t mode = EraClockMode(tk.tkr_mono.clock->vdso_clock_mode);
  hres.U32(r.clock_mode, static_cast<uint32_t>(mode));
  raw.U32(r.clock_mode, static_cast<uint32_t>(mode));

  // CLOCK_REALTIME is always written: time() needs it.
  hres.Timestamp(kClockRealtime, tk.xtime_sec, tk.tkr_mono.xtime_nsec);
  WriteCoarsePre615(hres, tk);

  // Read without the seq by clock_getres(): WRITE_ONCE().
  hres.U32(r.hrtimer_res, ctx.hrtimer_res);

  // A clocksource the vDSO cannot read leaves the hres parts stale.
  if (mode != kEraClockModeNone) UpdateVdsoData61(hres, raw, tk);

  WriteEnd(out, hres, raw, seq);
  return out.Take();
}

}  // namespace

int32_t EraClockMode(int32_t vdso_clock_mode) {
  switch (vdso_clock_mode) {
    case timekeeper::kVdsoClockmodeTsc:
      return kEraClockModeTsc;
    case timekeeper::kVdsoClockmodePvclock:
      return kEraClockModePvclock;
    case timekeeper::kVdsoClockmodeHvclock:
      return kEraClockModeHvclock;
    default:
      return kEraClockModeNone;
  }
}

// Models update_vsyscall() of 5.3.
vdso::VvarUpdate BuildUpdateVsyscall53(const Timekeeper& tk, uint32_t seq,
                                       const PublishContext& ctx) {
  const RecordOffsets& r = kVdsoData53;
  StoreList out;
  Record hres(&out, r, vdso::kCsHresCoarse);
  Record raw(&out, r, vdso::kCsRaw);
  WriteBegin(out, hres, raw, seq);

  // __arch_get_clock_mode(tk), once per record: the VCLOCK_* value.
  const int32_t mode = EraClockMode(tk.tkr_mono.clock->vdso_clock_mode);
  hres.U32(r.clock_mode, static_cast<uint32_t>(mode));
  raw.U32(r.clock_mode, static_cast<uint32_t>(mode));

  WriteCoarsePre615(hres, tk);

  // __arch_use_vsyscall() is the generic "always" on x86 in 5.3.
  UpdateVdsoData53(hres, raw, tk, ctx.hrtimer_res);

  WriteEnd(out, hres, raw, seq);
  return out.Take();
}

// Models update_vsyscall() of 6.1 (unchanged through 6.9).
vdso::VvarUpdate BuildUpdateVsyscall61(const Timekeeper& tk, uint32_t seq,
                                       const PublishContext& ctx) {
  return BuildUpdateVsyscall61On(kVdsoData53, tk, seq, ctx);
}

// Models update_vsyscall() of 6.10 (the 248-byte records).
vdso::VvarUpdate BuildUpdateVsyscall610(const Timekeeper& tk, uint32_t seq,
                                        const PublishContext& ctx) {
  return BuildUpdateVsyscall61On(kVdsoData610, tk, seq, ctx);
}

// Models update_vsyscall() of 6.15/6.16.
vdso::VvarUpdate BuildUpdateVsyscall615(const Timekeeper& tk, uint32_t seq,
                                        const PublishContext& ctx) {
  vdso::VvarUpdate update =
      timekeeper::BuildUpdateVsyscall(tk, seq, seq, ctx.hrtimer_res);
  for (vdso::VvarStore& store : update.stores) {
    if (store.offset == vdso::kHrtimerRes) store.offset = kHrtimerRes615;
  }
  return update;
}

namespace {

vdso::VvarUpdate TimensOn(const RecordOffsets& r,
                          const timekeeper::TimensOffsets& offsets) {
  return timekeeper::BuildTimensRecords(
      offsets,
      {VdsoDataOffset(r, vdso::kCsHresCoarse), VdsoDataOffset(r, vdso::kCsRaw)},
      timekeeper::TimensRecordShape{r.seq, r.clock_mode, r.basetime});
}

}  // namespace

// Models timens_set_vvar_page() of 5.6-6.9: the records at vvar+128.
vdso::VvarUpdate BuildTimensPage53(const timekeeper::TimensOffsets& offsets) {
  return TimensOn(kVdsoData53, offsets);
}

// Models timens_set_vvar_page() of 6.10-6.12.
vdso::VvarUpdate BuildTimensPage610(const timekeeper::TimensOffsets& offsets) {
  return TimensOn(kVdsoData610, offsets);
}

// Models timens_set_vvar_page() of 6.15/6.16: 6.17's without aux records.
vdso::VvarUpdate BuildTimensPage615(const timekeeper::TimensOffsets& offsets) {
  return timekeeper::BuildTimensPage(offsets, /*aux_clocks=*/false);
}

}  // namespace vdsolab::variants::eras
