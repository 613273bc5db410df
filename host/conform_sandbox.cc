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
#include "vdso/datapage.h"

namespace vdsolab::host {
namespace {

// Where the copy's rdtsc (2 bytes) and rdtscp (3 bytes) were, now ud2, and
// what the handler answers: globals, as a signal handler sees them.
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
  absl::StatusOr<VdsoSymbol> text = FindVdsoText(image_size);
  if (!fn.ok() || !text.ok()) {
    return absl::UnavailableError(
        (fn.ok() ? text.status() : fn.status()).message());
  }
  void* mem = mmap(nullptr, area_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    return absl::InternalError("mmap of the vDSO copy failed");
  }
  auto* area = static_cast<uint8_t*>(mem);
  std::memcpy(area + text_offset,
              reinterpret_cast<const void*>(maps.vdso->start), image_size);
  uint8_t* copied_text =
      area + text_offset + (text->address - maps.vdso->start);
  const int patched = PatchCounterReads(copied_text, text->size);
  if (patched == 0) {
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
  return std::unique_ptr<PatchedVdso>(new PatchedVdso(area, patched, entry));
}

int PatchedVdso::ClockGettime(ClockId clock, uint64_t tsc,
                              struct timespec* ts) const {
  g_tsc = tsc;
  return fn_(clock, ts);
}

uint64_t PatchedVdso::counter_traps() { return g_traps; }

}  // namespace vdsolab::host
