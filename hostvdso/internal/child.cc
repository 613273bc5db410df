#include "hostvdso/internal/child.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstring>
#include <optional>

#include "host/x86_decode.h"
#include "vdso/datapage.h"
#include "vdso/vvar_page.h"

namespace vdsolab::hostvdso::internal {
namespace {

constexpr size_t kPage = vdso::kPageSize;
constexpr size_t kAliasBytes = vdso::VvarPage::kPages * kPage;
constexpr int64_t kSliceNs = 200000000;  // Check the parent this often.
constexpr uint64_t kTrapFlag = 0x100;    // EFLAGS.TF
constexpr long kSysClockGettime = 228;   // x86-64 __NR_clock_gettime
constexpr int kEnosys = 38;
constexpr int kEfault = 14;

// The child's state, as its signal handlers see it.
const ChildSetup* g_setup = nullptr;
uint8_t* g_view = nullptr;  // The view of the vvar pages...
size_t g_view_bytes = 0;
uint8_t* g_image = nullptr;        // ...and the image right after it.
const uint8_t* g_alias = nullptr;  // The simulated pages, readable.
// Trampolines: a load instruction copied to run on the readable mapping
// (hostvdso/internal/child.h). One slot per (instruction, view page).
constexpr size_t kSlotBytes = 64;
constexpr int kSlots = static_cast<int>(kPage / kSlotBytes);
uint8_t* g_tramp = nullptr;       // kPage bytes, RWX; nullptr if refused.
uint8_t* g_tramp_base = nullptr;  // Where the trampoline page is.
uint64_t g_slot_rip[kSlots];
uint64_t g_slot_page[kSlots];
int g_slots_used = 0;
sigjmp_buf g_env;
volatile sig_atomic_t g_in_call = 0;
volatile sig_atomic_t g_stepping = 0;
alignas(16) uint8_t g_altstack[64 * 1024];

// The general registers by x86 register number (rax = 0 ... r15 = 15).
constexpr int kGreg[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP,
                           REG_RSI, REG_RDI, REG_R8,  REG_R9,  REG_R10, REG_R11,
                           REG_R12, REG_R13, REG_R14, REG_R15};

Mailbox* Mb() { return g_setup->mailbox; }

// Waits for the turn; a parent that went away ends the child.
void AwaitTurn() {
  while (!TakeTurn(Mb(), kChildTurn, g_setup->spins, kSliceNs)) {
    if (getppid() != g_setup->parent) _exit(0);
  }
}

// Asks the parent (the message is in the mailbox) and waits for its answer.
void Ask() {
  GiveTurn(Mb(), kParentTurn);
  AwaitTurn();
}

// An address in the view or the image as the image's link address (the
// view below 0, as the image's own symbols have it: vvar_page =
// 0xffffffffffffc000), so that reports do not depend on where this
// process mapped it.
uint64_t LinkAddress(uint64_t addr) {
  const auto view = reinterpret_cast<uint64_t>(g_view);
  const auto image = reinterpret_cast<uint64_t>(g_image);
  if (g_image == nullptr || addr < view ||
      addr >= image + g_setup->image_size) {
    return addr;
  }
  return addr - image;
}

[[noreturn]] void Crash(int sig, uint64_t addr, uint64_t rip) {
  Mailbox* mb = Mb();
  mb->msg = Msg::kFault;
  mb->signal = sig;
  mb->addr = LinkAddress(addr);
  mb->rip = LinkAddress(rip);
  GiveTurn(mb, kParentTurn);
  _exit(0x7f);
}

void SetGreg(greg_t* regs, uint8_t reg, uint64_t value, uint8_t dst_size) {
  greg_t& r = regs[kGreg[reg & 15]];
  if (dst_size == 8) {
    r = static_cast<greg_t>(value);
  } else if (dst_size == 4) {
    r = static_cast<greg_t>(value & 0xffffffffu);  // Zero-extends.
  } else {
    r = static_cast<greg_t>((static_cast<uint64_t>(r) & ~0xffffull) |
                            (value & 0xffff));
  }
}

// A plain mov from the page: the value from the readable mapping, as the
// instruction would have loaded it right now.
bool EmulatePlainLoad(greg_t* regs, const host::X86Insn& insn,
                      uint32_t offset) {
  std::optional<host::PlainLoad> load = host::AsPlainLoad(insn);
  if (!load || g_alias == nullptr || offset + load->src_size > kAliasBytes ||
      (offset % kPage) + load->src_size > kPage) {
    return false;
  }
  uint64_t v = 0;
  std::memcpy(&v, g_alias + offset, load->src_size);
  if (load->sign_extend) {
    const int shift = 64 - 8 * load->src_size;
    v = static_cast<uint64_t>(static_cast<int64_t>(v << shift) >> shift);
  }
  SetGreg(regs, load->reg, v, load->dst_size);
  regs[REG_RIP] += insn.length;
  return true;
}

void Put32(uint8_t* p, int32_t v) { std::memcpy(p, &v, 4); }

// lea disp32(%reg), %reg: moves the register without touching the flags.
size_t Lea(uint8_t* p, int reg, int32_t disp) {
  size_t n = 0;
  p[n++] = static_cast<uint8_t>(0x48 | (reg >= 8 ? 0x05 : 0));
  p[n++] = 0x8d;
  p[n++] = static_cast<uint8_t>(0x80 | ((reg & 7) << 3) | (reg & 7));
  if ((reg & 7) == 4) p[n++] = 0x24;  // r12 needs a SIB byte.
  Put32(p + n, disp);
  return n + 4;
}

// Whether the instruction may run relocated with its memory operand moved
// onto the readable mapping: not a branch or stack operation, and writing
// no register its address uses (the base is moved there and back).
bool Relocatable(const host::X86Insn& insn) {
  if (insn.vex || !insn.addresses_memory()) return false;
  if (insn.Is(0, 0xff) || insn.Is(0, 0x8f) || insn.Is(1, 0xb0) ||
      insn.Is(1, 0xb1) || insn.Is(1, 0xc7)) {
    return false;
  }
  if (insn.rip_relative) return insn.disp_size == 4;
  const int base = insn.base(), index = insn.index();
  if (base < 0 || base == 4 || index == base) return false;
  const int reg = insn.reg();
  if (reg == base || reg == index) return false;
  // mul/div (F6/F7) write rax and rdx besides their operands.
  if ((insn.Is(0, 0xf6) || insn.Is(0, 0xf7)) &&
      (base == 0 || base == 2 || index == 0 || index == 2)) {
    return false;
  }
  return true;
}

// The trampoline for the load at `rip` (faulting at `addr`, which is page
// offset `offset` of the simulated pages): nullptr if none can be made.
const uint8_t* Trampoline(const host::X86Insn& insn, uint64_t rip,
                          uint64_t addr, uint32_t offset) {
  if (g_tramp == nullptr || g_alias == nullptr || !Relocatable(insn)) {
    return nullptr;
  }
  // The readable mapping has the simulated pages in their order, the view
  // in the image's: a load across a page boundary runs in place.
  if ((addr % kPage) + host::MemoryOperandSize(insn) > kPage) return nullptr;
  const uint64_t page = (addr - reinterpret_cast<uint64_t>(g_view)) / kPage;
  for (int i = 0; i < g_slots_used; ++i) {
    if (g_slot_rip[i] == rip && g_slot_page[i] == page) {
      return g_tramp + static_cast<size_t>(i) * kSlotBytes;
    }
  }
  if (g_slots_used == kSlots) return nullptr;
  uint8_t* slot = g_tramp + static_cast<size_t>(g_slots_used) * kSlotBytes;
  const auto* code = reinterpret_cast<const uint8_t*>(rip);
  const int64_t delta =
      static_cast<int64_t>(reinterpret_cast<uint64_t>(g_alias) + offset) -
      static_cast<int64_t>(addr);
  size_t n = 0;
  if (insn.rip_relative) {
    // The same instruction with its displacement aimed at the mapping.
    std::memcpy(slot, code, insn.length);
    const int64_t target =
        static_cast<int64_t>(reinterpret_cast<uint64_t>(g_alias) + offset);
    const int64_t end =
        static_cast<int64_t>(reinterpret_cast<uint64_t>(slot) + insn.length);
    Put32(slot + insn.disp_at, static_cast<int32_t>(target - end));
    n = insn.length;
  } else {
    n += Lea(slot + n, insn.base(), static_cast<int32_t>(delta));
    std::memcpy(slot + n, code, insn.length);
    n += insn.length;
    n += Lea(slot + n, insn.base(), static_cast<int32_t>(-delta));
  }
  // jmp rel32 back to the instruction after the original.
  slot[n] = 0xe9;
  const int64_t back =
      static_cast<int64_t>(rip + insn.length) -
      static_cast<int64_t>(reinterpret_cast<uint64_t>(slot) + n + 5);
  Put32(slot + n + 1, static_cast<int32_t>(back));
  g_slot_rip[g_slots_used] = rip;
  g_slot_page[g_slots_used] = page;
  ++g_slots_used;
  return slot;
}

void OnSegv(int sig, siginfo_t* info, void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
  greg_t* regs = uc->uc_mcontext.gregs;
  const auto addr = reinterpret_cast<uint64_t>(info->si_addr);
  const auto rip = static_cast<uint64_t>(regs[REG_RIP]);
  const auto view = reinterpret_cast<uint64_t>(g_view);
  const auto image = reinterpret_cast<uint64_t>(g_image);
  // Page-fault error code: bit 1 a write, bit 4 an instruction fetch.
  const auto err = static_cast<uint64_t>(regs[REG_ERR]);
  if (g_in_call == 0 || g_stepping != 0 || addr < view ||
      addr >= view + g_view_bytes || (err & 0x12) != 0 || rip < image ||
      rip >= image + g_setup->image_size) {
    Crash(sig, addr, rip);
  }
  const uint64_t page = (addr - view) / kPage;
  const int sim = g_setup->sim_page[page];
  std::optional<host::X86Insn> insn = host::DecodeX86(
      reinterpret_cast<const uint8_t*>(rip), image + g_setup->image_size - rip);
  if (sim < 0 || !insn || !insn->addresses_memory()) Crash(sig, addr, rip);
  uint32_t size = host::MemoryOperandSize(*insn);
  if (size > 8) size = 8;
  const auto offset = static_cast<uint32_t>(static_cast<uint64_t>(sim) * kPage +
                                            (addr - view) % kPage);
  Mailbox* mb = Mb();
  mb->msg = Msg::kLoad;
  mb->offset = offset;
  mb->size = size;
  Ask();
  if (mb->cmd == Cmd::kAbandon) {
    g_in_call = 0;
    siglongjmp(g_env, 1);
  }
  if (EmulatePlainLoad(regs, *insn, offset)) {
    ++mb->emulated;
    return;
  }
  // Any other load runs itself, relocated next to the readable mapping...
  if (const uint8_t* tramp = Trampoline(*insn, rip, addr, offset)) {
    regs[REG_RIP] = static_cast<greg_t>(reinterpret_cast<uint64_t>(tramp));
    ++mb->relocated;
    return;
  }
  // ...or in place, with the view readable for one step.
  mprotect(g_view, g_view_bytes, PROT_READ);
  regs[REG_EFL] =
      static_cast<greg_t>(static_cast<uint64_t>(regs[REG_EFL]) | kTrapFlag);
  g_stepping = 1;
  ++mb->stepped;
}

void OnTrap(int sig, siginfo_t* info, void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
  greg_t* regs = uc->uc_mcontext.gregs;
  if (g_stepping == 0) {
    Crash(sig, reinterpret_cast<uint64_t>(info->si_addr),
          static_cast<uint64_t>(regs[REG_RIP]));
  }
  mprotect(g_view, g_view_bytes, PROT_NONE);
  regs[REG_EFL] =
      static_cast<greg_t>(static_cast<uint64_t>(regs[REG_EFL]) & ~kTrapFlag);
  g_stepping = 0;
}

// clock_gettime's answer into the image's timespec; -EFAULT where the
// pointer is bad (as the kernel answers), without faulting here.
int32_t WriteTimespec(uint64_t dst, int64_t sec, int64_t nsec) {
  const struct timespec ts = {static_cast<time_t>(sec), nsec};
  struct iovec local = {const_cast<struct timespec*>(&ts), sizeof ts};
  struct iovec remote = {reinterpret_cast<void*>(dst), sizeof ts};
  const long n =
      syscall(SYS_process_vm_writev, getpid(), &local, 1, &remote, 1, 0);
  return n == static_cast<long>(sizeof ts) ? 0 : -kEfault;
}

void OnSigill(int sig, siginfo_t* info, void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
  greg_t* regs = uc->uc_mcontext.gregs;
  const auto rip = static_cast<uint64_t>(regs[REG_RIP]);
  const ChildSite* site = nullptr;
  for (int i = 0; i < g_setup->num_sites; ++i) {
    if (reinterpret_cast<uint64_t>(g_image) + g_setup->sites[i].addr == rip) {
      site = &g_setup->sites[i];
    }
  }
  if (g_in_call == 0 || site == nullptr) {
    Crash(sig, reinterpret_cast<uint64_t>(info->si_addr), rip);
  }
  Mailbox* mb = Mb();
  if (site->kind <= 2) {
    mb->msg = Msg::kCounter;
    mb->kind = site->kind;
    Ask();
    regs[REG_RAX] = static_cast<greg_t>(mb->value & 0xffffffffu);
    regs[REG_RDX] = static_cast<greg_t>(mb->value >> 32);
    if (site->writes_ecx) regs[REG_RCX] = 0;  // TSC_AUX
  } else {
    int32_t ret = -kEnosys;
    if (site->kind == kSiteSyscall && regs[REG_RAX] == kSysClockGettime) {
      mb->msg = Msg::kSyscall;
      mb->clock = static_cast<int32_t>(regs[REG_RDI]);
      Ask();
      ret = mb->sys_ret;
      if (ret == 0) {
        ret = WriteTimespec(static_cast<uint64_t>(regs[REG_RSI]), mb->sys_sec,
                            mb->sys_nsec);
      }
    }
    regs[REG_RAX] = ret;
    if (site->kind == kSiteSyscall) {  // syscall clobbers rcx and r11.
      regs[REG_RCX] = static_cast<greg_t>(rip + site->length);
      regs[REG_R11] = regs[REG_EFL];
    }
  }
  regs[REG_RIP] = static_cast<greg_t>(rip + site->length);
}

void OnFatal(int sig, siginfo_t* info, void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
  Crash(sig, reinterpret_cast<uint64_t>(info->si_addr),
        static_cast<uint64_t>(uc->uc_mcontext.gregs[REG_RIP]));
}

void Install(int sig, void (*fn)(int, siginfo_t*, void*)) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = fn;
  // NODEFER: a handler that jumps out (abandon) leaves nothing blocked.
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}

void Ignore(int sig) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_IGN;
  sigaction(sig, &sa, nullptr);
}

// Receives one fd over the socket, or -1.
int ReceiveFd(int socket) {
  char byte = 0;
  struct iovec iov = {&byte, 1};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  struct msghdr msg;
  std::memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (recvmsg(socket, &msg, MSG_CMSG_CLOEXEC) != 1) return -1;
  struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (c == nullptr || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

// Maps the simulated pages' memfd into the view (PROT_NONE) and once more
// readable; 0 or errno.
int MapPages(int fd) {
  for (int i = 0; i < g_setup->view_pages; ++i) {
    const int sim = g_setup->sim_page[i];
    if (sim < 0) continue;
    if (mmap(g_view + static_cast<size_t>(i) * kPage, kPage, PROT_NONE,
             MAP_SHARED | MAP_FIXED, fd,
             static_cast<off_t>(static_cast<size_t>(sim) * kPage)) ==
        MAP_FAILED) {
      return errno;
    }
  }
  // The readable mapping sits just below the trampolines, so that a
  // relocated instruction reaches it with a 32-bit displacement.
  void* alias = mmap(g_tramp_base - kAliasBytes, kAliasBytes, PROT_READ,
                     MAP_SHARED | MAP_FIXED, fd, 0);
  if (alias == MAP_FAILED) return errno;
  g_alias = static_cast<const uint8_t*>(alias);
  return 0;
}

// Closes every inherited descriptor but the socket (moved to 3), so that
// a long-lived child holds no pipe another part of vdsolab waits on.
void CloseInheritedFds(int* socket) {
  if (*socket != 3) {
    dup2(*socket, 3);
    *socket = 3;
  }
  if (syscall(SYS_close_range, 4u, ~0u, 0u) != 0) {
    for (int fd = 4; fd < 4096; ++fd) close(fd);
  }
}

}  // namespace

void RunChild(const ChildSetup* setup) {
  g_setup = setup;
  prctl(PR_SET_NAME, "vdsolab-vdso", 0, 0, 0);
  int socket = setup->socket;
  CloseInheritedFds(&socket);
  stack_t ss;
  ss.ss_sp = g_altstack;
  ss.ss_size = sizeof g_altstack;
  ss.ss_flags = 0;
  sigaltstack(&ss, nullptr);
  Install(SIGSEGV, OnSegv);
  Install(SIGTRAP, OnTrap);
  Install(SIGILL, OnSigill);
  for (int sig : {SIGBUS, SIGFPE, SIGSYS, SIGABRT, SIGXCPU}) {
    Install(sig, OnFatal);
  }
  // Terminal and termination signals are the parent's to handle (a run
  // stops gracefully); the child ends with its parent.
  for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE, SIGTSTP, SIGTTIN,
                  SIGTTOU, SIGUSR1, SIGUSR2, SIGALRM}) {
    Ignore(sig);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);

  // One area: [readable mapping][trampolines][view][image].
  g_view_bytes = static_cast<size_t>(setup->view_pages) * kPage;
  const size_t image_bytes = (setup->image_size + kPage - 1) / kPage * kPage;
  void* area =
      mmap(nullptr, kAliasBytes + kPage + g_view_bytes + image_bytes, PROT_NONE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (area == MAP_FAILED) Crash(0, 0, 0);
  g_tramp_base = static_cast<uint8_t*>(area) + kAliasBytes;
  g_view = g_tramp_base + kPage;
  g_image = g_view + g_view_bytes;
  // Trampolines are written by the handler and run: RWX. Where the system
  // refuses that, loads are single-stepped instead.
  if (mmap(g_tramp_base, kPage, PROT_READ | PROT_WRITE | PROT_EXEC,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
    g_tramp = g_tramp_base;
  }
  if (mprotect(g_image, image_bytes, PROT_READ | PROT_WRITE) != 0) {
    Crash(0, 0, 0);
  }
  std::memcpy(g_image, setup->image, setup->image_size);
  if (mprotect(g_image, image_bytes, PROT_READ | PROT_EXEC) != 0) {
    Crash(0, 0, 0);
  }
  using ClockGettimeFn = int (*)(clockid_t, struct timespec*);
  const auto fn = reinterpret_cast<ClockGettimeFn>(g_image + setup->entry);

  Mailbox* mb = setup->mailbox;
  mb->msg = Msg::kReady;
  GiveTurn(mb, kParentTurn);
  for (;;) {
    AwaitTurn();
    switch (mb->cmd) {
      case Cmd::kMap: {
        const int fd = ReceiveFd(socket);
        mb->map_error = fd < 0 ? EBADF : MapPages(fd);
        if (fd >= 0) close(fd);
        mb->msg = Msg::kMapped;
        break;
      }
      case Cmd::kCall: {
        struct timespec ts = {0, 0};
        if (sigsetjmp(g_env, 0) == 0) {
          g_in_call = 1;
          const int ret = fn(mb->call_clock, &ts);
          g_in_call = 0;
          mb->msg = Msg::kDone;
          mb->ret = ret;
          mb->sec = ts.tv_sec;
          mb->nsec = ts.tv_nsec;
        } else {
          mb->msg = Msg::kAbandoned;
        }
        break;
      }
      case Cmd::kExit:
        _exit(0);
      default:
        Crash(0, 0, 0);
    }
    GiveTurn(mb, kParentTurn);
  }
}

}  // namespace vdsolab::hostvdso::internal
