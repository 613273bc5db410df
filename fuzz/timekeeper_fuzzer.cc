// File: fuzz/timekeeper_fuzzer.cc
//
// Sequences of timekeeper operations: the input's bytes pick a clocksource
// and HZ, then operations (ticks after any gap up to half the counter's
// safe range, idle stretches past max_cycles, adjtimex() with any frequency
// or tick value, settimeofday() to any time), each at a counter that only
// moves forward. After every operation the model's invariants must hold:
//   - MONOTONIC and MONOTONIC_RAW never go backwards (read at the
//     operation's counter, against the last read);
//   - REALTIME = MONOTONIC + the offset the timekeeper publishes;
//   - the NTP state stays in the kernel's ranges (time_freq within
//     +-MAXFREQ, tick_usec within 90%..110% of USER_HZ's tick);
//   - adjtimex() refuses a value out of range with -EINVAL and leaves the
//     state alone.
// A violation aborts with the operation sequence so far.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_format.h"
#include "common/clock_result.h"
#include "common/math64.h"
#include "common/timespec.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/ntp.h"
#include "timekeeper/timekeeping.h"

namespace {

using vdsolab::Timespec64;
namespace tk = vdsolab::timekeeper;

// Reads the input a field at a time; zeros past its end.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint64_t Take(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) {
      v |= static_cast<uint64_t>(pos_ < size_ ? data_[pos_] : 0) << (8 * i);
      ++pos_;
    }
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

[[noreturn]] void Fail(const std::string& history, const std::string& what) {
  std::fprintf(stderr, "timekeeper_fuzzer: %s\noperations:\n%s", what.c_str(),
               history.c_str());
  std::abort();
}

__int128 Ns(const Timespec64& t) {
  return static_cast<__int128>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  // A TSC of 1 MHz .. 6.5 GHz, or a narrow counter (acpi_pm, hpet).
  const uint64_t kind = in.Take(1) % 4;
  absl::StatusOr<tk::Clocksource> cs =
      kind == 0
          ? tk::ClocksourceRegisterScale("acpi_pm", tk::ClocksourceMask(24), 1,
                                         3579545, tk::kVdsoClockmodeNone, 200)
      : kind == 1
          ? tk::ClocksourceRegisterScale("hpet", tk::ClocksourceMask(32), 1,
                                         14318180, tk::kVdsoClockmodeNone, 250)
          : tk::MakeTscClocksource(
                static_cast<uint32_t>(1000 + in.Take(3) % 6500000));
  if (!cs.ok()) return 0;
  const int hz =
      static_cast<int>(std::array<int, 4>{100, 250, 300, 1000}[in.Take(1) % 4]);
  tk::Timekeeping t(*cs, hz, nullptr);
  uint64_t now = in.Take(8) & cs->mask;
  t.Init(now, Timespec64{static_cast<int64_t>(in.Take(5) % (1ll << 34)), 0},
         Timespec64{static_cast<int64_t>(in.Take(2)), 0});
  std::string history =
      absl::StrFormat("init %s mask %#x mult %d shift %d hz %d at %#x\n",
                      cs->name, cs->mask, cs->mult, cs->shift, hz, now);

  // The largest forward step a read or tick may take: half of what the
  // timekeeper can tell from a wrap (max_raw_delta); beyond it a counter
  // jump is a violated precondition, not a model defect.
  const uint64_t max_step = cs->max_raw_delta / 2;
  const uint64_t interval = t.timekeeper().cycle_interval;
  Timespec64 last_mono = t.GetTs64(now);
  Timespec64 last_raw = t.GetRawTs64(now);

  for (int op = 0; op < 256 && !in.empty(); ++op) {
    const uint64_t code = in.Take(1);
    switch (code % 6) {
      case 0:
      case 1: {  // A tick, a little early or late.
        now = (now + std::min<uint64_t>(max_step,
                                        interval / 2 + in.Take(2) % interval)) &
              cs->mask;
        t.Advance(tk::AdvanceMode::kTick, now);
        absl::StrAppendFormat(&history, "tick at %#x\n", now);
        break;
      }
      case 2: {  // Idle: no tick for a while, up to past max_cycles.
        const uint64_t gap =
            std::min<uint64_t>(max_step, in.Take(5) % (2 * cs->max_cycles + 1));
        now = (now + gap) & cs->mask;
        t.Advance(tk::AdvanceMode::kTick, now);
        absl::StrAppendFormat(&history, "idle %#x cycles, tick at %#x\n", gap,
                              now);
        break;
      }
      case 3: {  // adjtimex(): frequency and/or tick, any values.
        tk::Timex txc;
        txc.modes = (in.Take(1) & 1 ? tk::kAdjFrequency : 0) |
                    (in.Take(1) & 1 ? tk::kAdjTick : 0);
        txc.freq = static_cast<int64_t>(in.Take(8));
        if ((code & 0x80) != 0) txc.freq %= (600ll << 16);  // Near the range.
        txc.tick = static_cast<int64_t>(in.Take(4)) % 20000;
        const tk::NtpData before = t.ntp().data();
        absl::StatusOr<int> ret = t.Adjtimex(txc, now);
        if (!ret.ok()) Fail(history, std::string(ret.status().message()));
        absl::StrAppendFormat(&history,
                              "adjtimex modes %#x freq %d tick %d at %#x: %d\n",
                              txc.modes, txc.freq, txc.tick, now, *ret);
        // timekeeping_validate_timex(): a tick off by more than 10%, a
        // frequency whose scaling to ns << 32 would overflow (64-bit); an
        // in-range-but-large frequency is clamped to MAXFREQ instead.
        const bool freq_bad = (txc.modes & tk::kAdjFrequency) != 0 &&
                              (txc.freq < INT64_MIN / tk::kPpmScale ||
                               txc.freq > INT64_MAX / tk::kPpmScale);
        const bool tick_bad = (txc.modes & tk::kAdjTick) != 0 &&
                              (txc.tick < 900000 / tk::kUserHz ||
                               txc.tick > 1100000 / tk::kUserHz);
        if ((freq_bad || tick_bad) != (*ret == -vdsolab::kEinval)) {
          Fail(history,
               "adjtimex() accepted a value out of range, or refused "
               "one in range");
        }
        if (*ret == -vdsolab::kEinval &&
            (t.ntp().data().time_freq != before.time_freq ||
             t.ntp().data().tick_usec != before.tick_usec)) {
          Fail(history, "a refused adjtimex() changed the NTP state");
        }
        break;
      }
      case 4: {  // settimeofday() to any time.
        const Timespec64 ts{static_cast<int64_t>(in.Take(8)),
                            static_cast<int64_t>(in.Take(4))};
        const int ret = t.SetTimeOfDay(ts, now);
        absl::StrAppendFormat(&history, "settimeofday %d.%d at %#x: %d\n",
                              ts.tv_sec, ts.tv_nsec, now, ret);
        break;
      }
      case 5: {  // A read a little later, between ticks.
        now = (now + std::min<uint64_t>(max_step, in.Take(3) % interval)) &
              cs->mask;
        absl::StrAppendFormat(&history, "read at %#x\n", now);
        break;
      }
    }
    const Timespec64 mono = t.GetTs64(now);
    const Timespec64 raw = t.GetRawTs64(now);
    if (Ns(mono) < Ns(last_mono)) {
      Fail(history,
           absl::StrFormat("MONOTONIC went back: %d.%09d after %d.%09d",
                           mono.tv_sec, mono.tv_nsec, last_mono.tv_sec,
                           last_mono.tv_nsec));
    }
    if (Ns(raw) < Ns(last_raw)) {
      Fail(history,
           absl::StrFormat("MONOTONIC_RAW went back: %d.%09d after %d.%09d",
                           raw.tv_sec, raw.tv_nsec, last_raw.tv_sec,
                           last_raw.tv_nsec));
    }
    last_mono = mono;
    last_raw = raw;
    const tk::Timekeeper& k = t.timekeeper();
    const Timespec64 real = t.GetRealTs64(now);
    // REALTIME = MONOTONIC - wall_to_monotonic, exactly.
    if (Ns(real) + Ns(k.wall_to_monotonic) != Ns(mono)) {
      Fail(history, "REALTIME and MONOTONIC disagree with wall_to_monotonic");
    }
    const tk::NtpData& n = t.ntp().data();
    if (n.time_freq < -tk::kMaxFreqScaled || n.time_freq > tk::kMaxFreqScaled) {
      Fail(history,
           absl::StrFormat("time_freq %d outside +-MAXFREQ", n.time_freq));
    }
    if (n.tick_usec < 900000 / tk::kUserHz ||
        n.tick_usec > 1100000 / tk::kUserHz) {
      Fail(history,
           absl::StrFormat("tick_usec %d outside 90%%..110%%", n.tick_usec));
    }
  }
  return 0;
}
