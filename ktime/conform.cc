#include "ktime/conform.h"

#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ktime/internal/compare.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/timekeeping.h"
#include "variants/plugin/call_guard.h"
#include "variants/registry.h"
#include "variants/variant.h"
#include "vdso/access.h"

namespace vdsolab::ktime {
namespace {

namespace tk = ::vdsolab::timekeeper;

// The adjtimex() mode bits a random call sets independently (and the
// shrinker clears again where the difference does not need them).
constexpr uint32_t kAdjtimexModeBits[] = {
    tk::kAdjOffset, tk::kAdjFrequency, tk::kAdjMaxerror, tk::kAdjEsterror,
    tk::kAdjStatus, tk::kAdjTimeconst, tk::kAdjTai,      tk::kAdjMicro,
    tk::kAdjNano,   tk::kAdjTick};
using internal::CompareState;
using internal::CompareTimex;
using internal::Diff;
using internal::kVdsoDataOffset;
using internal::ToKernel;
using internal::WriterEra;

constexpr int kHz = internal::kTreeHz;

// Runs one of the tree's operations contained: a crash or a spin of its
// code (a patch's bug) is a difference of the sequence, not the end of
// vdsolab; a WARN() goes on after its trap, as in the kernel
// (KernelTime::WarnPlace()). "" or what went wrong.
template <class Fn>
std::string TreeCall(const KernelTime& kt, const char* what, Fn&& fn) {
  if (std::optional<vdso::CallFault> f = variants::RunContained(
          variants::call_guard_internal::ThisThread(), [&] { fn(kt.api()); })) {
    return kt.DescribeFault(what, *f);
  }
  return "";
}

const char* KindName(OpKind k) {
  switch (k) {
    case OpKind::kTick:
      return "tick";
    case OpKind::kIdle:
      return "idle";
    case OpKind::kAdjtimex:
      return "adjtimex";
    case OpKind::kSetTime:
      return "settimeofday";
    case OpKind::kInjectOffset:
      return "inject_offset";
    case OpKind::kSuspend:
      return "suspend/resume";
    case OpKind::kInjectSleeptime:
      return "inject_sleeptime";
    case OpKind::kChangeClocksource:
      return "change_clocksource";
  }
  return "?";
}

const char* SourceName(SourceKind k) {
  switch (k) {
    case SourceKind::kTsc:
      break;
    case SourceKind::kHpet:
      return "hpet";
    case SourceKind::kAcpiPm:
      return "acpi_pm";
    case SourceKind::kKvmClock:
      return "kvm-clock";
  }
  return "tsc";
}

// The drivers' registrations (arch/x86/kernel/{tsc,hpet,kvmclock}.c,
// drivers/clocksource/acpi_pm.c) of clocksource `source`; TSC's frequency
// and nonstop flag are the sequence's.
variants::ClocksourceRegistration SpecFor(SourceKind source,
                                          const Sequence& seq) {
  variants::ClocksourceRegistration r;
  switch (source) {
    case SourceKind::kTsc:
      r = {tk::ClocksourceMask(64), 1000, seq.tsc_khz,
           tk::kVdsoClockmodeTsc,   300,  seq.suspend_nonstop};
      break;
    case SourceKind::kHpet:
      r = {tk::ClocksourceMask(32), 1,   14318180,
           tk::kVdsoClockmodeNone,  250, false};
      break;
    case SourceKind::kAcpiPm:
      r = {tk::ClocksourceMask(24), 1,   3579545,
           tk::kVdsoClockmodeNone,  200, false};
      break;
    case SourceKind::kKvmClock:
      r = {tk::ClocksourceMask(64),   1,   1000000000,
           tk::kVdsoClockmodePvclock, 400, false};
      break;
  }
  return r;
}

// The clocksource the sequence boots on.
variants::ClocksourceRegistration Spec(const Sequence& seq) {
  return SpecFor(seq.source, seq);
}

// Counter cycles per second.
uint64_t CyclesPerSecond(const Sequence& seq) {
  const variants::ClocksourceRegistration r = Spec(seq);
  return static_cast<uint64_t>(r.freq) * r.scale;
}

// The clocksource as the model registers it, and as the tree's ABI takes it.
absl::StatusOr<tk::Clocksource> ModelClocksourceFor(SourceKind source,
                                                    const Sequence& seq) {
  const variants::ClocksourceRegistration r = SpecFor(source, seq);
  absl::StatusOr<tk::Clocksource> cs = tk::ClocksourceRegisterScale(
      SourceName(source), r.mask, r.scale, r.freq, r.vdso_clock_mode, r.rating);
  if (cs.ok()) cs->suspend_nonstop = r.suspend_nonstop;
  return cs;
}

absl::StatusOr<tk::Clocksource> ModelClocksource(const Sequence& seq) {
  return ModelClocksourceFor(seq.source, seq);
}

vdsolab_kt_clock TreeClocksource(const Sequence& seq) {
  return internal::ToKernelClock(Spec(seq));
}

// The model's update_vsyscall(): the era writer's stores (variants/eras),
// applied at once to a copy of the page, the seq continued as the
// kernel's vdso_write_begin()/end() continue it.
class PageSink : public tk::VsyscallSink {
 public:
  explicit PageSink(const variants::Variant* writer) : writer_(writer) {}
  void UpdateVsyscall(const tk::Timekeeper& t) override {
    const vdso::VvarUpdate u = writer_->build_update(t, seq_, ctx_);
    for (const vdso::VvarStore& st : u.stores) {
      for (int b = 0; b < st.size; ++b) {
        bytes_[st.offset + static_cast<uint32_t>(b)] =
            static_cast<uint8_t>(st.value >> (8 * b));
      }
    }
    seq_ += 2;
  }
  const uint8_t* bytes() const { return bytes_.data(); }
  const variants::Variant* writer() const { return writer_; }

 private:
  const variants::Variant* writer_;
  variants::PublishContext ctx_;  // hrtimer_res 1: the shim's resolution
  uint32_t seq_ = 0;
  std::vector<uint8_t> bytes_ = std::vector<uint8_t>(4096, 0);
};

// The model's and the tree's timekeeping from the same boot state.
struct Pair {
  const Sequence* seq = nullptr;  // Its boot parameters.
  tk::Clocksource cs;             // The clocksource running now.
  std::unique_ptr<PageSink> sink;
  std::unique_ptr<tk::Timekeeping> model;
  uint64_t now = 0;
};

// The first byte of the published data where the model's page and the
// tree's _vdso_data differ, named by the era layout.
std::string ComparePage(const PageSink& sink, const KernelTime& kt) {
  unsigned size = 0;
  const unsigned char* tree = kt.api().vdso_data(&size);
  for (unsigned i = 0; i < size && kVdsoDataOffset + i < 4096; ++i) {
    const uint8_t m = sink.bytes()[kVdsoDataOffset + i];
    if (m != tree[i]) {
      // Bytes past what either publishes read as 0.
      return sink.writer()->layout->DescribeDifference(
          kVdsoDataOffset + i,
          [&](uint32_t k) -> uint8_t { return k < 4096 ? sink.bytes()[k] : 0; },
          [&](uint32_t k) -> uint8_t {
            return k >= kVdsoDataOffset && k - kVdsoDataOffset < size
                       ? tree[k - kVdsoDataOffset]
                       : 0;
          },
          "model", "tree");
    }
  }
  return "";
}

// The kernel command line, parsed before timekeeping_init(): the tree's own
// __setup handler with the parameter as text.
std::string TreeBootParams(const KernelTime& kt, const Sequence& seq) {
  if (seq.ntp_tick_adj == 0) return "";
  std::string value = absl::StrCat(seq.ntp_tick_adj);
  return TreeCall(kt, "ntp_tick_adj_setup", [&](const vdsolab_kt_api& a) {
    a.ntp_tick_adj_setup(value.data());
  });
}

absl::StatusOr<std::string> Boot(const KernelTime& kt,
                                 const tk::TimekeeperProfile& profile,
                                 const Sequence& seq, Pair* p) {
  absl::StatusOr<tk::Clocksource> cs = ModelClocksource(seq);
  if (!cs.ok()) return cs.status();
  p->seq = &seq;
  p->cs = *cs;
  absl::StatusOr<const variants::Variant*> writer =
      variants::FindVariant(WriterEra(profile));
  if (!writer.ok()) return writer.status();
  p->sink = std::make_unique<PageSink>(*writer);
  p->model =
      std::make_unique<tk::Timekeeping>(p->cs, kHz, p->sink.get(), profile);
  p->now = seq.start & p->cs.mask;
  if (seq.ntp_tick_adj != 0) p->model->NtpTickAdjSetup(seq.ntp_tick_adj);
  p->model->Init(p->now, seq.wall, Timespec64{});
  kt.api().reset();
  if (std::string d = TreeBootParams(kt, seq); !d.empty()) return d;
  vdsolab_kt_clock c = TreeClocksource(seq);
  vdsolab_kt_clock_fields f{};
  if (std::string d = TreeCall(kt, "timekeeping_init",
                               [&](const vdsolab_kt_api& a) {
                                 a.register_clock(&c, &f);
                                 a.init(p->now, seq.wall.tv_sec,
                                        seq.wall.tv_nsec, 0, 0);
                               });
      !d.empty()) {
    return d;
  }
  if (std::string d = internal::CompareRegistration(p->cs, f); !d.empty())
    return d;
  if (std::string st = CompareState(*p->model, kt); !st.empty()) return st;
  return ComparePage(*p->sink, kt);
}

// The tree's syscall clocks (ktime_get_real_ts64(), ...) against the
// model's readers at the operation's counter and at one far past
// cycle_last, drawn from the operation (internal::ReaderCounters()).
std::string CompareReaders(const KernelTime& kt, const Pair& p, const Op& op) {
  // The readers WARN_ON(timekeeping_suspended).
  if (p.model->suspended()) return "";
  for (const uint64_t counter :
       internal::ReaderCounters(p.model->timekeeper(), p.now, op.cycles)) {
    if (std::string d =
            internal::CompareClocks(*p.model, counter,
                                    [&](const char* what, auto&& fn) {
                                      return TreeCall(kt, what, fn);
                                    });
        !d.empty()) {
      return d;
    }
  }
  return "";
}

// Runs `op` on both; returns the first difference after it ("" if none).
std::string StepOp(const KernelTime& kt, Pair& p, const Op& op) {
  // The hardware counter wraps at its width.
  p.now = (p.now + op.cycles) & p.cs.mask;
  const uint64_t now = p.now;
  switch (op.kind) {
    case OpKind::kTick:
    case OpKind::kIdle:
      p.model->Advance(tk::AdvanceMode::kTick, now);
      if (std::string d =
              TreeCall(kt, "update_wall_time",
                       [&](const vdsolab_kt_api& a) { a.tick(now); });
          !d.empty()) {
        return d;
      }
      break;
    case OpKind::kAdjtimex: {
      tk::Timex m = op.txc;
      const int mr = p.model->Adjtimex(&m, now);
      vdsolab_kt_timex t = ToKernel(op.txc);
      int tr = 0;
      if (std::string d = TreeCall(
              kt, "do_adjtimex",
              [&](const vdsolab_kt_api& a) { tr = a.adjtimex(&t, now); });
          !d.empty()) {
        return d;
      }
      if (std::string d = CompareTimex(mr, m, tr, t); !d.empty()) return d;
      break;
    }
    case OpKind::kSetTime: {
      const int mr = p.model->SetTimeOfDay(op.ts, now);
      int tr = 0;
      if (std::string d = TreeCall(kt, "do_settimeofday64",
                                   [&](const vdsolab_kt_api& a) {
                                     tr = a.settimeofday(op.ts.tv_sec,
                                                         op.ts.tv_nsec, now);
                                   });
          !d.empty()) {
        return d;
      }
      Diff d;
      d.Field("settimeofday return", mr, tr);
      if (!d.first().empty()) return d.first();
      break;
    }
    case OpKind::kInjectOffset: {
      const int mr = p.model->InjectOffset(op.ts, now);
      int tr = 0;
      if (std::string d = TreeCall(kt, "timekeeping_inject_offset",
                                   [&](const vdsolab_kt_api& a) {
                                     tr = a.inject_offset(op.ts.tv_sec,
                                                          op.ts.tv_nsec, now);
                                   });
          !d.empty()) {
        return d;
      }
      Diff d;
      d.Field("inject_offset return", mr, tr);
      if (!d.first().empty()) return d.first();
      break;
    }
    case OpKind::kSuspend: {
      // The RTC reads whole seconds of REALTIME (read_persistent_clock64()).
      const Timespec64 rtc{
          static_cast<int64_t>(p.model->timekeeper().xtime_sec), 0};
      p.model->Suspend(now, rtc);
      if (std::string d = TreeCall(
              kt, "timekeeping_suspend",
              [&](const vdsolab_kt_api& a) { a.suspend(now, rtc.tv_sec, 0); });
          !d.empty()) {
        return d;
      }
      if (std::string d = CompareState(*p.model, kt); !d.empty()) {
        return "after suspend: " + d;
      }
      p.now = (p.now + op.sleep_cycles) & p.cs.mask;
      const uint64_t wake_now = p.now;
      const Timespec64 wake{rtc.tv_sec + op.sleep_sec, 0};
      p.model->Resume(tk::ResumeInput{wake_now, wake});
      if (std::string d = TreeCall(kt, "timekeeping_resume",
                                   [&](const vdsolab_kt_api& a) {
                                     a.resume(wake_now, wake.tv_sec, 0);
                                   });
          !d.empty()) {
        return d;
      }
      break;
    }
    case OpKind::kInjectSleeptime:
      p.model->InjectSleeptime64(op.ts, now);
      if (std::string d = TreeCall(kt, "timekeeping_inject_sleeptime64",
                                   [&](const vdsolab_kt_api& a) {
                                     a.inject_sleeptime(op.ts.tv_sec,
                                                        op.ts.tv_nsec, now);
                                   });
          !d.empty()) {
        return d;
      }
      break;
    case OpKind::kChangeClocksource: {
      absl::StatusOr<tk::Clocksource> next =
          ModelClocksourceFor(op.source, *p.seq);
      if (!next.ok()) return std::string(next.status().message());
      const uint64_t now_new = op.new_counter & next->mask;
      vdsolab_kt_clock c = internal::ToKernelClock(SpecFor(op.source, *p.seq));
      vdsolab_kt_clock_fields f{};
      int tr = 0;
      if (std::string d = TreeCall(kt, "timekeeping_notify",
                                   [&](const vdsolab_kt_api& a) {
                                     tr = a.change_clocksource(&c, &f, now,
                                                               now_new);
                                   });
          !d.empty()) {
        return d;
      }
      if (std::string d = internal::CompareRegistration(*next, f); !d.empty())
        return d;
      Diff d;
      d.Field("timekeeping_notify return", 0, tr);
      if (!d.first().empty()) return d.first();
      p.model->ChangeClocksource(*next, now, now_new);
      p.cs = *next;
      p.now = now_new;
      break;
    }
  }
  if (std::string d = CompareState(*p.model, kt); !d.empty()) return d;
  if (std::string d = ComparePage(*p.sink, kt); !d.empty()) return d;
  return CompareReaders(kt, p, op);
}

// StepOp(), and a WARN() of the tree's code: the kernel goes on after one
// (so does the guarded call), but a WARN where the model raised no WARN in
// the same operation is a difference. The model raises the kernel's WARN()s
// where it models them (Timekeeping::warned(): the mult overflow of
// timekeeping_apply_adjustment()), apart from its printk()s; a patch that makes
// the tree warn elsewhere (WARN_ON(tk->ntp_err_mult)) passed with "no
// difference" and a WARN count. Reported before any state difference, which it
// explains.
std::string Step(const KernelTime& kt, Pair& p, const Op& op) {
  variants::call_guard_internal::GuardState& g =
      variants::call_guard_internal::ThisThread();
  const uint64_t warns = g.warns.load(std::memory_order_relaxed);
  const uint64_t warned = p.model->warned();
  std::string d = StepOp(kt, p, op);
  if (g.warns.load(std::memory_order_relaxed) != warns &&
      p.model->warned() == warned) {
    return absl::StrFormat(
        "the tree's WARN() at %s fired; the model warns of nothing in this "
        "operation",
        kt.WarnPlace(g.last_warn.load(std::memory_order_relaxed)));
  }
  return d;
}

// adjtimex() requests over every mode, mostly inside
// timekeeping_validate_timex()'s domain, sometimes outside it.
tk::Timex RandomTimex(std::mt19937_64& rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo +
           static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  tk::Timex t;
  const int flavour = static_cast<int>(rng() % 20);
  if (flavour == 0) {
    t.modes = tk::kAdjOffsetSingleshot;
    t.offset = pick(-600000, 600000);
    return t;
  }
  if (flavour == 1) {
    t.modes = tk::kAdjOffsetSsRead;
    return t;
  }
  if (flavour == 2) {
    t.modes = tk::kAdjSetoffset | (rng() % 2 ? tk::kAdjNano : 0);
    t.time.tv_sec = pick(-3, 3);
    t.time.tv_usec = (t.modes & tk::kAdjNano) ? pick(-5, 999999999 + 5)
                                              : pick(-5, 999999 + 5);
    return t;
  }
  if (flavour == 3) return t;  // A plain read.
  for (uint32_t b : kAdjtimexModeBits) {
    if (rng() % 3 == 0) t.modes |= b;
  }
  t.offset = pick(-700000, 700000) * ((t.modes & tk::kAdjNano) ? 1000 : 1);
  t.freq = pick(-600, 600) * 65536 + pick(-65535, 65535);
  t.maxerror = pick(-10, 20000000);
  t.esterror = pick(-10, 20000000);
  static constexpr int32_t kStatus[] = {
      tk::kStaPll,    tk::kStaFll,      tk::kStaIns,     tk::kStaDel,
      tk::kStaUnsync, tk::kStaFreqhold, tk::kStaPpsfreq, tk::kStaPpstime};
  for (int32_t s : kStatus) {
    if (rng() % 3 == 0) t.status |= s;
  }
  t.constant = pick(-2, 12);
  t.tai = static_cast<int32_t>(pick(-1, 40));
  t.constant = (t.modes & tk::kAdjTai) && rng() % 2 ? pick(-1, 40) : t.constant;
  t.tick = rng() % 8 == 0 ? pick(8000, 12000) : pick(9000, 11000);
  return t;
}

// splitmix64 from a hash of a sequence's boot: the draws of what is added
// to a sequence after RandomSequence() drew it, so that the additions
// leave the seed's other draws as they were.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t h) : h_(h) {}
  uint64_t operator()() {
    h_ += 0x9e3779b97f4a7c15ull;
    uint64_t z = h_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t h_;
};

// One sequence in four switches clocksource once, one in sixteen twice:
// an operation becomes timekeeping_notify() to another clocksource, and
// the operations after it are rescaled to the new counter's frequency.
// Drawn from a hash of the boot, not from rng, so that every other draw
// of a seed stays what it was. Not on a nonstop TSC: clocksource.c's
// suspend clocksource would stay the TSC, whose counter the shims do not
// keep apart from the new one's. Nor with an ntp_tick_adj= beyond 10 ppm:
// the kernel's mult overflow check (timekeeping_apply_adjustment()'s
// WARN_ON_ONCE, a trap here) fires once a switch gives such a boot a
// clocksource with a large mult.
void AddClocksourceChanges(Sequence& s) {
  if (s.suspend_nonstop || s.ops.size() < 4 || s.ntp_tick_adj > 10000 ||
      s.ntp_tick_adj < -10000) {
    return;
  }
  const uint64_t h = s.start * 0x9e3779b97f4a7c15ull ^ s.tsc_khz ^
                     (static_cast<uint64_t>(s.wall.tv_sec) << 7) ^
                     static_cast<uint64_t>(s.source) << 3;
  SplitMix64 next(h);
  const uint64_t pick = next();
  const int changes = (pick & 3) != 0 ? 0 : (pick & 12) != 0 ? 1 : 2;
  SourceKind current = s.source;
  size_t from = 1;
  for (int c = 0; c < changes && from < s.ops.size(); ++c) {
    const size_t at = from + next() % (s.ops.size() - from);
    static constexpr SourceKind kAll[] = {SourceKind::kTsc, SourceKind::kHpet,
                                          SourceKind::kAcpiPm,
                                          SourceKind::kKvmClock};
    SourceKind to = kAll[next() % 4];
    if (to == current) to = kAll[(static_cast<int>(to) + 1) % 4];
    const uint64_t old_hz = static_cast<uint64_t>(SpecFor(current, s).freq) *
                            SpecFor(current, s).scale;
    const variants::ClocksourceRegistration r = SpecFor(to, s);
    const uint64_t new_hz = static_cast<uint64_t>(r.freq) * r.scale;
    Op& op = s.ops[at];
    const uint64_t cycles = op.cycles;
    op = Op{};
    op.kind = OpKind::kChangeClocksource;
    op.cycles = cycles;
    op.source = to;
    // A counter anywhere: at 0, just below a wrap of its width, or random.
    const uint64_t u = next();
    op.new_counter = (u & 3) == 0 ? 0 : (u & 3) == 1 ? r.mask - 1000 : u >> 2;
    absl::StatusOr<tk::Clocksource> cs = ModelClocksourceFor(to, s);
    const uint64_t max_idle_cycles =
        cs.ok() ? static_cast<uint64_t>(
                      static_cast<unsigned __int128>(cs->max_idle_ns) * new_hz /
                      1000000000u)
                : UINT64_MAX;
    const auto rescale = [&](uint64_t v) {
      return static_cast<uint64_t>(static_cast<unsigned __int128>(v) * new_hz /
                                   old_hz);
    };
    for (size_t i = at + 1; i < s.ops.size(); ++i) {
      Op& o = s.ops[i];
      if (o.kind == OpKind::kChangeClocksource) continue;
      o.cycles = rescale(o.cycles);
      if (o.kind == OpKind::kIdle)
        o.cycles = std::min(o.cycles, max_idle_cycles);
      o.sleep_cycles = rescale(o.sleep_cycles);
    }
    current = to;
    from = at + 1;
  }
}

// Corners the random draws seldom reach, drawn from a hash of the boot
// (not from rng, so that every other draw of a seed stays what it was):
// - A stall: the counter runs past the clocksource's max_cycles without a
//   tick (a paused VM, a stuck timekeeping CPU) before a settimeofday, an
//   offset injection, a suspend or a sleep-time injection, whose
//   timekeeping_forward_now() then forwards in max_cycles chunks (6.10+)
//   or overflows its multiply (before). One such operation in eight (not
//   a refused settimeofday, which forwards nothing), on a counter where
//   2-8 max_cycles stay below its MSB (the 64-bit ones).
// - A leap second: one sequence in three sets the time 2.2-3.7 s before a
//   UTC midnight, arms STA_INS or STA_DEL by adjtimex() and idles across
//   midnight (second_overflow() inserts or deletes the second there),
//   reading adjtimex() once just past a second boundary around it, before
//   the next tick.
// - A stall past half a narrow counter's range, and negative motion: a TSC
//   tick a little behind the last one (below).
void AddRareCorners(Sequence& s, bool past_msb_stalls) {
  const uint64_t h = s.start * 0xd1b54a32d192ed03ull ^ s.tsc_khz ^
                     (static_cast<uint64_t>(s.wall.tv_sec) << 11) ^
                     static_cast<uint64_t>(s.source) << 5 ^ s.ops.size();
  SplitMix64 next(h);
  // The clocksource each operation runs on (after AddClocksourceChanges()).
  std::map<SourceKind, tk::Clocksource> sources;
  const auto source = [&](SourceKind k) -> const tk::Clocksource* {
    auto it = sources.find(k);
    if (it == sources.end()) {
      absl::StatusOr<tk::Clocksource> cs = ModelClocksourceFor(k, s);
      if (!cs.ok()) return nullptr;
      it = sources.emplace(k, *cs).first;
    }
    return &it->second;
  };
  std::vector<SourceKind> on(s.ops.size());
  SourceKind current = s.source;
  for (size_t i = 0; i < s.ops.size(); ++i) {
    on[i] = current;
    if (s.ops[i].kind == OpKind::kChangeClocksource) current = s.ops[i].source;
  }
  const auto cycles_per_s = [&](SourceKind k) {
    const variants::ClocksourceRegistration r = SpecFor(k, s);
    return static_cast<uint64_t>(r.freq) * r.scale;
  };
  // The leap second first: its settimeofday may then follow a stall too.
  constexpr size_t kLeapOps = 8;
  if (s.ops.size() >= kLeapOps + 4 && next() % 3 == 0) {
    const size_t at = next() % (s.ops.size() - kLeapOps);
    bool switches = false;
    for (size_t i = at; i < at + kLeapOps; ++i) {
      switches |= s.ops[i].kind == OpKind::kChangeClocksource;
    }
    const tk::Clocksource* cs = source(on[at]);
    if (!switches && cs != nullptr) {
      const uint64_t hz = cycles_per_s(on[at]);
      const uint64_t tick = hz / kHz;
      const uint64_t max_idle = static_cast<uint64_t>(
          static_cast<unsigned __int128>(cs->max_idle_ns) * hz / 1000000000u);
      // A UTC midnight in 2020-2025, 2.2-3.7 s ahead: the first second
      // boundary (where STA_INS/STA_DEL arm, second_overflow()) comes at
      // least 2 s before midnight, in time for a deletion's 23:59:59.
      const int64_t midnight =
          int64_t{86400} * (18262 + static_cast<int64_t>(next() % 2000));
      const int64_t before_ns =
          2200000000 + static_cast<int64_t>(next() % 1500000000);
      Op set;
      set.kind = OpKind::kSetTime;
      set.cycles = tick / 3;
      set.ts = {midnight - 1 - before_ns / 1000000000,
                1000000000 - before_ns % 1000000000};
      if (set.ts.tv_nsec == 1000000000) {
        set.ts = {set.ts.tv_sec + 1, 0};
      }
      Op arm;
      arm.kind = OpKind::kAdjtimex;
      arm.cycles = tick / 3;
      arm.txc.modes = tk::kAdjStatus;
      arm.txc.status = (next() % 2 == 0 ? tk::kStaIns : tk::kStaDel) |
                       (next() % 4 == 0 ? tk::kStaPll : 0);
      s.ops[at] = set;
      s.ops[at + 1] = arm;
      // Six idles of 0.8 s (at most max_idle_ns) cross midnight.
      for (size_t i = at + 2; i < at + kLeapOps; ++i) {
        Op idle;
        idle.kind = OpKind::kIdle;
        idle.cycles = std::min(hz / 10 * 8, max_idle);
        s.ops[i] = idle;
      }
      // One idle becomes an adjtimex() read 50 ms past a second boundary
      // around midnight (the deletion's 23:59:59, midnight, the end of an
      // inserted second), with no tick since the boundary: there
      // __do_adjtimex() answers from the time, not yet from the state
      // second_overflow() moves at the next tick (TIME_OOP read as
      // TIME_WAIT at the end of the inserted second; a 6.1 patch returning
      // TIME_OOP there passed every check).
      const int64_t boundary_ns =
          before_ns + (static_cast<int64_t>(next() % 3) - 1) * 1000000000;
      const auto elapsed_ns = [&](uint64_t cycles) {
        return static_cast<int64_t>(static_cast<unsigned __int128>(cycles) *
                                    1000000000u / hz);
      };
      uint64_t cycles = 0;  // Since the settimeofday.
      for (size_t i = at + 1; i + 1 < at + kLeapOps; ++i) {
        cycles += s.ops[i].cycles;
        const uint64_t next_cycles = cycles + s.ops[i + 1].cycles;
        if (elapsed_ns(cycles) >= boundary_ns ||
            elapsed_ns(next_cycles) < boundary_ns) {
          continue;  // Op i+1 must be the first past the boundary.
        }
        const uint64_t target = static_cast<uint64_t>(
            static_cast<unsigned __int128>(boundary_ns + 50000000) * hz /
            1000000000u);
        if (target <= cycles || target - cycles > max_idle) break;
        Op read;
        read.kind = OpKind::kAdjtimex;
        read.cycles = target - cycles;
        read.txc.modes = 0;
        s.ops[i + 1] = read;
        break;
      }
    }
  }
  for (size_t i = 0; i < s.ops.size(); ++i) {
    Op& op = s.ops[i];
    if (op.kind != OpKind::kSetTime && op.kind != OpKind::kInjectOffset &&
        op.kind != OpKind::kSuspend && op.kind != OpKind::kInjectSleeptime) {
      continue;
    }
    if (next() % 8 != 0) continue;
    // A refused settimeofday does not forward: the stall would reach the
    // next operation's reader, which overflows before 6.10 (Limits).
    if (op.kind == OpKind::kSetTime && op.ts.tv_nsec >= 1000000000) continue;
    const tk::Clocksource* cs = source(on[i]);
    if (cs == nullptr || cs->max_cycles == 0 ||
        cs->max_cycles > (cs->mask >> 1) / 8) {
      continue;
    }
    op.cycles = cs->max_cycles * (2 + next() % 6) + next() % cs->max_cycles;
  }
  // A stall past half a narrow counter's range (hpet's 32 bits, acpi_pm's
  // 24; a paused VM, not NO_HZ, which stops at max_idle_ns): before 6.13
  // clocksource_delta() took a delta past the MSB for negative motion and
  // accumulated nothing; since 6.13 (and its stable backports, the
  // max-raw-delta profile) up to 7/8 of the range is a long delta. One
  // idle in eight on such a counter. A tree that reverted the backport
  // passed: no sequence went past the MSB. Not before 6.10, where the
  // model's syscall readers are not the era's there (docs/timekeeper.md).
  for (size_t i = 0; past_msb_stalls && i < s.ops.size(); ++i) {
    if (s.ops[i].kind != OpKind::kIdle) continue;
    const tk::Clocksource* cs = source(on[i]);
    if (cs == nullptr || cs->mask >= (uint64_t{1} << 33)) continue;
    if (next() % 8 != 0) continue;
    s.ops[i].cycles =
        (cs->mask >> 1) + 1 + next() % ((cs->mask >> 2) + (cs->mask >> 3) - 1);
  }
  // Negative motion: one tick in sixteen on the TSC reads a counter up to
  // 5000 cycles behind the last (the tick moved to a CPU whose TSC is a
  // little behind: the wobbles clocksource_delta() clamps to 0). Without
  // it no sequence ever went back, and a tree that dropped the clamp
  // passed.
  for (size_t i = 0; i < s.ops.size(); ++i) {
    if (s.ops[i].kind != OpKind::kTick || on[i] != SourceKind::kTsc) continue;
    if (next() % 16 != 0) continue;
    // The TSC's 64 bits: the advance wraps to a step back.
    s.ops[i].cycles = 0 - (1 + next() % 5000);
  }
}

// `past_msb_stalls`: the narrow-counter stalls past the MSB (AddRareCorners()),
// for a profile whose syscall readers the model's are (6.10+: docs/
// timekeeper.md, deviations).
Sequence RandomSequence(std::mt19937_64& rng, int length,
                        bool past_msb_stalls) {
  static constexpr uint32_t kKhz[] = {2600000, 1000000, 3999999, 2194917,
                                      500000,  4800123, 1843200, 3000000};
  Sequence s;
  s.tsc_khz = kKhz[rng() % (sizeof(kKhz) / sizeof(kKhz[0]))];
  s.suspend_nonstop = rng() % 2 == 0;
  const uint64_t starts[] = {0, 1000, (1ull << 32) - 5000000,
                             rng() % (1ull << 50)};
  s.start = starts[rng() % 4];
  s.wall = {1700000000 + static_cast<int64_t>(rng() % 100000000), 0};
  // x86's RTC reads whole seconds, so the wall time's nsec is 0. One boot
  // in eight has no valid RTC time at all (timekeeping_init() then finds no
  // persistent clock, and timekeeping_suspend() the first nonzero reading
  // makes one): the draw that once gave the nsec, so that the rest of a
  // seed's sequence stays what it was.
  if (rng() % 8 == 0) s.wall = {0, 0};
  // One sequence in four on another clocksource: narrow counters that wrap
  // (and wraps lost past max_raw_delta in long idle), clock mode NONE,
  // kvm-clock's 1 GHz.
  static constexpr SourceKind kOthers[] = {
      SourceKind::kHpet, SourceKind::kAcpiPm, SourceKind::kKvmClock};
  if (rng() % 4 == 0) {
    s.source = kOthers[rng() % 3];
    s.suspend_nonstop = false;  // Only a TSC can be nonstop in S3.
  }
  // One boot in four with ntp_tick_adj=: a few ppm, the 500 ppm NTP
  // allows time_freq, where its shift by NTP_SCALE_SHIFT leaves int64
  // (|value| >= 2^31), and any value. Drawn from a hash of the boot, not
  // from rng, so that every other draw of a seed stays what it was.
  {
    uint64_t h = s.start ^ (static_cast<uint64_t>(s.wall.tv_sec) << 20) ^
                 s.tsc_khz ^ static_cast<uint64_t>(s.source);
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;  // splitmix64's finaliser
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
    const int64_t v = static_cast<int64_t>(h >> 8);
    switch (h & 15) {
      case 0:
        s.ntp_tick_adj = v % 20001 - 10000;
        break;
      case 1:
        s.ntp_tick_adj = (h & 16) != 0 ? 500000 : -500000;
        break;
      case 2:
        s.ntp_tick_adj = ((h & 16) != 0 ? 1 : -1) *
                         ((int64_t{1} << 31) - 1 + static_cast<int64_t>(v % 3));
        break;
      case 3:
        s.ntp_tick_adj = static_cast<int64_t>(h);
        break;
      default:
        break;
    }
  }
  const uint64_t hz = CyclesPerSecond(s);
  const uint64_t tick_cycles = hz / kHz;
  absl::StatusOr<tk::Clocksource> cs = ModelClocksource(s);
  const uint64_t max_idle_cycles =
      cs.ok() ? static_cast<uint64_t>(
                    static_cast<unsigned __int128>(cs->max_idle_ns) * hz /
                    1000000000u)
              : UINT64_MAX;
  for (int i = 0; i < length; ++i) {
    Op op;
    const int r = static_cast<int>(rng() % 100);
    if (r < 55) {
      op.kind = OpKind::kTick;
      op.cycles = tick_cycles - tick_cycles / 20 + rng() % (tick_cycles / 10);
    } else if (r < 62) {
      op.kind = OpKind::kIdle;
      // NO_HZ sleeps at most timekeeping_max_deferment(), the
      // clocksource's max_idle_ns (2.1 s on acpi_pm's 24 bits).
      op.cycles = std::min(tick_cycles * (2 + rng() % 2000), max_idle_cycles);
    } else if (r < 85) {
      op.kind = OpKind::kAdjtimex;
      op.cycles = rng() % tick_cycles;
      op.txc = RandomTimex(rng);
    } else if (r < 90) {
      op.kind = OpKind::kSetTime;
      op.cycles = rng() % tick_cycles;
      op.ts = {1600000000 + static_cast<int64_t>(rng() % 200000000),
               static_cast<int64_t>(rng() % 1000000000)};
      if (rng() % 16 == 0) op.ts.tv_nsec = 1000000000;  // refused
    } else if (r < 95) {
      op.kind = OpKind::kInjectOffset;
      op.cycles = rng() % tick_cycles;
      op.ts = {static_cast<int64_t>(rng() % 20) - 10,
               static_cast<int64_t>(rng() % 1000000000)};
    } else if (r < 98) {
      op.kind = OpKind::kSuspend;
      op.cycles = rng() % tick_cycles;
      op.sleep_sec = static_cast<int64_t>(rng() % 5000);
      op.sleep_cycles = static_cast<uint64_t>(op.sleep_sec) * hz + rng() % hz;
    } else {
      op.kind = OpKind::kInjectSleeptime;
      op.cycles = rng() % tick_cycles;
      // rtc_resume() injects whole seconds; other callers any timespec
      // (negative ones are refused with a WARN: not drawn).
      op.ts = {static_cast<int64_t>(rng() % 5000),
               rng() % 2 ? 0 : static_cast<int64_t>(rng() % 1000000000)};
    }
    s.ops.push_back(op);
  }
  AddClocksourceChanges(s);
  AddRareCorners(s, past_msb_stalls);
  return s;
}

// Greedy shrinking: drop operations (halves first, then one by one)
// while the sequence still differs somewhere, then the adjtimex() mode
// bits it does not need (a minimal sequence shows only what matters).
Sequence Shrink(const KernelTime& kt, const tk::TimekeeperProfile& profile,
                Sequence s) {
  size_t f = 0;
  // Everything after the failing operation is irrelevant; a difference at
  // boot needs no operation at all.
  if (CompareSequence(kt, profile, s, &f).starts_with("boot:")) {
    s.ops.clear();
    return s;
  }
  s.ops.resize(std::min(s.ops.size(), f + 1));
  for (size_t chunk = s.ops.size() / 2; chunk >= 1; chunk /= 2) {
    for (size_t i = 0; i + chunk <= s.ops.size();) {
      Sequence t = s;
      t.ops.erase(t.ops.begin() + static_cast<long>(i),
                  t.ops.begin() + static_cast<long>(i + chunk));
      size_t tf = 0;
      if (!CompareSequence(kt, profile, t, &tf).empty()) {
        t.ops.resize(std::min(t.ops.size(), tf + 1));
        s = t;
      } else {
        i += chunk;
      }
    }
  }
  for (size_t i = 0; i < s.ops.size(); ++i) {
    // ADJ_ADJTIME's calls (the singleshot flavours) are one mode each.
    if (s.ops[i].kind != OpKind::kAdjtimex ||
        (s.ops[i].txc.modes & tk::kAdjAdjtime) != 0) {
      continue;
    }
    for (uint32_t b : kAdjtimexModeBits) {
      if (i >= s.ops.size() || (s.ops[i].txc.modes & b) == 0) continue;
      Sequence t = s;
      t.ops[i].txc.modes &= ~b;
      size_t tf = 0;
      if (!CompareSequence(kt, profile, t, &tf).empty()) {
        t.ops.resize(std::min(t.ops.size(), tf + 1));
        s = t;
      }
    }
  }
  return s;
}

}  // namespace

absl::StatusOr<tk::TimekeeperProfile> ProfileForTree(
    const std::string& version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2) {
    return absl::InvalidArgumentError("kernel version " + version);
  }
  // The latest era at or before the tree's version.
  std::string era;
  for (const std::string& e : tk::KnownEras()) {
    int a = 0, b = 0;
    std::sscanf(e.c_str(), "%d.%d", &a, &b);
    if (a < major || (a == major && b <= minor)) era = e;
  }
  if (era.empty()) {
    return absl::InvalidArgumentError("no model era at or before " + version);
  }
  return tk::ProfileForEra(era);
}

absl::StatusOr<TreeProfile> ProfileForKernelTime(const KernelTime& kt,
                                                 const std::string& version) {
  absl::StatusOr<tk::TimekeeperProfile> era = ProfileForTree(version);
  if (!era.ok()) return era.status();
  TreeProfile t{*era, {}, ""};
  // Negative motion: a 24-bit counter (acpi_pm) 0x900000 cycles past
  // cycle_last is past the MSB but below max_raw_delta (7/8 of the mask):
  // before 6.13 a negative delta (nothing accumulates), after it a long
  // one (a tick accumulates).
  Sequence probe;
  probe.source = SourceKind::kAcpiPm;
  vdsolab_kt_clock c = TreeClocksource(probe);
  vdsolab_kt_clock_fields f{};
  vdsolab_kt_state st{};
  kt.api().reset();
  const std::string fault =
      TreeCall(kt, "timekeeping_init", [&](const vdsolab_kt_api& a) {
        a.register_clock(&c, &f);
        a.init(0, 1700000000, 0, 0, 0);
        a.tick(0x900000);
        a.read_state(&st);
      });
  kt.api().take_events();
  kt.api().reset();
  // A fault here is a patch's bug, which the comparison then finds as a
  // difference: the era's profile as it is, and the fault noted.
  t.probe_fault = fault;
  if (fault.empty() && era->negative_motion == tk::NegativeMotion::kMsb &&
      st.tkr_mono.cycle_last != 0) {
    t.backports.push_back("max-raw-delta");
  }
  for (const std::string& b : t.backports) {
    if (absl::Status s = tk::ApplyBackport(b, &t.profile); !s.ok()) return s;
  }
  return t;
}

absl::StatusOr<TreeProfile> ProfileForBuild(const BuildOptions& options,
                                            const KernelTime& kt,
                                            const std::string& version,
                                            std::string* note) {
  note->clear();
  absl::StatusOr<TreeProfile> patched = ProfileForKernelTime(kt, version);
  if (!patched.ok() || options.patches.empty()) return patched;
  BuildOptions plain = options;
  plain.patches.clear();
  absl::StatusOr<BuiltKernelTime> base = BuildKernelTime(plain);
  if (!base.ok()) return base.status();
  absl::StatusOr<KernelTime> base_kt = KernelTime::Load(base->so_path);
  if (!base_kt.ok()) return base_kt.status();
  absl::StatusOr<TreeProfile> unpatched =
      ProfileForKernelTime(*base_kt, base->version);
  if (!unpatched.ok()) return unpatched.status();
  const auto named = [](const TreeProfile& t) {
    return t.backports.empty() ? std::string("none")
                               : absl::StrJoin(t.backports, ", ");
  };
  if (!patched->probe_fault.empty()) {
    // The patch's bug, which the comparison then finds; the profile is
    // the unpatched tree's whatever the patched probe did.
    *note = absl::StrFormat(
        "probing the patched tree for later changes: %s; judged by the "
        "unpatched tree's profile (era %s + %s)",
        patched->probe_fault, unpatched->profile.era, named(*unpatched));
  } else if (patched->backports != unpatched->backports) {
    *note = absl::StrFormat(
        "the patch changes what the tree does where vdsolab probes it for "
        "later changes (backports: %s in the unpatched tree, %s with the "
        "patch): judged by the unpatched tree's profile (era %s + %s), so "
        "the change is a difference from the model",
        named(*unpatched), named(*patched), unpatched->profile.era,
        named(*unpatched));
  }
  return unpatched;
}

std::string CompareSequence(const KernelTime& kt,
                            const tk::TimekeeperProfile& profile,
                            const Sequence& seq, size_t* failing_op) {
  Pair p;
  absl::StatusOr<std::string> boot = Boot(kt, profile, seq, &p);
  *failing_op = 0;
  if (!boot.ok()) return "boot: " + std::string(boot.status().message());
  if (!boot->empty()) return "boot: " + *boot;
  for (size_t i = 0; i < seq.ops.size(); ++i) {
    if (std::string d = Step(kt, p, seq.ops[i]); !d.empty()) {
      *failing_op = i;
      return absl::StrFormat("op %d (%s): %s", i, KindName(seq.ops[i].kind), d);
    }
  }
  return "";
}

std::string FormatOp(const Op& op) {
  std::string s =
      (op.cycles >> 63) != 0
          // A 64-bit counter's step back (negative motion).
          ? absl::StrFormat("%s -%d cycles (the counter steps back)",
                            KindName(op.kind), 0 - op.cycles)
          : absl::StrFormat("%s +%d cycles", KindName(op.kind), op.cycles);
  switch (op.kind) {
    case OpKind::kAdjtimex: {
      const tk::Timex& t = op.txc;
      s += absl::StrFormat(
          " modes=%#x offset=%d freq=%d maxerror=%d esterror=%d "
          "status=%#x constant=%d tick=%d tai=%d time=%d.%d",
          t.modes, t.offset, t.freq, t.maxerror, t.esterror, t.status,
          t.constant, t.tick, t.tai, t.time.tv_sec, t.time.tv_usec);
      break;
    }
    case OpKind::kSetTime:
    case OpKind::kInjectOffset:
    case OpKind::kInjectSleeptime:
      s += absl::StrFormat(" %d.%09d", op.ts.tv_sec, op.ts.tv_nsec);
      break;
    case OpKind::kSuspend:
      s += absl::StrFormat(" sleep %d s, %d cycles", op.sleep_sec,
                           op.sleep_cycles);
      break;
    case OpKind::kChangeClocksource:
      s += absl::StrFormat(" to %s, its counter %d (masked to its width)",
                           SourceName(op.source), op.new_counter);
      break;
    default:
      break;
  }
  return s;
}

std::string FormatSequence(const Sequence& seq) {
  std::string s = absl::StrFormat(
      "boot: %s %d Hz nonstop=%d counter=%d wall=%d.%09d%s\n",
      SourceName(seq.source), CyclesPerSecond(seq), seq.suspend_nonstop ? 1 : 0,
      seq.start, seq.wall.tv_sec, seq.wall.tv_nsec,
      seq.ntp_tick_adj == 0 ? ""
                            : absl::StrCat(" ntp_tick_adj=", seq.ntp_tick_adj));
  for (size_t i = 0; i < seq.ops.size(); ++i) {
    s += absl::StrFormat("  op %d: %s\n", i, FormatOp(seq.ops[i]));
  }
  return s;
}

absl::StatusOr<ConformResult> RunConform(const KernelTime& kt,
                                         const tk::TimekeeperProfile& profile,
                                         const ConformOptions& options) {
  ConformResult r;
  std::mt19937_64 rng(options.seed);
  std::map<std::string, uint64_t> counts;
  double model_s = 0, tree_s = 0;
  using Clock = std::chrono::steady_clock;
  while (r.ops_compared < options.ops) {
    const int len = static_cast<int>(
        std::min<uint64_t>(static_cast<uint64_t>(options.ops_per_sequence),
                           options.ops - r.ops_compared));
    // Before 6.10 the model's syscall readers are not the era's past the
    // MSB of a narrow counter (a documented deviation): no such stall.
    Sequence seq = RandomSequence(rng, len, profile.chunked_forward);
    size_t f = 0;
    variants::call_guard_internal::GuardState& g =
        variants::call_guard_internal::ThisThread();
    const uint64_t warns = g.warns.load(std::memory_order_relaxed);
    g.first_warn.store(0, std::memory_order_relaxed);
    const std::string d = CompareSequence(kt, profile, seq, &f);
    // The WARN()s of sequences that agreed: in one that differs, a WARN
    // the model does not take is the difference itself, not a warning.
    if (const uint64_t n = g.warns.load(std::memory_order_relaxed) - warns;
        n != 0 && d.empty()) {
      if (r.tree_warns == 0) {
        r.first_warn =
            kt.WarnPlace(g.first_warn.load(std::memory_order_relaxed));
      }
      r.tree_warns += n;
    }
    ++r.sequences;
    if (!d.empty()) {
      r.ok = false;
      r.ops_compared += f;
      r.minimal = Shrink(kt, profile, seq);
      r.difference = CompareSequence(kt, profile, r.minimal, &r.failing_op);
      r.events = kt.api().take_events();
      break;
    }
    r.ops_compared += seq.ops.size();
    for (const Op& op : seq.ops) ++counts[KindName(op.kind)];
    // Throughput of each side alone, on the same sequence.
    {
      const auto t0 = Clock::now();
      Pair p;
      absl::StatusOr<tk::Clocksource> cs = ModelClocksource(seq);
      if (!cs.ok()) return cs.status();
      p.cs = *cs;
      uint64_t mask = p.cs.mask;
      absl::StatusOr<const variants::Variant*> writer =
          variants::FindVariant(WriterEra(profile));
      if (!writer.ok()) return writer.status();
      PageSink sink(*writer);  // The model publishes as the tree does.
      tk::Timekeeping model(p.cs, kHz, &sink, profile);
      uint64_t now = seq.start & mask;
      if (seq.ntp_tick_adj != 0) model.NtpTickAdjSetup(seq.ntp_tick_adj);
      model.Init(now, seq.wall, Timespec64{});
      for (const Op& op : seq.ops) {
        now = (now + op.cycles) & mask;
        switch (op.kind) {
          case OpKind::kTick:
          case OpKind::kIdle:
            model.Advance(tk::AdvanceMode::kTick, now);
            break;
          case OpKind::kAdjtimex: {
            tk::Timex t = op.txc;
            model.Adjtimex(&t, now);
            break;
          }
          case OpKind::kSetTime:
            model.SetTimeOfDay(op.ts, now);
            break;
          case OpKind::kInjectOffset:
            model.InjectOffset(op.ts, now);
            break;
          case OpKind::kSuspend: {
            const Timespec64 rtc{
                static_cast<int64_t>(model.timekeeper().xtime_sec), 0};
            model.Suspend(now, rtc);
            now = (now + op.sleep_cycles) & mask;
            model.Resume(tk::ResumeInput{now, {rtc.tv_sec + op.sleep_sec, 0}});
            break;
          }
          case OpKind::kInjectSleeptime:
            model.InjectSleeptime64(op.ts, now);
            break;
          case OpKind::kChangeClocksource: {
            absl::StatusOr<tk::Clocksource> next =
                ModelClocksourceFor(op.source, seq);
            if (!next.ok()) return next.status();
            const uint64_t now_new = op.new_counter & next->mask;
            model.ChangeClocksource(*next, now, now_new);
            now = now_new;
            mask = next->mask;
            break;
          }
        }
      }
      const auto t1 = Clock::now();
      kt.api().reset();
      std::string timing_fault = TreeBootParams(kt, seq);
      // The same operations as the comparison just ran, contained the
      // same way (its WARN()s go on after their traps).
      if (timing_fault.empty())
        timing_fault =
            TreeCall(kt, "timekeeping", [&](const vdsolab_kt_api& a) {
              vdsolab_kt_clock c = TreeClocksource(seq);
              vdsolab_kt_clock_fields cf{};
              a.register_clock(&c, &cf);
              mask = p.cs.mask;
              now = seq.start & mask;
              a.init(now, seq.wall.tv_sec, seq.wall.tv_nsec, 0, 0);
              for (const Op& op : seq.ops) {
                now = (now + op.cycles) & mask;
                switch (op.kind) {
                  case OpKind::kTick:
                  case OpKind::kIdle:
                    a.tick(now);
                    break;
                  case OpKind::kAdjtimex: {
                    vdsolab_kt_timex t = ToKernel(op.txc);
                    a.adjtimex(&t, now);
                    break;
                  }
                  case OpKind::kSetTime:
                    a.settimeofday(op.ts.tv_sec, op.ts.tv_nsec, now);
                    break;
                  case OpKind::kInjectOffset:
                    a.inject_offset(op.ts.tv_sec, op.ts.tv_nsec, now);
                    break;
                  case OpKind::kSuspend: {
                    vdsolab_kt_state s{};
                    a.read_state(&s);
                    const int64_t rtc = static_cast<int64_t>(s.xtime_sec);
                    a.suspend(now, rtc, 0);
                    now = (now + op.sleep_cycles) & mask;
                    a.resume(now, rtc + op.sleep_sec, 0);
                    break;
                  }
                  case OpKind::kInjectSleeptime:
                    a.inject_sleeptime(op.ts.tv_sec, op.ts.tv_nsec, now);
                    break;
                  case OpKind::kChangeClocksource: {
                    vdsolab_kt_clock nc =
                        internal::ToKernelClock(SpecFor(op.source, seq));
                    vdsolab_kt_clock_fields nf{};
                    const uint64_t now_new = op.new_counter & nc.mask;
                    a.change_clocksource(&nc, &nf, now, now_new);
                    now = now_new;
                    mask = nc.mask;
                    break;
                  }
                }
              }
            });
      kt.api().take_events();
      const auto t2 = Clock::now();
      // A run the guard stopped (or that ran past a quarter of its bound)
      // is no sample of the tree's speed.
      if (timing_fault.empty()) {
        model_s += std::chrono::duration<double>(t1 - t0).count();
        tree_s += std::chrono::duration<double>(t2 - t1).count();
      }
    }
  }
  for (const auto& [k, v] : counts) {
    r.op_counts.push_back(absl::StrFormat("%s %d", k, v));
  }
  const double n = static_cast<double>(r.ops_compared);
  r.model_ops_per_s = model_s > 0 ? n / model_s : 0;
  r.tree_ops_per_s = tree_s > 0 ? n / tree_s : 0;
  return r;
}

}  // namespace vdsolab::ktime
