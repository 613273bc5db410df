/*
 * File: examples/plugin/misbehaving_plugin.c
 *
 * Plugins that misbehave the ways code under test does, for the tests of
 * containment (variants/plugin/call_guard.h): built once per MISBEHAVE
 * value. Every clock but CLOCK_MONOTONIC goes to the syscall (correct);
 * CLOCK_MONOTONIC reads the page's seq and then
 *   1 dereferences a wild pointer (SIGSEGV)
 *   2 divides by a zero it read from the page (SIGFPE)
 *   3 calls abort() (SIGABRT)
 *   4 spins without touching the page, as __iter_div_u64_rem() does on a
 *     delta near 2^63
 *   5 recurses until the stack runs out (SIGSEGV on the guard page)
 *   6 spins on the page, loading the seq for ever: nearly all its time
 *     is spent inside vdsolab's callbacks, where the watchdog's stop must
 *     wait for the callback to return
 *   7 blocks without running (sleeps for ever): the watchdog stops it
 *     once it has seen its thread asleep for the bound
 *   8 calls exit(3), 9 calls _exit(0): ending vdsolab with a status of
 *     its choosing, unless the call is stopped there (exit_guard.cc)
 *   10 stores to the page, which user space cannot write (SIGSEGV)
 *   11 dies in its constructor, inside dlopen(), before any call
 *   12 loads through vdsolab's callbacks outside the vvar area (below
 *      its start, across its end), then answers the syscall's time: the
 *      loads must be refused and the call be a crash finding
 *   13 forks, and both processes return: the child, a copy of vdsolab in
 *      mid-call, must end at once (else every copy forks again at the
 *      same call of the rest of the run)
 *   14 calls pthread_exit(), 15 quick_exit(4): the thread, or the process
 *      past the interposed _exit() (libc calls its own)
 *   16 passes the fallback a NULL timespec: vdsolab's store there is the
 *      plugin's crash, not vdsolab's
 *   17 loads at the top of the address space, where `p + size` wraps:
 *      refused like any load outside the area
 *   18 sets the watchdog's signal (SIGXCPU) to SIG_IGN and spins
 *   19 raises SIGUSR1, 20 writes to a pipe nobody reads (SIGPIPE): signals
 *      that are not faults but whose default action ends the process
 *   21 answers CLOCK_MONOTONIC with 0 (a wrong time) and calls _exit(0)
 *      in its destructor: after the report, in exit(), it would turn
 *      vdsolab's failing exit status into 0
 *   22 is named "--variant=upstream, second": refused at load (a flag)
 *   23 answers every clock but MONOTONIC with 0 without the syscall (the
 *      CPU-time clocks and invalid ids too)
 *   24 goes on looping after may_retry() says stop, then answers
 *   25 answers CLOCK_MONOTONIC with tv_nsec 2e9 (not a timespec)
 *   26 copies the callback table on its first call and starts a thread
 *      that calls every callback through the copy for ever (during that
 *      call, and after it with a context that is a dead stack frame);
 *      the calls answer the syscall's time
 *   27 starts a thread on its first call that crashes (a wild pointer)
 *      outside any call
 *   28 reads the counter with kind 99 (no such instruction), then answers
 *      the syscall's time
 *   29 answers the syscall's time, then unmasks FE_INEXACT
 *      (feenableexcept()) and returns: the caller's next inexact division
 *      would be a SIGFPE; 30 the same, setting the rounding mode upward
 *      (fesetround()); 31 returns with the direction flag set (std): the
 *      caller's memcpy() would run backwards
 *   40 changes the working directory to / and answers CLOCK_MONOTONIC with
 *      0: vdsolab's replay file must still go where it says it went
 *   41 gives up (VDSOLAB_ABANDONED) on its first pass, before may_retry()
 *      says stop: a livelock finding that must not say the budget ran out
 *   42 keeps the largest CLOCK_MONOTONIC answer so far in a static and
 *      returns it when the syscall's is less (a tracer's "never backwards"
 *      cache, shared by every thread): state between calls, so the minimal
 *      replay of its failure, run by a fresh process, may not reproduce
 *   43 sets SIGSEGV back to SIG_DFL, then dereferences a wild pointer;
 *      44 disables its thread's alternate signal stack, then recurses until
 *      the stack runs out; 45 blocks SIGSEGV, then dereferences a wild
 *      pointer: each undoes what contains its fault, and ended vdsolab by
 *      the signal (variants/plugin/signal_guard.cc refuses the change)
 *   46 lowers RLIMIT_FSIZE to 0, then answers the syscall's time: vdsolab's
 *      next write to a file (the replay's) would end it by SIGXFSZ
 *   47 ignores SIGPIPE in a constructor (refused while loading)
 *   49 execl()s /bin/true (vdsolab ended with its status 0, silently);
 *      50 raises SIGSTOP (vdsolab stopped for ever); 51 sets the file mode
 *      mask to 0777 (the replay file unreadable); 52 vfork()s a child that
 *      calls _exit(0) in vdsolab's memory; 53 enters seccomp's strict mode
 *      (vdsolab's next system call killed it); 54 raises SIGTERM (reported
 *      as the user's interrupt): each then answers the syscall's time
 *   55-57 answer the syscall's time and return with rbp changed (55), r15
 *      changed (56), or two words of the caller's frame above the return
 *      address written (57): vdsolab crashed, or ran on in a state not its
 *      own and passed; 58 writes 16 bytes past the timespec it was given
 *   59-62 make the system call themselves, with an inline `syscall` that
 *      no wrapper of vdsolab's sees: 59 sets SIGSEGV back to SIG_DFL
 *      (rt_sigaction), then dereferences a wild pointer (vdsolab ended by
 *      the signal); 60 exit_group(0) and 61 execve("/bin/true") (vdsolab
 *      ended with status 0, silently); 62 kill(getpid(), SIGSTOP) (vdsolab
 *      stopped for ever). variants/plugin/syscall_guard.cc judges them
 *   63 loads 64 KiB past the start of the vvar area it was given, with a
 *      plain load (no callback): it read whatever vdsolab had mapped there
 *      and passed; the area's guards make it fault, as past the kernel's
 *      vvar and vDSO mappings
 *   64 loads one page past the start of the vvar area: the time namespace
 *      page, which the kernel maps only for a task in a time namespace
 *      (SIGBUS there); it read zeros and passed
 *   65 answers CLOCK_MONOTONIC with 0 without writing the timespec: it read
 *      as 0.000000000, a wrong time blamed on the reader's arithmetic
 *   66 loads one page past the area's start through load32(): a page the
 *      kernel does not map, refused like a load outside the area;
 *      vdsolab's hook read it on its own side and died of the SIGSEGV
 *   48 starts a thread that sets SIGSEGV back to SIG_DFL outside any call
 *      (refused: no call to blame), waits for it, then dereferences a wild
 *      pointer: still a finding, not vdsolab's end
 */
#define _GNU_SOURCE /* nanosleep(), quick_exit(), feenableexcept(), syscall() */

#include <fenv.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vdsolab_plugin.h"

#if !defined(MISBEHAVE) || !defined(MISBEHAVE_NAME)
#error "build with -DMISBEHAVE=1..31 or 40..66 -DMISBEHAVE_NAME=\"misbehaving-...\""
#endif

/* 22: a name no command line, report or replay file could carry. */
#if MISBEHAVE == 22
#define PLUGIN_NAME "--variant=upstream, second"
#else
#define PLUGIN_NAME MISBEHAVE_NAME
#endif

#if MISBEHAVE == 11
static volatile uintptr_t wild = 16; /* Not a constant: no -Warray-bounds. */
__attribute__((constructor)) static void DieWhileLoading(void) {
  *(volatile uint32_t*)wild = 1;
}
#endif

#if MISBEHAVE == 47
__attribute__((constructor)) static void IgnoreSigpipe(void) {
  signal(SIGPIPE, SIG_IGN);
}
#endif

#if MISBEHAVE == 48
static void* DefaultSegv(void* arg) {
  (void)arg;
  signal(SIGSEGV, SIG_DFL);
  return NULL;
}
#endif

#if MISBEHAVE == 21
__attribute__((destructor)) static void EndWithSuccess(void) { _exit(0); }
#endif

static const int32_t kClocks[] = {1};
#if MISBEHAVE == 42
/* Its CLOCK_MONOTONIC is the syscall's, cached: it claims no clock from the
 * page (which property fast_path would hold it to). */
#define N_CLOCKS 0
#else
#define N_CLOCKS 1
#endif

/* Keeps the compiler from proving the loops and the recursion away. */
static volatile uint64_t sink;

#if MISBEHAVE == 26 || MISBEHAVE == 27
static struct vdsolab_ops kept;
static const uint8_t* kept_page;
static volatile int thread_ran;

static void* CallOutsideTheCall(void* arg) {
  (void)arg;
  for (;;) {
    struct vdsolab_timespec ts;
#if MISBEHAVE == 27
    thread_ran = 1;
    *(volatile uint32_t*)(uintptr_t)(16 + (sink & 1)) = 1;
#endif
    sink += kept.load32(kept.ctx, kept_page);
    sink += kept.load64(kept.ctx, kept_page);
    sink += kept.read_counter(kept.ctx, VDSOLAB_RDTSC);
    sink += (uint64_t)kept.may_retry(kept.ctx);
    sink += (uint64_t)kept.fallback(kept.ctx, 1, &ts);
    kept.rmb(kept.ctx);
    kept.cpu_relax(kept.ctx);
    thread_ran = 1;
  }
  return NULL;
}

/* Starts the thread once and waits until it has run (at most 1 s): a
 * deterministic first stray callback, during this call. */
static void StartThreadOnce(const struct vdsolab_ops* ops,
                            const uint8_t* page) {
  static int started;
  pthread_t thread;
  int i;
  if (started) return;
  started = 1;
  kept = *ops;
  kept_page = page;
  if (pthread_create(&thread, NULL, CallOutsideTheCall, NULL) != 0) return;
  pthread_detach(thread);
  for (i = 0; i < 1000 && !thread_ran; i++) {
    const struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
#if MISBEHAVE == 27
  for (i = 0; i < 1000; i++) { /* The crash ends the process meanwhile. */
    const struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
#endif
}
#endif

#if MISBEHAVE >= 59 && MISBEHAVE <= 62
/* The system call itself, without the C library. */
static long InlineSyscall(long nr, long a1, long a2, long a3, long a4) {
  long ret;
  register long r10 __asm__("r10") = a4;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10)
                   : "rcx", "r11", "memory");
  return ret;
}
#endif

static uint64_t Recurse(uint64_t depth) {
  volatile char frame[256];
  frame[depth % sizeof frame] = (char)depth;
  return Recurse(depth + 1) + frame[0];
}

static int32_t Misbehave(const struct vdsolab_ops* ops, const uint8_t* page,
                         int32_t clock, struct vdsolab_timespec* ts) {
  if (clock != 1 && MISBEHAVE == 23) {
    ts->tv_sec = 0;
    ts->tv_nsec = 0;
    return 0;
  }
  if (clock != 1) return ops->fallback(ops->ctx, clock, ts);
  const uint32_t seq = ops->load32(ops->ctx, page);
  switch (MISBEHAVE) {
    case 1:
      return (int32_t) * (volatile uint32_t*)(uintptr_t)(16 + (seq & 1));
    case 2: {
      volatile uint32_t zero = seq & 0u; /* Not foldable: volatile. */
      return (int32_t)(seq / zero);
    }
    case 3:
      abort();
    case 4:
      for (;;) sink = sink * 6364136223846793005ULL + seq;
    case 5:
      return (int32_t)Recurse(seq);
    case 6:
      for (;;) sink += ops->load32(ops->ctx, page);
    case 7:
      for (;;) {
        const struct timespec hour = {3600, 0};
        nanosleep(&hour, NULL);
      }
    case 8:
      exit(3);
    case 9:
      _exit(0);
    case 10:
      /* The vvar page is read-only to user space. */
      *(volatile uint8_t*)(uintptr_t)page = (uint8_t)seq;
      return -22;
    case 12:
      sink += ops->load32(ops->ctx, page - 4);
      sink += ops->load64(ops->ctx, page + ops->area_bytes - 4);
      return ops->fallback(ops->ctx, clock, ts);
    case 13:
      sink += (uint64_t)fork();
      return ops->fallback(ops->ctx, clock, ts);
    case 14:
      pthread_exit(NULL);
    case 15:
      quick_exit(4);
    case 16:
      return ops->fallback(ops->ctx, clock, NULL);
    case 17:
      sink += ops->load32(ops->ctx, (const uint8_t*)(UINTPTR_MAX - 1));
      return ops->fallback(ops->ctx, clock, ts);
    case 18: {
      /* The system call itself: signal() would be refused (43), and the
       * watchdog's answer to a handler it cannot refuse is the point. */
      const struct {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        uint64_t mask;
      } ignore = {SIG_IGN, 0, NULL, 0};
      syscall(SYS_rt_sigaction, SIGXCPU, &ignore, NULL, sizeof ignore.mask);
      for (;;) sink = sink * 6364136223846793005ULL + seq;
    }
#if MISBEHAVE == 48
    case 48: {
      pthread_t t;
      if (pthread_create(&t, NULL, DefaultSegv, NULL) == 0) {
        pthread_join(t, NULL);
      }
      return (int32_t) * (volatile uint32_t*)(uintptr_t)(16 + (seq & 1));
    }
#endif
    case 49:
      execl("/bin/true", "true", (char*)NULL);
      return ops->fallback(ops->ctx, clock, ts);
    case 50:
      raise(SIGSTOP);
      return ops->fallback(ops->ctx, clock, ts);
    case 51:
      umask(0777);
      return ops->fallback(ops->ctx, clock, ts);
    case 52: {
      const pid_t child = vfork();
      if (child == 0) _exit(0);
      return ops->fallback(ops->ctx, clock, ts);
    }
    case 53:
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0);
      return ops->fallback(ops->ctx, clock, ts);
    case 54:
      raise(SIGTERM);
      return ops->fallback(ops->ctx, clock, ts);
    case 55:
    case 56:
    case 57:
      return ops->fallback(ops->ctx, clock, ts);
    case 58:
      /* 16 bytes past the timespec: a caller's locals. */
      ((volatile struct vdsolab_timespec*)ts)[1].tv_sec = 1;
      ((volatile struct vdsolab_timespec*)ts)[1].tv_nsec = 2;
      return ops->fallback(ops->ctx, clock, ts);
#if MISBEHAVE >= 59 && MISBEHAVE <= 62
    case 59: {
      const struct {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        uint64_t mask;
      } dfl = {SIG_DFL, 0, NULL, 0};
      InlineSyscall(SYS_rt_sigaction, SIGSEGV, (long)&dfl, 0, sizeof dfl.mask);
      return (int32_t) * (volatile uint32_t*)(uintptr_t)(16 + (seq & 1));
    }
    case 60:
      InlineSyscall(SYS_exit_group, 0, 0, 0, 0);
      return ops->fallback(ops->ctx, clock, ts);
    case 61: {
      static char* const argv[] = {"true", NULL};
      InlineSyscall(SYS_execve, (long)"/bin/true", (long)argv, 0, 0);
      return ops->fallback(ops->ctx, clock, ts);
    }
    case 62:
      InlineSyscall(SYS_kill, getpid(), SIGSTOP, 0, 0);
      return ops->fallback(ops->ctx, clock, ts);
#endif
    case 63:
      sink += *(const volatile uint32_t*)(page + 65536);
      return ops->fallback(ops->ctx, clock, ts);
    case 64:
      sink += *(const volatile uint32_t*)(page + 4096);
      return ops->fallback(ops->ctx, clock, ts);
    case 65:
      return (int32_t)(seq & 0u);
    case 66:
      sink += ops->load32(ops->ctx, page + 4096);
      return ops->fallback(ops->ctx, clock, ts);
    case 43: {
      signal(SIGSEGV, SIG_DFL);
      return (int32_t) * (volatile uint32_t*)(uintptr_t)(16 + (seq & 1));
    }
    case 44: {
      stack_t off;
      memset(&off, 0, sizeof off);
      off.ss_flags = SS_DISABLE;
      sigaltstack(&off, NULL);
      return (int32_t)Recurse(seq);
    }
    case 45: {
      sigset_t segv;
      sigemptyset(&segv);
      sigaddset(&segv, SIGSEGV);
      sigprocmask(SIG_BLOCK, &segv, NULL);
      return (int32_t) * (volatile uint32_t*)(uintptr_t)(16 + (seq & 1));
    }
    case 46: {
      const struct rlimit none = {0, 0};
      setrlimit(RLIMIT_FSIZE, &none);
      return ops->fallback(ops->ctx, clock, ts) + (int32_t)(seq & 0u);
    }
    case 19:
      raise(SIGUSR1);
      return ops->fallback(ops->ctx, clock, ts);
    case 20: {
      /* One pipe for every call: the call never gets past write(). */
      static int no_reader = -1;
      if (no_reader < 0) {
        int fds[2];
        if (pipe(fds) != 0) return -24;
        close(fds[0]);
        no_reader = fds[1];
      }
      sink += (uint64_t)write(no_reader, "x", 1);
      return ops->fallback(ops->ctx, clock, ts);
    }
    case 21:
      ts->tv_sec = 0;
      ts->tv_nsec = (int64_t)(seq & 0u);
      return 0;
    case 23:
      return ops->fallback(ops->ctx, clock, ts);
    case 24: {
      int i;
      for (i = 0; i < 20000; i++) {
        sink +=
            (uint64_t)ops->may_retry(ops->ctx) + ops->load32(ops->ctx, page);
      }
      return ops->fallback(ops->ctx, clock, ts);
    }
#if MISBEHAVE == 26 || MISBEHAVE == 27
    case 26:
    case 27:
      StartThreadOnce(ops, page);
      return ops->fallback(ops->ctx, clock, ts);
#endif
    case 25:
      ts->tv_sec = 1;
      ts->tv_nsec = 2000000000 + (int64_t)(seq & 0u);
      return 0;
    case 28:
      sink += ops->read_counter(ops->ctx, 99);
      return ops->fallback(ops->ctx, clock, ts);
    /* 29-31: after the fallback, vdsolab's own code, which must not run
     * with the state changed (it is the call's to leave as it found it). */
    case 29: {
      const int32_t ret = ops->fallback(ops->ctx, clock, ts);
      feenableexcept(FE_INEXACT);
      return ret;
    }
    case 30: {
      const int32_t ret = ops->fallback(ops->ctx, clock, ts);
      fesetround(FE_UPWARD);
      return ret;
    }
    case 31: {
      const int32_t ret = ops->fallback(ops->ctx, clock, ts);
      __asm__ volatile("std" ::: "cc");
      return ret;
    }
    case 41:
      return VDSOLAB_ABANDONED + (int32_t)(seq & 0u);
    case 42: {
      static struct vdsolab_timespec last;
      const int32_t ret =
          ops->fallback(ops->ctx, clock, ts) + (int32_t)(seq & 0u);
      if (ret != 0) return ret;
      if (ts->tv_sec < last.tv_sec ||
          (ts->tv_sec == last.tv_sec && ts->tv_nsec < last.tv_nsec)) {
        *ts = last;
      } else {
        last = *ts;
      }
      return 0;
    }
    case 40:
      sink += (uint64_t)chdir("/");
      ts->tv_sec = 0;
      ts->tv_nsec = (int64_t)(seq & 0u);
      return 0;
  }
  return -22;
}

#if MISBEHAVE >= 55 && MISBEHAVE <= 57
/* 55-57: Misbehave() (the syscall's answer) called from a
 * wrapper that breaks the x86-64 ABI on its way out. */
int32_t vdsolab_misbehaving_inner(const struct vdsolab_ops* ops,
                                  const uint8_t* page, int32_t clock,
                                  struct vdsolab_timespec* ts) {
  return Misbehave(ops, page, clock, ts);
}
int32_t BreaksTheAbi(const struct vdsolab_ops* ops, const uint8_t* page,
                     int32_t clock, struct vdsolab_timespec* ts);
__asm__(
    ".text\n.globl BreaksTheAbi\n.hidden BreaksTheAbi\n"
    ".type BreaksTheAbi,@function\nBreaksTheAbi:\n"
    "  push %rdx\n" /* The clock: only MONOTONIC misbehaves. */
    "  call vdsolab_misbehaving_inner\n"
    "  pop %rdx\n"
    "  cmp $1, %edx\n"
    "  jne 1f\n"
#if MISBEHAVE == 55
    "  mov $0x10, %rbp\n"
#elif MISBEHAVE == 56
    "  add $1, %r15\n"
#else
    "  movq $0x10, 8(%rsp)\n  movq $0x10, 16(%rsp)\n"
#endif
    "1:\n  ret\n.size BreaksTheAbi, .-BreaksTheAbi\n");
#define ENTRY BreaksTheAbi
#else
#define ENTRY Misbehave
#endif

static const struct vdsolab_plugin kPlugin = {
    VDSOLAB_PLUGIN_ABI_VERSION,
    PLUGIN_NAME,
    "examples/plugin/misbehaving_plugin.c (test only)",
    "a reader that crashes, aborts, spins or blocks on CLOCK_MONOTONIC",
    "upstream",
    kClocks,
    N_CLOCKS,
    ENTRY,
};

const struct vdsolab_plugin* vdsolab_plugin_v1(void) { return &kPlugin; }
