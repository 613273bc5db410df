#include "host/conform.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/bytes.h"
#include "common/clock_result.h"
#include "common/math64.h"
#include "common/rng.h"
#include "host/live_vvar.h"
#include "host/vdso_elf.h"
#include "timekeeper/clocksource.h"
#include "timekeeper/timekeeping.h"
#include "timekeeper/vsyscall.h"
#include "vdso/access.h"
#include "vdso/datapage.h"
#include "vdso/upstream_reader.h"
#include "vdso/vvar_page.h"

namespace vdsolab::host {
namespace {

constexpr size_t kMaxDetails = 5;

// --- The emulated counter (child process only) ---

// Where the copy's rdtsc (2 bytes) and rdtscp (3 bytes) were, now ud2.
struct PatchedSite {
  uintptr_t address;
  bool rdtscp;
};
constexpr int kMaxSites = 64;
PatchedSite g_sites[kMaxSites];
int g_num_sites = 0;
volatile uint64_t g_tsc = 0;
volatile uint64_t g_traps = 0;

// SIGILL at a patched site: answer with g_tsc (and TSC_AUX 0 for rdtscp)
// and step over the ud2. Anything else is a real fault: restore the
// default action so it crashes as it would have.
extern "C" void OnSigill(int, siginfo_t*, void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
  greg_t* regs = uc->uc_mcontext.gregs;
  const auto ip = static_cast<uintptr_t>(regs[REG_RIP]);
  for (int i = 0; i < g_num_sites; ++i) {
    if (g_sites[i].address != ip) continue;
    const uint64_t v = g_tsc;
    regs[REG_RAX] = static_cast<greg_t>(v & 0xffffffffu);
    regs[REG_RDX] = static_cast<greg_t>(v >> 32);
    if (g_sites[i].rdtscp) regs[REG_RCX] = 0;
    regs[REG_RIP] += 2;  // An rdtscp site continues with its nop.
    g_traps = g_traps + 1;
    return;
  }
  signal(SIGILL, SIG_DFL);
}

// Replaces rdtsc (0f 31) with ud2 (0f 0b) and rdtscp (0f 01 f9) with
// ud2; nop (0f 0b 90) in [text, text + size). Returns how many.
int PatchCounterReads(uint8_t* text, size_t size) {
  g_num_sites = 0;
  for (size_t i = 0; i + 1 < size && g_num_sites < kMaxSites; ++i) {
    if (text[i] != 0x0f) continue;
    if (text[i + 1] == 0x31) {
      text[i + 1] = 0x0b;
      g_sites[g_num_sites++] = {reinterpret_cast<uintptr_t>(text + i), false};
      ++i;
    } else if (i + 2 < size && text[i + 1] == 0x01 && text[i + 2] == 0xf9) {
      text[i + 1] = 0x0b;
      text[i + 2] = 0x90;
      g_sites[g_num_sites++] = {reinterpret_cast<uintptr_t>(text + i), true};
      i += 2;
    }
  }
  return g_num_sites;
}

uint64_t LiveTsc() {
  unsigned int lo, hi;
  asm volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

// vdsolab's reader on the copied page, with the chosen counter.
struct FixedTscAccess {
  uint64_t tsc;
  bool fell_back = false;
  template <class T>
  T Load(const uint8_t* p) const {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
  uint64_t ReadTsc() const { return tsc; }
  uint64_t ReadTscp() const { return tsc; }
  uint64_t ReadTscPlain() const { return tsc; }
  void Rmb() const {}
  void CpuRelax() const {}
  bool MayRetry() const { return true; }  // The copy never changes.
  ClockResult Fallback(ClockId) {
    fell_back = true;
    return ClockResult::Error(-kEinval);
  }
};
static_assert(vdso::VdsoAccess<FixedTscAccess>);

// The counter the vDSO converts for a given TSC: the TSC itself, or the
// kvm-clock nanoseconds the pvclock page gives for it.
uint64_t VdsoCounter(const LiveSnapshot& s, uint64_t tsc) {
  if (s.pvclock_page.empty()) return tsc & kS64Max;
  FixedTscAccess access{tsc};
  const std::optional<uint64_t> ns =
      vdso::upstream::upstream_internal::VreadPvclock(access,
                                                      s.pvclock_page.data());
  return ns.value_or(kU64Max);
}

// A TSC that makes the vDSO counter `target` (approximately, for kvm-clock:
// the inverse of pvclock_scale_delta, which rounds).
uint64_t TscFor(const LiveSnapshot& s, uint64_t target) {
  if (s.pvclock_page.empty()) return target;
  const auto& p = s.pvclock_page;
  const uint64_t system_time = Load64(p, vdso::kPvtiSystemTime);
  const uint32_t mul = Load32(p, vdso::kPvtiMul);
  const int shift = static_cast<int8_t>(p[vdso::kPvtiShift]);
  const unsigned __int128 ns = target - system_time;  // Wraps if below.
  unsigned __int128 delta = (ns << 32) / (mul == 0 ? 1 : mul);
  delta = shift < 0 ? delta << -shift : delta >> shift;
  return Load64(p, vdso::kPvtiTscTimestamp) + static_cast<uint64_t>(delta);
}

uint64_t ChooseTsc(Regime r, const LiveSnapshot& s, uint64_t live, Rng& rng) {
  const uint32_t hres = vdso::ClockDataOffset(vdso::kCsHresCoarse);
  const uint64_t last = Load64(s.time_page, hres + vdso::kVcCycleLast);
  const uint64_t max = Load64(s.time_page, hres + vdso::kVcMaxCycles);
  switch (r) {
    case Regime::kLive:
      return live;
    case Regime::kAhead:
      return TscFor(s, last + rng.InRange(0, max));
    case Regime::kBeyondMaxCycles:
      return TscFor(s, last + max + 1 + rng.InRange(0, max * 64));
    case Regime::kBehind: {
      // On kvm-clock, only values between the hypervisor's system_time and
      // cycle_last are reachable below cycle_last.
      uint64_t floor = 0;
      if (!s.pvclock_page.empty()) {
        floor = Load64(s.pvclock_page, vdso::kPvtiSystemTime);
      }
      if (last <= floor + 1) return TscFor(s, last);
      const uint64_t span = std::min<uint64_t>(last - floor - 1, 1ull << 32);
      return TscFor(s, last - 1 - rng.InRange(0, span - 1));
    }
    case Regime::kNear2p62: {
      // At or just past 2^62, where the x86 vDSO's bit-62 filter clamps.
      // (Just below it the overflow-safe multiply yields ~2^62 ns, and the
      // host code's __iter_div_u64_rem() loops 4.6e9 times.) The inverse of
      // the pvclock scaling rounds down: step up until it is past.
      const uint64_t target = last + (1ull << 62) + rng.InRange(0, 1ull << 21);
      uint64_t tsc = TscFor(s, target);
      for (int i = 0;
           i < 64 && ((VdsoCounter(s, tsc) - last) & (1ull << 62)) == 0; ++i) {
        tsc += 4;
      }
      return tsc;
    }
    case Regime::kNear2p63:
      if (!s.pvclock_page.empty()) {
        // kvm-clock cannot reach 2^63: take TSC deltas past 2^63 instead
        // (the pvclock scaling's top bit), which land past 2^62 ns.
        return Load64(s.pvclock_page, vdso::kPvtiTscTimestamp) + (1ull << 63) +
               (1ull << 62) + rng.InRange(0, 1ull << 20);
      }
      // The TSC's sign bit: S64_MAX masking turns values past 2^63 into
      // negative motion.
      return (1ull << 63) - (1ull << 20) + rng.InRange(0, 1ull << 21);
    case Regime::kFarBehind:
      if (!s.pvclock_page.empty()) {
        // A vCPU whose TSC reads before the hypervisor's timestamp: the
        // TSC delta pvclock scales is negative.
        const uint64_t stamp = Load64(s.pvclock_page, vdso::kPvtiTscTimestamp);
        return stamp - 1 - rng.InRange(0, 1ull << 24);
      }
      return last - (1ull << 40) - rng.InRange(0, 1ull << 20);
  }
  return live;
}

// Child side: writes the report as lines to `fd`.
void Emit(int fd, const std::string& line) {
  std::string out = line + "\n";
  const char* p = out.data();
  size_t left = out.size();
  while (left > 0) {
    const ssize_t n = write(fd, p, left);
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n') c = '\x1f';
  }
  return s;
}

// A time page the timekeeper model publishes for a TSC: a random
// frequency, HZ, boot counter, a few ticks, NTP frequency and tick
// corrections.
absl::StatusOr<LiveSnapshot> SyntheticTscPage(Rng& rng) {
  static constexpr uint32_t kKhz[] = {2600000, 2095998, 3000000, 2596005,
                                      3699999, 1000000, 4294967};
  static constexpr int kHz[] = {100, 250, 300, 1000};
  absl::StatusOr<timekeeper::Clocksource> cs =
      timekeeper::MakeTscClocksource(kKhz[rng.Below(std::size(kKhz))]);
  if (!cs.ok()) return cs.status();
  absl::StatusOr<std::unique_ptr<vdso::VvarPage>> page =
      vdso::VvarPage::Create();
  if (!page.ok()) return page.status();
  timekeeper::VvarPublisher publisher(page->get(), 1);
  timekeeper::Timekeeping tk(*cs, kHz[rng.Below(std::size(kHz))], &publisher);
  uint64_t now = rng.InRange(0, 1ull << 44);
  tk.Init(now,
          {static_cast<int64_t>(rng.InRange(1000000000, 2000000000)),
           static_cast<int64_t>(rng.Below(1000000000))},
          {static_cast<int64_t>(rng.Below(100000)),
           static_cast<int64_t>(rng.Below(1000000000))});
  const uint64_t ci = tk.timekeeper().cycle_interval;
  const int steps = static_cast<int>(rng.InRange(1, 40));
  for (int i = 0; i < steps; ++i) {
    now += rng.InRange(ci / 2, 3 * ci);
    if (rng.Below(6) == 0) {
      timekeeper::Timex txc;
      txc.modes =
          rng.Below(2) == 0 ? timekeeper::kAdjFrequency : timekeeper::kAdjTick;
      txc.freq = static_cast<int64_t>(rng.Below(1000ull << 16)) - (500ll << 16);
      txc.tick = static_cast<int64_t>(rng.InRange(9000, 11000));
      if (!tk.Adjtimex(txc, now).ok()) {
        return absl::InternalError("adjtimex in the model failed");
      }
    } else {
      tk.Advance(timekeeper::AdvanceMode::kTick, now);
    }
  }
  LiveSnapshot snap;
  snap.time_page.assign((*page)->data(), (*page)->data() + vdso::kPageSize);
  return snap;
}

int ConformChild(int fd, const ConformOptions& options) {
  absl::StatusOr<VdsoMappings> maps = FindVdsoMappings();
  if (!maps.ok()) {
    Emit(fd, "SKIP " + std::string(maps.status().message()));
    return 0;
  }
  const KernelVersion kernel = RunningKernel();
  Emit(fd, "KERNEL " + kernel.release);
  absl::StatusOr<LiveSnapshot> first = TakeSnapshot(*maps);
  if (!first.ok()) {
    Emit(fd, "SKIP " + std::string(first.status().message()));
    return 0;
  }
  if (absl::Status s = CheckLayout(*first, kernel); !s.ok()) {
    Emit(fd, "SKIP " + std::string(s.message()));
    return 0;
  }
  Emit(fd, first->pvclock_page.empty() ? "MODE TSC" : "MODE PVCLOCK");
  if (!maps->vdso) {
    Emit(fd, "SKIP there is no [vdso] mapping");
    return 0;
  }
  // The copy: the vvar area and the code at the kernel's distances.
  const uint64_t area_size = maps->vdso->end - maps->vvar->start;
  const uint64_t text_offset = maps->vdso->start - maps->vvar->start;
  const uint64_t image_size = maps->vdso->end - maps->vdso->start;
  if (!maps->vvar_vclock ||
      maps->vvar_vclock->start - maps->vvar->start !=
          vdso::kPvclockPageOffset ||
      text_offset !=
          vdso::kPvclockPageOffset + vdso::kVvarVclockPages * vdso::kPageSize) {
    Emit(fd,
         "SKIP the [vvar], [vvar_vclock] and [vdso] mappings are not "
         "arranged as x86-64 6.13+ arranges them");
    return 0;
  }
  absl::StatusOr<VdsoSymbol> fn =
      FindVdsoSymbol("__vdso_clock_gettime", image_size);
  absl::StatusOr<VdsoSymbol> text = FindVdsoText(image_size);
  if (!fn.ok() || !text.ok()) {
    Emit(fd, "SKIP " + std::string(
                           (fn.ok() ? text.status() : fn.status()).message()));
    return 0;
  }
  void* mem = mmap(nullptr, area_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    Emit(fd, "ERROR mmap of the vDSO copy failed");
    return 1;
  }
  auto* area = static_cast<uint8_t*>(mem);
  std::memcpy(area + text_offset,
              reinterpret_cast<const void*>(maps->vdso->start), image_size);
  uint8_t* copied_text =
      area + text_offset + (text->address - maps->vdso->start);
  const int patched = PatchCounterReads(copied_text, text->size);
  Emit(fd, absl::StrFormat("PATCHED %d", patched));
  if (patched == 0) {
    Emit(fd, "SKIP the vDSO code has no rdtsc/rdtscp to emulate");
    return 0;
  }
  if (mprotect(area + text_offset, image_size, PROT_READ | PROT_EXEC) != 0) {
    Emit(fd, "SKIP cannot make the vDSO copy executable (mprotect)");
    return 0;
  }
  using ClockGettimeFn = int (*)(clockid_t, struct timespec*);
  const auto host_clock_gettime = reinterpret_cast<ClockGettimeFn>(
      area + text_offset + (fn->address - maps->vdso->start));

  // What the updates between snapshots show (tk_setup_internals check).
  std::vector<LiveSnapshot> samples;
  for (int i = 0; i < options.analysis_samples; ++i) {
    absl::StatusOr<LiveSnapshot> s = TakeSnapshot(*maps);
    if (s.ok()) samples.push_back(*std::move(s));
    struct timespec pause = {0, 500000};
    nanosleep(&pause, nullptr);
  }
  const UpdateAnalysis a = AnalyzeUpdates(samples, KernelHz());
  Emit(fd, absl::StrFormat("ANALYSIS %d %d %d %d %d %d %d %d %d %d %d %d",
                           a.samples, a.updates_seen, a.min_step_cycles,
                           a.gcd_step_cycles, a.median_period_ns, a.hz,
                           a.predicted_cycle_interval, a.predicted_raw_interval,
                           a.steps_whole_intervals, a.raw_increments_exact,
                           a.mono_increments_exact, a.mono_pairs_same_mult));
  Emit(fd, absl::StrFormat("MULTSHIFT %d %d", a.raw_mult, a.shift));

  struct sigaction sa = {};
  sa.sa_sigaction = OnSigill;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGILL, &sa, nullptr);

  Rng rng(options.seed);
  uint64_t races = 0, details = 0;
  using Cells = uint64_t[kMaxClocks][kNumRegimes][2];
  // Puts `snap` into the copy's vvar area and compares every served clock
  // in every counter regime; `live` is the counter for the live regime.
  const auto compare_page = [&](const LiveSnapshot& snap, uint64_t live,
                                Cells& cells) {
    std::memcpy(area, snap.time_page.data(), snap.time_page.size());
    // Far behind on kvm-clock: the pvclock parameters of a TSC above 4 GHz
    // (tsc_shift -2, another multiplier). The host code runs on them no
    // less, and with them a TSC before tsc_timestamp tells pvclock
    // arithmetic apart that this host's own parameters (shift -1) cannot.
    LiveSnapshot fast;
    if (!snap.pvclock_page.empty()) {
      fast = snap;
      fast.pvclock_page[vdso::kPvtiShift] = static_cast<uint8_t>(-2);
      const uint32_t mul =
          0x80000000u + static_cast<uint32_t>(rng.Below(0x80000000u));
      std::memcpy(fast.pvclock_page.data() + vdso::kPvtiMul, &mul, 4);
    }
    for (int r = 0; r < kNumRegimes; ++r) {
      const bool use_fast = r == static_cast<int>(Regime::kFarBehind) &&
                            !snap.pvclock_page.empty();
      const LiveSnapshot& page = use_fast ? fast : snap;
      if (!page.pvclock_page.empty()) {
        std::memcpy(area + vdso::kPvclockPageOffset, page.pvclock_page.data(),
                    page.pvclock_page.size());
      }
      const uint64_t tsc = ChooseTsc(static_cast<Regime>(r), page, live, rng);
      // The host code normalises with a loop over whole seconds; skip a
      // counter so far ahead that it would spin for seconds.
      const uint64_t ahead =
          VdsoCounter(page, tsc) - Load64(snap.time_page, vdso::kVcCycleLast);
      const uint32_t hmult = Load32(snap.time_page, vdso::kVcMult);
      const uint32_t hshift = Load32(snap.time_page, vdso::kVcShift);
      if ((ahead & (1ull << 62)) == 0 &&
          ((static_cast<unsigned __int128>(ahead) * hmult) >> hshift) >
              static_cast<unsigned __int128>(10000000) * kNsecPerSec) {
        continue;
      }
      for (ClockId clock : kVdsoServedClocks) {
        struct timespec ts = {};
        g_tsc = tsc;
        const int ret = host_clock_gettime(clock, &ts);
        const ClockResult host_result =
            ret == 0 ? ClockResult::Ok({ts.tv_sec, ts.tv_nsec})
                     : ClockResult::Error(ret);
        FixedTscAccess access{tsc};
        const std::optional<ClockResult> ours =
            vdso::upstream::ClockGettime(access, area, clock);
        if (!ours || access.fell_back) continue;  // Both went to the syscall.
        auto& cell = cells[clock][r];
        ++cell[0];
        if (*ours == host_result) continue;
        ++cell[1];
        if (details++ < kMaxDetails) {
          Emit(fd,
               "MISMATCH " +
                   OneLine(absl::StrFormat(
                       "%s, %s: tsc %#x (vDSO counter %#x): host vDSO "
                       "%s, vdsolab %s\n%s",
                       ClockName(clock), RegimeName(static_cast<Regime>(r)),
                       tsc, VdsoCounter(page, tsc),
                       FormatClockResult(host_result), FormatClockResult(*ours),
                       DescribeSnapshotText(page, kernel))));
        }
      }
    }
  };

  // The live page: the kernel's own data, copied consistently.
  Cells live_cells = {};
  for (int done = 0; done < options.samples; ++done) {
    absl::StatusOr<LiveSnapshot> snap = TakeSnapshot(*maps);
    if (!snap.ok()) {
      Emit(fd, "ERROR " + std::string(snap.status().message()));
      return 1;
    }
    races += snap->retries;
    compare_page(*snap, LiveTsc(), live_cells);
  }
  for (ClockId clock : kVdsoServedClocks) {
    for (int r = 0; r < kNumRegimes; ++r) {
      Emit(fd,
           absl::StrFormat("CELL %d %d %d %d", clock, r,
                           live_cells[clock][r][0], live_cells[clock][r][1]));
    }
  }

  // Synthetic TSC pages: the timekeeper model's own updates for TSCs of
  // several frequencies, HZ values and NTP corrections, in clock mode TSC,
  // so that the host code's TSC arithmetic is compared with realistic
  // mult/shift and sub-ns remainders even on a kvm-clock host.
  Cells synthetic_cells = {};
  std::memset(area + vdso::kPvclockPageOffset, 0, vdso::kPageSize);
  for (int done = 0; done < options.synthetic_samples; ++done) {
    absl::StatusOr<LiveSnapshot> snap = SyntheticTscPage(rng);
    if (!snap.ok()) {
      Emit(fd, "ERROR " + std::string(snap.status().message()));
      return 1;
    }
    const uint64_t cycle_last = Load64(snap->time_page, vdso::kVcCycleLast);
    compare_page(*snap, cycle_last + rng.InRange(0, 1ull << 24),
                 synthetic_cells);
  }
  for (ClockId clock : kVdsoServedClocks) {
    for (int r = 0; r < kNumRegimes; ++r) {
      Emit(fd, absl::StrFormat("SYNTH %d %d %d %d", clock, r,
                               synthetic_cells[clock][r][0],
                               synthetic_cells[clock][r][1]));
    }
  }
  Emit(fd, absl::StrFormat("RACES %d", races));
  Emit(fd, absl::StrFormat("TRAPS %d", g_traps));
  return 0;
}

}  // namespace

const char* RegimeName(Regime r) {
  switch (r) {
    case Regime::kLive:
      return "live counter";
    case Regime::kAhead:
      return "ahead, within max_cycles";
    case Regime::kBeyondMaxCycles:
      return "beyond max_cycles";
    case Regime::kBehind:
      return "behind cycle_last";
    case Regime::kNear2p62:
      return "cycle_last + 2^62";
    case Regime::kNear2p63:
      return "near 2^63";
    case Regime::kFarBehind:
      return "far behind";
  }
  return "?";
}

absl::StatusOr<ConformReport> RunConform(const ConformOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError("pipe() failed");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork() failed");
  if (pid == 0) {
    close(fds[0]);
    // A bound on the whole pass: the host code loops over whole seconds in
    // __iter_div_u64_rem(), and a bad counter choice must not hang us.
    alarm(static_cast<unsigned>(60 + options.samples / 50));
    const int code = ConformChild(fds[1], options);
    close(fds[1]);
    _exit(code);
  }
  close(fds[1]);
  std::string text;
  char buf[65536];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) {
    text.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ConformReport report;
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  if (WIFSIGNALED(status)) {
    return absl::InternalError(absl::StrFormat(
        "the conformance child died of signal %d%s", WTERMSIG(status),
        WTERMSIG(status) == SIGALRM ? " (it ran out of time)" : ""));
  }
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    if (f.empty()) continue;
    const std::string rest = line.size() > f[0].size()
                                 ? std::string(line.substr(f[0].size() + 1))
                                 : "";
    if (f[0] == "SKIP") {
      report.skip_reason = rest;
    } else if (f[0] == "ERROR") {
      return absl::InternalError(rest);
    } else if (f[0] == "KERNEL") {
      report.kernel = rest;
    } else if (f[0] == "MODE") {
      report.clock_mode = rest;
    } else if (f[0] == "CELL" && f.size() == 5) {
      int clock = 0, regime = 0;
      ConformCell cell;
      if (absl::SimpleAtoi(f[1], &clock) && absl::SimpleAtoi(f[2], &regime) &&
          absl::SimpleAtoi(f[3], &cell.compared) &&
          absl::SimpleAtoi(f[4], &cell.mismatches)) {
        report.cells[{clock, regime}] = cell;
        report.compared += cell.compared;
        report.mismatches += cell.mismatches;
      }
    } else if (f[0] == "SYNTH" && f.size() == 5) {
      int clock = 0, regime = 0;
      ConformCell cell;
      if (absl::SimpleAtoi(f[1], &clock) && absl::SimpleAtoi(f[2], &regime) &&
          absl::SimpleAtoi(f[3], &cell.compared) &&
          absl::SimpleAtoi(f[4], &cell.mismatches)) {
        report.synthetic_cells[{clock, regime}] = cell;
        report.synthetic_compared += cell.compared;
        report.synthetic_mismatches += cell.mismatches;
      }
    } else if (f[0] == "RACES" && f.size() == 2) {
      (void)absl::SimpleAtoi(f[1], &report.page_races);
    } else if (f[0] == "PATCHED" && f.size() == 2) {
      (void)absl::SimpleAtoi(f[1], &report.patched_sites);
    } else if (f[0] == "MULTSHIFT" && f.size() == 3) {
      (void)absl::SimpleAtoi(f[1], &report.analysis.raw_mult);
      (void)absl::SimpleAtoi(f[2], &report.analysis.shift);
    } else if (f[0] == "TRAPS" && f.size() == 2) {
      (void)absl::SimpleAtoi(f[1], &report.counter_traps);
    } else if (f[0] == "MISMATCH") {
      std::string d = rest;
      for (char& c : d) {
        if (c == '\x1f') c = '\n';
      }
      report.mismatch_details.push_back(d);
    } else if (f[0] == "ANALYSIS" && f.size() == 13) {
      UpdateAnalysis& a = report.analysis;
      bool ok = absl::SimpleAtoi(f[1], &a.samples) &&
                absl::SimpleAtoi(f[2], &a.updates_seen) &&
                absl::SimpleAtoi(f[3], &a.min_step_cycles) &&
                absl::SimpleAtoi(f[4], &a.gcd_step_cycles) &&
                absl::SimpleAtoi(f[5], &a.median_period_ns) &&
                absl::SimpleAtoi(f[6], &a.hz) &&
                absl::SimpleAtoi(f[7], &a.predicted_cycle_interval) &&
                absl::SimpleAtoi(f[8], &a.predicted_raw_interval) &&
                absl::SimpleAtoi(f[9], &a.steps_whole_intervals) &&
                absl::SimpleAtoi(f[10], &a.raw_increments_exact) &&
                absl::SimpleAtoi(f[11], &a.mono_increments_exact) &&
                absl::SimpleAtoi(f[12], &a.mono_pairs_same_mult);
      (void)ok;
    }
  }
  if (!report.skip_reason.empty()) return report;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError("the conformance child failed");
  }
  report.supported = true;
  const UpdateAnalysis& a = report.analysis;
  report.prediction_holds = a.updates_seen > 0 && a.hz != 0 &&
                            a.steps_whole_intervals == a.updates_seen &&
                            a.raw_increments_exact == a.steps_whole_intervals &&
                            a.mono_increments_exact == a.mono_pairs_same_mult;
  return report;
}

namespace {

std::string CellTable(
    const std::map<std::pair<ClockId, int>, ConformCell>& cells) {
  std::string o = absl::StrFormat("%-24s", "clock");
  for (int reg = 0; reg < kNumRegimes; ++reg) {
    absl::StrAppendFormat(&o, " %18s", RegimeName(static_cast<Regime>(reg)));
  }
  o += "\n";
  for (ClockId clock : kVdsoServedClocks) {
    absl::StrAppendFormat(&o, "%-24s", ClockName(clock));
    for (int reg = 0; reg < kNumRegimes; ++reg) {
      auto it = cells.find({clock, reg});
      const ConformCell cell = it == cells.end() ? ConformCell{} : it->second;
      absl::StrAppendFormat(
          &o, " %18s",
          absl::StrFormat("%d/%d", cell.compared - cell.mismatches,
                          cell.compared));
    }
    o += "\n";
  }
  return o;
}

}  // namespace

std::string FormatConformReport(const ConformReport& r) {
  if (!r.supported) {
    return absl::StrFormat("vdsolab conform: not supported here: %s\n",
                           r.skip_reason);
  }
  std::string o = absl::StrFormat(
      "vdsolab conform: the host vDSO code (Linux %s, clock mode %s) against "
      "vdsolab's upstream reader\n%d comparisons, %d mismatches; %d page "
      "copies retried after a kernel update; %d counter reads emulated at %d "
      "patched rdtsc/rdtscp sites; %.2f s\n\n",
      r.kernel, r.clock_mode, r.compared + r.synthetic_compared,
      r.mismatches + r.synthetic_mismatches, r.page_races, r.counter_traps,
      r.patched_sites, r.seconds);
  absl::StrAppendFormat(&o, "live page (%d comparisons, %d mismatches):\n%s",
                        r.compared, r.mismatches, CellTable(r.cells));
  absl::StrAppendFormat(
      &o,
      "\nsynthetic TSC pages from the timekeeper model (%d comparisons, %d "
      "mismatches):\n%s",
      r.synthetic_compared, r.synthetic_mismatches,
      CellTable(r.synthetic_cells));
  o += "(equal/compared per clock and counter regime)\n";
  o += FormatUpdateAnalysis(r.analysis);
  absl::StrAppendFormat(
      &o, "tk_setup_internals prediction: %s\n",
      r.prediction_holds ? "holds" : "DOES NOT HOLD (see above)");
  for (const std::string& d : r.mismatch_details) {
    absl::StrAppendFormat(&o, "\nMISMATCH %s\n", d);
  }
  absl::StrAppendFormat(
      &o, "\n%s\n",
      r.mismatches == 0 && r.synthetic_mismatches == 0 && r.prediction_holds
          ? "PASS: bit-exact agreement with the host vDSO."
          : "FAIL");
  return o;
}

}  // namespace vdsolab::host
