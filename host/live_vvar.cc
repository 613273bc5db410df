#include "host/live_vvar.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/bytes.h"
#include "timekeeper/clocksource.h"
#include "vdso/datapage.h"
#include "vdso/vvar_page.h"

namespace vdsolab::host {
namespace {

constexpr int kMaxRetries = 1000;

uint32_t VolatileU32(uint64_t addr) {
  return __atomic_load_n(reinterpret_cast<const uint32_t*>(addr),
                         __ATOMIC_ACQUIRE);
}

uint64_t RawNs() {
  struct timespec ts;
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

// Reading a vclock page the kernel did not populate raises SIGBUS: copy
// under a handler that turns that into an error.
sigjmp_buf g_fault_jump;
extern "C" void OnFault(int) { siglongjmp(g_fault_jump, 1); }

bool GuardedCopy(uint8_t* dst, uint64_t src, size_t n) {
  struct sigaction sa = {}, old_bus, old_segv;
  sa.sa_handler = OnFault;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, &old_bus);
  sigaction(SIGSEGV, &sa, &old_segv);
  bool ok = false;
  if (sigsetjmp(g_fault_jump, 1) == 0) {
    std::memcpy(dst, reinterpret_cast<const void*>(src), n);
    ok = true;
  }
  sigaction(SIGBUS, &old_bus, nullptr);
  sigaction(SIGSEGV, &old_segv, nullptr);
  return ok;
}

}  // namespace

VdsoMappings ParseVdsoMappings(const std::string& maps_text) {
  VdsoMappings out;
  std::istringstream in(maps_text);
  std::string line;
  while (std::getline(in, line)) {
    std::optional<Mapping>* slot = nullptr;
    if (line.find("[vvar]") != std::string::npos) {
      slot = &out.vvar;
    } else if (line.find("[vvar_vclock]") != std::string::npos) {
      slot = &out.vvar_vclock;
    } else if (line.find("[vdso]") != std::string::npos) {
      slot = &out.vdso;
    }
    if (slot == nullptr) continue;
    unsigned long long start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx", &start, &end) == 2 &&
        end > start) {
      *slot = Mapping{start, end};
    }
  }
  return out;
}

absl::StatusOr<VdsoMappings> FindVdsoMappings() {
#if !defined(__x86_64__)
  return absl::FailedPreconditionError(
      "this is not an x86-64 machine: vdsolab models the x86-64 vDSO only");
#endif
  std::ifstream in("/proc/self/maps");
  if (!in) {
    return absl::UnavailableError("cannot read /proc/self/maps");
  }
  std::stringstream text;
  text << in.rdbuf();
  VdsoMappings maps = ParseVdsoMappings(text.str());
  if (!maps.vvar) {
    return absl::NotFoundError(
        "this process has no [vvar] mapping (no vDSO, or vdso=0 on the "
        "kernel command line)");
  }
  if (maps.vvar->end - maps.vvar->start < vdso::kPageSize) {
    return absl::FailedPreconditionError("the [vvar] mapping is too small");
  }
  return maps;
}

KernelVersion RunningKernel() {
  KernelVersion v;
  struct utsname u;
  if (uname(&u) != 0) return v;
  v.release = u.release;
  std::sscanf(u.release, "%d.%d", &v.major, &v.minor);
  return v;
}

int KernelHz() {
  struct timespec res;
  if (syscall(SYS_clock_getres, CLOCK_MONOTONIC_COARSE, &res) != 0 ||
      res.tv_sec != 0 || res.tv_nsec <= 0) {
    return 0;
  }
  return static_cast<int>((1000000000 + res.tv_nsec / 2) / res.tv_nsec);
}

uint32_t TailOffset(const KernelVersion& k) {
  const bool aux = k.major > 6 || (k.major == 6 && k.minor >= 17);
  return aux ? vdso::kTzMinuteswest
             : static_cast<uint32_t>(vdso::kCsBases * sizeof(vdso::VdsoClock));
}

absl::StatusOr<LiveSnapshot> TakeSnapshot(const VdsoMappings& maps) {
  const uint64_t page = maps.vvar->start;
  const uint64_t seq0 = page + vdso::ClockDataOffset(vdso::kCsHresCoarse);
  const uint64_t seq1 = page + vdso::ClockDataOffset(vdso::kCsRaw);
  LiveSnapshot snap;
  snap.time_page.resize(vdso::kPageSize);
  for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
    snap.retries = static_cast<uint32_t>(attempt);
    // Acquire loads pair with the kernel's smp_wmb() in vdso_write_begin()
    // and vdso_write_end(): the copy sits between two equal even seqs.
    const uint32_t a = VolatileU32(seq0), b = VolatileU32(seq1);
    if ((a & 1) != 0 || (b & 1) != 0) continue;
    std::memcpy(snap.time_page.data(), reinterpret_cast<const void*>(page),
                vdso::kPageSize);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (VolatileU32(seq0) != a || VolatileU32(seq1) != b) continue;
    snap.pvclock_page.clear();
    const int32_t mode =
        static_cast<int32_t>(Load32(snap.time_page, vdso::kVcClockMode));
    if (mode == timekeeper::kVdsoClockmodePvclock) {
      if (!maps.vvar_vclock) {
        return absl::FailedPreconditionError(
            "clock mode PVCLOCK, but there is no [vvar_vclock] mapping");
      }
      snap.pvclock_page.resize(vdso::kPageSize);
      const uint64_t pv = maps.vvar_vclock->start;
      const uint32_t v = VolatileU32(pv + vdso::kPvtiVersion);
      if ((v & 1) != 0) continue;
      if (!GuardedCopy(snap.pvclock_page.data(), pv, vdso::kPageSize)) {
        return absl::FailedPreconditionError(
            "the pvclock page is not readable (SIGBUS)");
      }
      __atomic_thread_fence(__ATOMIC_ACQUIRE);
      if (VolatileU32(pv + vdso::kPvtiVersion) != v) continue;
    }
    if (VolatileU32(seq0) != a) continue;
    snap.taken_ns = RawNs();
    return snap;
  }
  return absl::UnavailableError(
      "the vvar page kept changing while it was copied");
}

bool StillCurrent(const VdsoMappings& maps, const LiveSnapshot& snap) {
  const uint64_t page = maps.vvar->start;
  for (int cs : {vdso::kCsHresCoarse, vdso::kCsRaw}) {
    const uint32_t off = vdso::ClockDataOffset(cs) + vdso::kVcSeq;
    if (VolatileU32(page + off) != Load32(snap.time_page, off)) return false;
  }
  if (!snap.pvclock_page.empty()) {
    if (VolatileU32(maps.vvar_vclock->start + vdso::kPvtiVersion) !=
        Load32(snap.pvclock_page, vdso::kPvtiVersion)) {
      return false;
    }
  }
  return true;
}

absl::Status CheckLayout(const LiveSnapshot& snap, const KernelVersion& k) {
  if (k.major < 6 || (k.major == 6 && k.minor < 15)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "kernel %s predates struct vdso_clock (6.15): its vvar layout is not "
        "one vdsolab decodes",
        k.release));
  }
  const auto& p = snap.time_page;
  const uint32_t hres = vdso::ClockDataOffset(vdso::kCsHresCoarse);
  const uint32_t raw = vdso::ClockDataOffset(vdso::kCsRaw);
  const uint32_t seq = Load32(p, hres + vdso::kVcSeq);
  if ((seq & 1) != 0 || seq != Load32(p, raw + vdso::kVcSeq)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "unknown layout: the two clock records' seqs (%d, %d) are not equal "
        "and even",
        seq, Load32(p, raw + vdso::kVcSeq)));
  }
  const int32_t mode =
      static_cast<int32_t>(Load32(p, hres + vdso::kVcClockMode));
  if (mode != static_cast<int32_t>(Load32(p, raw + vdso::kVcClockMode)) ||
      mode < timekeeper::kVdsoClockmodeNone ||
      mode > timekeeper::kVdsoClockmodeHvclock) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "unknown layout: clock_mode %d is not one of NONE, TSC, PVCLOCK, "
        "HVCLOCK in both records",
        mode));
  }
  if (mode == timekeeper::kVdsoClockmodeNone) {
    return absl::FailedPreconditionError(
        "the current clocksource is not one the vDSO can read (clock mode "
        "NONE): every clock_gettime() is a syscall here");
  }
  for (uint32_t field :
       {vdso::kVcCycleLast, vdso::kVcMaxCycles, vdso::kVcMask}) {
    if (Load64(p, hres + field) != Load64(p, raw + field)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "unknown layout: %s differs between the two clock records",
          vdso::DescribeVvarOffset(hres + field)));
    }
  }
  const uint32_t raw_mult = Load32(p, raw + vdso::kVcMult);
  const uint32_t shift = Load32(p, raw + vdso::kVcShift);
  if (raw_mult == 0 || shift == 0 || shift > 32 ||
      Load32(p, hres + vdso::kVcShift) != shift) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "unknown layout: mult %d / shift %d are not a clocksource's", raw_mult,
        shift));
  }
  // max_cycles is what clocks_calc_max_nsecs() derives from the raw
  // (unsteered) mult: a strong check that the offsets are right.
  uint64_t max_cycles = 0;
  timekeeper::ClocksCalcMaxNsecs(raw_mult, shift,
                                 timekeeper::ClocksourceMaxAdjustment(raw_mult),
                                 Load64(p, hres + vdso::kVcMask), &max_cycles);
  if (max_cycles != Load64(p, hres + vdso::kVcMaxCycles)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "unknown layout: max_cycles %d is not what mult %d gives (%d)",
        Load64(p, hres + vdso::kVcMaxCycles), raw_mult, max_cycles));
  }
  if (mode == timekeeper::kVdsoClockmodeHvclock) {
    return absl::FailedPreconditionError(
        "the clocksource is the Hyper-V TSC page (clock mode HVCLOCK), which "
        "vdsolab does not model");
  }
  if (mode == timekeeper::kVdsoClockmodePvclock) {
    if (snap.pvclock_page.empty() || (snap.pvclock_page[vdso::kPvtiFlags] &
                                      vdso::kPvclockTscStableBit) == 0) {
      return absl::FailedPreconditionError(
          "kvm-clock without PVCLOCK_TSC_STABLE_BIT: the vDSO sends every "
          "call to the syscall here");
    }
  }
  return absl::OkStatus();
}

}  // namespace vdsolab::host
