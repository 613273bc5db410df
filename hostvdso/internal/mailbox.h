// File: hostvdso/internal/mailbox.h
//
// The page of shared memory through which the simulation (parent) and the
// process running the compiled vDSO (child) take turns. One side writes
// its message, hands the turn over and waits for it to come back: the
// child asks at every hook (a page load, a counter read, the syscall) and
// the parent answers after running the simulation's hook; the parent
// starts each call. Strictly alternating, so no field is ever written by
// both sides at once.
//
// Waiting spins briefly (the other side usually answers within
// microseconds when both run) and then sleeps on a futex on `turn`
// (FUTEX_WAIT on shared memory: not the private variant). Everything here
// is async-signal-safe: the child calls it from its signal handlers.

#ifndef VDSOLAB_HOSTVDSO_INTERNAL_MAILBOX_H_
#define VDSOLAB_HOSTVDSO_INTERNAL_MAILBOX_H_

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace vdsolab::hostvdso::internal {

// Child to parent.
enum class Msg : uint32_t {
  kNone,
  kReady,      // Set up, waiting for commands.
  kMapped,     // The simulated page is mapped (or map_error says why not).
  kLoad,       // About to load `size` bytes at `offset` of the page.
  kCounter,    // A counter read of kind `kind` (vdso::CounterRead).
  kSyscall,    // clock_gettime(`clock`) reached the system call.
  kDone,       // The call returned `ret` and `sec`/`nsec`.
  kAbandoned,  // The call was abandoned as the parent asked.
  kFault,      // The image crashed: `signal` at `addr` (ip `rip`), both
               // as link addresses where they are in the view or image.
};

// Parent to child.
enum class Cmd : uint32_t {
  kNone,
  kMap,      // Receive a page's memfd on the socket and map it.
  kCall,     // Run clock_gettime(`call_clock`).
  kGo,       // Answer to kLoad: load now.
  kAbandon,  // Answer to kLoad: leave the call (livelock budget).
  kValue,    // Answer to kCounter (`value`) or kSyscall (`sys_*`).
  kExit,
};

inline constexpr uint32_t kParentTurn = 0;
inline constexpr uint32_t kChildTurn = 1;

struct Mailbox {
  // Whose turn it is; the futex word. Handing the turn over is a seq_cst
  // store that publishes the message written before it; taking it is a
  // load that sees that message (TakeTurn pairs with GiveTurn).
  std::atomic<uint32_t> turn{kParentTurn};
  // A side asleep on the futex (so the other must wake it).
  std::atomic<uint32_t> sleeping[2] = {0, 0};

  // Child to parent.
  Msg msg = Msg::kNone;
  uint32_t offset = 0;
  uint32_t size = 0;
  uint32_t kind = 0;
  int32_t clock = 0;
  int32_t ret = 0;
  int64_t sec = 0;
  int64_t nsec = 0;
  int32_t signal = 0;
  uint64_t addr = 0;
  uint64_t rip = 0;
  int32_t map_error = 0;  // errno of a failed mmap, 0 if mapped.
  // How the child let each load happen, counted since it started.
  uint64_t emulated = 0;   // A plain mov emulated from the mapping.
  uint64_t relocated = 0;  // The instruction run on a trampoline.
  uint64_t stepped = 0;    // The instruction single-stepped in place.

  // Parent to child.
  Cmd cmd = Cmd::kNone;
  int32_t call_clock = 0;
  uint64_t value = 0;
  int32_t sys_ret = 0;
  int64_t sys_sec = 0;
  int64_t sys_nsec = 0;
};
static_assert(std::atomic<uint32_t>::is_always_lock_free,
              "the turn is shared between processes");

inline long Futex(std::atomic<uint32_t>* word, int op, uint32_t value,
                  const struct timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value,
                 timeout, nullptr, 0);
}

// Hands the turn to `to` (after writing its message). The seq_cst store of
// `turn` followed by the load of `sleeping[to]` pairs with TakeTurn's
// store of `sleeping[me]` followed by its load of `turn` (Dekker): either
// the waiter sees the turn before it sleeps, or this side sees it asleep
// and wakes it.
inline void GiveTurn(Mailbox* mb, uint32_t to) {
  mb->turn.store(to, std::memory_order_seq_cst);
  if (mb->sleeping[to].load(std::memory_order_seq_cst) != 0) {
    Futex(&mb->turn, FUTEX_WAKE, 1, nullptr);
  }
}

// Waits until it is `me`'s turn: `spins` polls, then futex sleeps of at
// most `slice_ns` each until `budget_ns` (< 0: no limit) has passed.
// Returns whether the turn came; the caller decides what a timeout means
// (the parent checks the child and its time bound; the child checks its
// parent). The acquire loads of `turn` pair with GiveTurn's store: the
// other side's message is visible once the turn is seen.
inline bool TakeTurn(Mailbox* mb, uint32_t me, int spins, int64_t slice_ns) {
  for (int i = 0; i < spins; ++i) {
    if (mb->turn.load(std::memory_order_acquire) == me) return true;
    __builtin_ia32_pause();
  }
  mb->sleeping[me].store(1, std::memory_order_seq_cst);
  bool got = mb->turn.load(std::memory_order_seq_cst) == me;
  if (!got) {
    struct timespec ts;
    ts.tv_sec = slice_ns / 1000000000;
    ts.tv_nsec = slice_ns % 1000000000;
    Futex(&mb->turn, FUTEX_WAIT, me ^ 1u, &ts);
    got = mb->turn.load(std::memory_order_acquire) == me;
  }
  mb->sleeping[me].store(0, std::memory_order_relaxed);
  return got;
}

}  // namespace vdsolab::hostvdso::internal

#endif  // VDSOLAB_HOSTVDSO_INTERNAL_MAILBOX_H_
