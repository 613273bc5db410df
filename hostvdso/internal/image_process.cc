#include "hostvdso/internal/image_process.h"

#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "hostvdso/internal/mailbox.h"
#include "hostvdso/internal/retry_points.h"
#include "variants/plugin/call_guard.h"
#include "vdso/datapage.h"
#include "vdso/vvar_page.h"

namespace vdsolab::hostvdso::internal {
namespace {

// Polls of the mailbox before sleeping on the futex (about 30 ns each
// here). Short: on two shared cores the other side is often not running,
// and a long spin only delays it (measured: 4000 polls made calls 10x
// slower under load than none). VDSOLAB_HOSTVDSO_SPINS overrides.
int Spins() {
  static const int spins = [] {
    const char* s = std::getenv("VDSOLAB_HOSTVDSO_SPINS");
    return s != nullptr ? std::atoi(s) : 16;
  }();
  return spins;
}
constexpr int64_t kSliceNs = 20000000;  // Check the child this often.
constexpr double kStartLimit = 10.0;    // Seconds for a child to be ready.
// A call's wall time past this many times the CPU-time bound ends it too.
constexpr double kWallBackstop = 30.0;

std::atomic<uint64_t> g_spawned{0}, g_calls{0}, g_hooks{0};
std::atomic<uint64_t> g_emulated{0}, g_relocated{0}, g_stepped{0};

double Now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Every live child, killed at exit (a child also ends by itself within a
// fraction of a second once its parent is gone).
struct Children {
  std::mutex mu;
  std::set<pid_t> pids;
};
Children& LiveChildren() {
  static auto* c = new Children;
  return *c;
}
void KillAllChildren() {
  Children& c = LiveChildren();
  std::lock_guard<std::mutex> lock(c.mu);
  for (pid_t pid : c.pids) kill(pid, SIGKILL);
}

bool SendFd(int socket, int fd) {
  char byte = 'm';
  struct iovec iov = {&byte, 1};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  std::memset(control, 0, sizeof control);
  struct msghdr msg;
  std::memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return sendmsg(socket, &msg, MSG_NOSIGNAL) == 1;
}

}  // namespace

ProcessStats Stats() {
  ProcessStats s;
  s.spawned = g_spawned.load();
  s.calls = g_calls.load();
  s.hooks = g_hooks.load();
  s.emulated = g_emulated.load();
  s.relocated = g_relocated.load();
  s.stepped = g_stepped.load();
  return s;
}

absl::StatusOr<std::unique_ptr<ImageProcess>> ImageProcess::Spawn(
    const PreparedImage* image) {
  static const bool registered = [] {
    std::atexit(KillAllChildren);
    return true;
  }();
  (void)registered;
  std::unique_ptr<ImageProcess> p(new ImageProcess);
  p->image_ = image;
  void* mem = mmap(nullptr, sizeof(Mailbox), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    return absl::ResourceExhaustedError("mmap of the mailbox failed");
  }
  p->mb_ = new (mem) Mailbox;
  // The child's turn first: it sets up, then hands the turn over (kReady).
  p->mb_->turn.store(kChildTurn, std::memory_order_relaxed);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return absl::ResourceExhaustedError("socketpair failed");
  }
  p->socket_ = sv[0];
  // The child's setup, complete before the fork: after it, the child may
  // not allocate (another thread of vdsolab may hold the allocator's lock).
  ChildSetup setup = image->setup;
  setup.image = image->patched.data();
  setup.image_size = image->patched.size();
  setup.mailbox = p->mb_;
  setup.socket = sv[1];
  setup.parent = getpid();
  setup.spins = Spins();
  const pid_t pid = fork();
  if (pid < 0) {
    close(sv[1]);
    return absl::ResourceExhaustedError(
        absl::StrFormat("fork failed: %s", strerror(errno)));
  }
  if (pid == 0) RunChild(&setup);
  close(sv[1]);
  p->pid_ = pid;
  if (clock_getcpuclockid(pid, &p->cpu_clock_) != 0) {
    p->cpu_clock_ = CLOCK_MONOTONIC;  // Then the bound is wall time.
  }
  {
    Children& c = LiveChildren();
    std::lock_guard<std::mutex> lock(c.mu);
    c.pids.insert(pid);
  }
  ++g_spawned;
  // The child hands the turn over once it is set up.
  double waited = 0;
  const double start = Now();
  while (!TakeTurn(p->mb_, kParentTurn, Spins(), kSliceNs)) {
    waited = Now() - start;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid || waited > kStartLimit) {
      p->pid_ = -1;
      return absl::InternalError(
          "the process for the compiled vDSO did not start");
    }
  }
  if (p->mb_->msg != Msg::kReady) {
    const int sig = p->mb_->signal;
    const uint64_t addr = p->mb_->addr;
    p->Kill();
    return absl::InternalError(absl::StrFormat(
        "the process for the compiled vDSO could not set up its memory "
        "(signal %d at %#x)",
        sig, addr));
  }
  return p;
}

ImageProcess::~ImageProcess() {
  if (pid_ > 0) Kill();
  if (socket_ >= 0) close(socket_);
  if (mb_ != nullptr) munmap(mb_, sizeof(Mailbox));
}

int ImageProcess::Kill() {
  if (pid_ <= 0) return died_of_;
  kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  {
    Children& c = LiveChildren();
    std::lock_guard<std::mutex> lock(c.mu);
    c.pids.erase(pid_);
  }
  pid_ = -1;
  if (WIFSIGNALED(status) && died_of_ == 0) died_of_ = WTERMSIG(status);
  return died_of_;
}

ImageProcess::Turn ImageProcess::Exchange(double* child_seconds, double limit) {
  GiveTurn(mb_, kChildTurn);
  if (TakeTurn(mb_, kParentTurn, Spins(), kSliceNs)) return Turn::kAnswered;
  // The bound is on the child's CPU time, not the wall clock: on a loaded
  // machine a child waiting for a CPU has not spun. A wall-clock backstop
  // still ends a child that neither runs nor answers.
  const double start = Now();
  const double cpu_start = ChildCpuSeconds();
  for (;;) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      // Gone without a word (killed, or a fault its handler could not
      // report): the exit status says how.
      {
        Children& c = LiveChildren();
        std::lock_guard<std::mutex> lock(c.mu);
        c.pids.erase(pid_);
      }
      pid_ = -1;
      died_of_ = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      return Turn::kDied;
    }
    const double ran = ChildCpuSeconds() - cpu_start;
    if (limit > 0 && (*child_seconds + ran > limit ||
                      Now() - start > kWallBackstop * limit)) {
      *child_seconds += ran;
      return Turn::kTimedOut;
    }
    if (TakeTurn(mb_, kParentTurn, 0, kSliceNs)) {
      *child_seconds += ChildCpuSeconds() - cpu_start;
      return Turn::kAnswered;
    }
  }
}

double ImageProcess::ChildCpuSeconds() const {
  struct timespec ts;
  if (clock_gettime(cpu_clock_, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

absl::Status ImageProcess::MapPage(const uint8_t* page) {
  const vdso::VvarPage* vp = vdso::VvarPage::Find(page);
  if (vp == nullptr) {
    return absl::InternalError(
        "the page is not a vdso::VvarPage (no memfd to share with the "
        "compiled vDSO's process)");
  }
  if (vp->id() == mapped_id_) return absl::OkStatus();
  if (!SendFd(socket_, vp->fd())) {
    return absl::InternalError("cannot send the page to the vDSO's process");
  }
  mb_->cmd = Cmd::kMap;
  double ran = 0;
  if (Exchange(&ran, kStartLimit) != Turn::kAnswered ||
      mb_->msg != Msg::kMapped || mb_->map_error != 0) {
    const int err = mb_->map_error;
    Kill();
    return absl::InternalError(absl::StrFormat(
        "the vDSO's process could not map the page: %s", strerror(err)));
  }
  mapped_id_ = vp->id();
  return absl::OkStatus();
}

std::optional<ClockResult> ImageProcess::Call(vdso::HookedAccess& access,
                                              const uint8_t* page,
                                              ClockId clock) {
  ++g_calls;
  if (absl::Status s = MapPage(page); !s.ok()) {
    std::fprintf(stderr, "vdsolab: %s\n", std::string(s.message()).c_str());
    vdso::CallFault fault;
    access.Fault(fault);
    return std::nullopt;
  }
  const double limit = variants::CallTimeLimit();
  double child_seconds = 0;
  RetryPoints retry(image_->layout);
  mb_->cmd = Cmd::kCall;
  mb_->call_clock = clock;
  for (;;) {
    const Turn turn = Exchange(&child_seconds, limit);
    if (turn == Turn::kTimedOut) {
      Kill();
      vdso::CallFault fault;
      fault.kind = vdso::CallFault::Kind::kSpin;
      fault.seconds = child_seconds;
      access.Fault(fault);
      return std::nullopt;
    }
    if (turn == Turn::kDied) {
      vdso::CallFault fault;
      fault.signal = died_of_;
      access.Fault(fault);
      return std::nullopt;
    }
    switch (mb_->msg) {
      case Msg::kLoad: {
        ++g_hooks;
        const uint32_t offset = mb_->offset;
        const uint32_t size = mb_->size;
        bool go_on = true;
        for (int i = retry.AsksBefore(offset, size); i > 0 && go_on; --i) {
          go_on = access.MayRetry();
        }
        if (!go_on) {
          mb_->cmd = Cmd::kAbandon;
          break;
        }
        // A page the kernel does not map (vdso/datapage.h): the task's
        // SIGBUS there, not vdsolab's SIGSEGV reading it on its side.
        if (vdso::VvarUnreadablePage(offset) != nullptr ||
            vdso::VvarUnreadablePage(offset + size - 1) != nullptr) {
          Kill();
          vdso::CallFault fault;
          fault.signal = SIGBUS;
          fault.has_address = true;
          fault.object = "vvar";
          fault.address = offset;
          access.Fault(fault);
          return std::nullopt;
        }
        access.BeforeLoad(page + offset, size);
        uint32_t value = 0;
        if (size == 4) std::memcpy(&value, page + offset, 4);
        retry.Loaded(offset, size, value);
        mb_->cmd = Cmd::kGo;
        break;
      }
      case Msg::kCounter: {
        ++g_hooks;
        switch (static_cast<vdso::CounterRead>(mb_->kind)) {
          case vdso::CounterRead::kRdtscp:
            mb_->value = access.ReadTscp();
            break;
          case vdso::CounterRead::kPlain:
            mb_->value = access.ReadTscPlain();
            break;
          default:
            mb_->value = access.ReadTsc();
            break;
        }
        mb_->cmd = Cmd::kValue;
        break;
      }
      case Msg::kSyscall: {
        ++g_hooks;
        const ClockResult r = access.Fallback(mb_->clock);
        mb_->sys_ret = r.ret;
        mb_->sys_sec = r.ts.tv_sec;
        mb_->sys_nsec = r.ts.tv_nsec;
        mb_->cmd = Cmd::kValue;
        break;
      }
      case Msg::kDone:
        g_emulated += mb_->emulated - seen_[0];
        g_relocated += mb_->relocated - seen_[1];
        g_stepped += mb_->stepped - seen_[2];
        seen_[0] = mb_->emulated;
        seen_[1] = mb_->relocated;
        seen_[2] = mb_->stepped;
        if (mb_->ret != 0) return ClockResult::Error(mb_->ret);
        return ClockResult::Ok(Timespec64{mb_->sec, mb_->nsec});
      case Msg::kAbandoned:
        return std::nullopt;
      case Msg::kFault: {
        vdso::CallFault fault;
        fault.signal = mb_->signal;
        // Only an address that is the same in every run (the child's
        // layout is randomised too).
        if (mb_->addr < vdso::kFixedAddresses) {
          fault.has_address = true;
          fault.address = mb_->addr;
        }
        died_of_ = mb_->signal;
        Kill();
        access.Fault(fault);
        return std::nullopt;
      }
      default: {
        Kill();
        vdso::CallFault fault;
        access.Fault(fault);
        return std::nullopt;
      }
    }
  }
}

namespace {

struct Pool {
  std::mutex mu;
  std::map<const PreparedImage*, std::vector<std::unique_ptr<ImageProcess>>>
      idle;
};
Pool& Idle() {
  static auto* pool = new Pool;
  return *pool;
}

}  // namespace

std::unique_ptr<ImageProcess> AcquireProcess(const PreparedImage* image,
                                             absl::Status* error) {
  {
    Pool& pool = Idle();
    std::lock_guard<std::mutex> lock(pool.mu);
    auto& idle = pool.idle[image];
    while (!idle.empty()) {
      std::unique_ptr<ImageProcess> p = std::move(idle.back());
      idle.pop_back();
      if (p->alive()) return p;
    }
  }
  absl::StatusOr<std::unique_ptr<ImageProcess>> p = ImageProcess::Spawn(image);
  if (!p.ok()) {
    *error = p.status();
    return nullptr;
  }
  return std::move(*p);
}

void ReleaseProcess(std::unique_ptr<ImageProcess> process) {
  if (process == nullptr || !process->alive()) return;
  Pool& pool = Idle();
  std::lock_guard<std::mutex> lock(pool.mu);
  // The image is the process's; a few idle ones per image are plenty.
  auto& idle = pool.idle[process->image()];
  if (idle.size() < 4) idle.push_back(std::move(process));
}

}  // namespace vdsolab::hostvdso::internal
