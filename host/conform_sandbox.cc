#include "host/conform_sandbox.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "host/vdso_elf.h"
#include "host/vdso_image.h"
#include "host/vdso_sites.h"
#include "vdso/datapage.h"

namespace vdsolab::host {
namespace {

// Where the copy's counter reads were, now ud2 (host/vdso_sites.h), and
// what the handler answers: globals, as a signal handler sees them.
struct PatchedSite {
  uintptr_t address;
  uint8_t length;
  bool writes_ecx;
};
constexpr int kMaxSites = 64;
PatchedSite g_sites[kMaxSites];
int g_num_sites = 0;
volatile uint64_t g_tsc = 0;
volatile uint64_t g_traps = 0;

// SIGILL at a patched site: answer with g_tsc (and TSC_AUX 0 where the
// instruction was rdtscp) and continue after the site. Anything else is a
// real fault: restore the default action so it crashes as it would have.
extern "C" void OnSigill(int, siginfo_t*, void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
  greg_t* regs = uc->uc_mcontext.gregs;
  const auto ip = static_cast<uintptr_t>(regs[REG_RIP]);
  for (int i = 0; i < g_num_sites; ++i) {
    if (g_sites[i].address != ip) continue;
    const uint64_t v = g_tsc;
    regs[REG_RAX] = static_cast<greg_t>(v & 0xffffffffu);
    regs[REG_RDX] = static_cast<greg_t>(v >> 32);
    if (g_sites[i].writes_ecx) regs[REG_RCX] = 0;
    regs[REG_RIP] += g_sites[i].length;
    g_traps = g_traps + 1;
    return;
  }
  signal(SIGILL, SIG_DFL);
}

// Finds the counter reads of the image by decoding its .text and replaces
// each by ud2 in the copy at `copy` (the image's address 0). The system
// call stays: conform compares only what the page path answers.
absl::StatusOr<int> PatchCounterReads(const VdsoImage& image, uint8_t* copy,
                                      size_t size) {
  absl::StatusOr<CodeScan> scan = ScanVdsoCode(image);
  if (!scan.ok()) return scan.status();
  const std::vector<Site> sites = CounterSites(*scan);
  if (sites.size() > kMaxSites) {
    return absl::UnavailableError("the vDSO has too many counter reads");
  }
  g_num_sites = 0;
  for (const Site& site : sites) {
    g_sites[g_num_sites++] = {reinterpret_cast<uintptr_t>(copy + site.addr),
                              site.length, site.writes_ecx};
  }
  PatchSites(sites, copy, size);
  return g_num_sites;
}

}  // namespace

absl::StatusOr<ChildOutcome> RunInChild(const std::function<int(int fd)>& body,
                                        unsigned seconds) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError("pipe() failed");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork() failed");
  if (pid == 0) {
    close(fds[0]);
    alarm(seconds);
    const int code = body(fds[1]);
    close(fds[1]);
    _exit(code);
  }
  close(fds[1]);
  ChildOutcome outcome;
  char buf[65536];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) {
    outcome.output.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  outcome.exited = WIFEXITED(status);
  outcome.exit_code = outcome.exited ? WEXITSTATUS(status) : 0;
  outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return outcome;
}

absl::StatusOr<std::unique_ptr<PatchedVdso>> PatchedVdso::Create(
    const VdsoMappings& maps) {
  if (!maps.vvar || !maps.vdso) {
    return absl::UnavailableError("there is no [vdso] mapping");
  }
  // The copy: the vvar area and the code at the kernel's distances.
  const uint64_t area_size = maps.vdso->end - maps.vvar->start;
  const uint64_t text_offset = maps.vdso->start - maps.vvar->start;
  const uint64_t image_size = maps.vdso->end - maps.vdso->start;
  if (!maps.vvar_vclock ||
      maps.vvar_vclock->start - maps.vvar->start != vdso::kPvclockPageOffset ||
      text_offset !=
          vdso::kPvclockPageOffset + vdso::kVvarVclockPages * vdso::kPageSize) {
    return absl::UnavailableError(
        "the [vvar], [vvar_vclock] and [vdso] mappings are not arranged as "
        "x86-64 6.13+ arranges them");
  }
  absl::StatusOr<VdsoSymbol> fn =
      FindVdsoSymbol("__vdso_clock_gettime", image_size);
  absl::StatusOr<VdsoImage> image = ReadRunningVdsoImage();
  if (!fn.ok() || !image.ok()) {
    return absl::UnavailableError(
        (fn.ok() ? image.status() : fn.status()).message());
  }
  void* mem = mmap(nullptr, area_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    return absl::InternalError("mmap of the vDSO copy failed");
  }
  auto* area = static_cast<uint8_t*>(mem);
  std::memcpy(area + text_offset,
              reinterpret_cast<const void*>(maps.vdso->start), image_size);
  absl::StatusOr<int> patched =
      PatchCounterReads(*image, area + text_offset, image_size);
  if (!patched.ok()) return absl::UnavailableError(patched.status().message());
  if (*patched == 0) {
    return absl::UnavailableError(
        "the vDSO code has no rdtsc/rdtscp to emulate");
  }
  if (mprotect(area + text_offset, image_size, PROT_READ | PROT_EXEC) != 0) {
    return absl::UnavailableError(
        "cannot make the vDSO copy executable (mprotect)");
  }
  struct sigaction sa = {};
  sa.sa_sigaction = OnSigill;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGILL, &sa, nullptr);
  const auto entry = reinterpret_cast<ClockGettimeFn>(
      area + text_offset + (fn->address - maps.vdso->start));
  return std::unique_ptr<PatchedVdso>(new PatchedVdso(area, *patched, entry));
}

int PatchedVdso::ClockGettime(ClockId clock, uint64_t tsc,
                              struct timespec* ts) const {
  g_tsc = tsc;
  return fn_(clock, ts);
}

uint64_t PatchedVdso::counter_traps() { return g_traps; }

}  // namespace vdsolab::host
