/*
 * File: ktree/internal/glue.c
 *
 * The runtime glue of a kernel-tree variant (docs/kernel-trees.md): the C
 * that vdsolab compiles next to a kernel tree's own vDSO object, at build
 * time, into one plugin shared object speaking plugin ABI version 3. It is
 * vdsolab's code, not the kernel's, and includes no kernel header.
 *
 * The kernel object reaches the world in three ways, and each lands here:
 *
 * - Page loads. The object is compiled with -fsanitize=thread (without the
 *   TSan runtime), so the compiler calls __tsan_read<N>(addr) before every
 *   load. A load inside the simulated vvar area becomes
 *   ops->before_load(): a preemption point after which the kernel's own
 *   load reads the bytes the simulation has just made visible; in a quiet
 *   call (vdsolab_ops.quiet) a count and a seq note in the call record,
 *   handed over before each callback. Anything else (the stack, the
 *   caller's timespec) returns after a compare.
 * - Counter reads and the syscall. ktree rewrites every rdtsc, rdtscp and
 *   syscall instruction of the object's assembly into a call to one of the
 *   register-preserving thunks below (the object is built with
 *   -mno-red-zone, so the call's push cannot clobber live data).
 * - The vvar symbols the x86 vDSO reaches RIP-relative (pvclock_page,
 *   timens__vdso_data, ...): defined here. Loads from the pvclock shadow
 *   are forwarded to the simulated pvclock page and copied in first; loads
 *   from the time namespace shadow (before 6.13: the time page a namespace
 *   task sees at timens_page), in a namespace call, to the time page.
 *
 * Kernel code never calls may_retry(), so the glue calls it where the
 * built-in readers do: before a seq word is loaded again after an odd value
 * (the spin) or after a re-check that failed (the retry), as the seqlock
 * protocol makes those loads; and on every load past a large per-call
 * budget. When it says 0, the call leaves the kernel code with
 * __builtin_longjmp and answers VDSOLAB_ABANDONED. No signal handler is
 * installed.
 *
 * Built with a generated header, vdsolab_tree_config.h (name, provenance,
 * layout, semantics, where the data and the seq words are).
 */
#include <stddef.h>
#include <stdint.h>

#include "vdsolab_plugin.h"
#include "vdsolab_tree_config.h"

#define VDSOLAB_HIDDEN __attribute__((visibility("hidden")))
#define VDSOLAB_EXPORT __attribute__((visibility("default")))
/* The hooks' rare paths, out of line: the common one (a quiet call's load,
 * or an address outside the area) then needs no saved registers. */
#define VDSOLAB_SLOW __attribute__((noinline, cold))

/* The x86-64 system calls the vDSO falls back to
 * (arch/x86/entry/syscalls/syscall_64.tbl). */
#define VDSOLAB_NR_GETTIMEOFDAY 96
#define VDSOLAB_NR_CLOCK_GETTIME 228
#define VDSOLAB_NR_CLOCK_GETRES 229
#define VDSOLAB_ENOSYS 38

/* Hooked loads per call before may_retry() is asked at every further one:
 * a kernel call makes a few dozen; only a loop that never ends gets here. */
#define VDSOLAB_LOAD_BUDGET 4096

/* The entry point of the kernel object (the wrapper ktree compiles around
 * the tree's arch/x86/entry/vdso/vclock_gettime.c): the tree's
 * __cvdso_clock_gettime_data(vd, clock, ts). */
int vdsolab_tree_clock_gettime(const void* vd, int clock,
                               struct vdsolab_timespec* ts);
/* And the tree's __cvdso_gettimeofday_data(), __cvdso_time_data() and
 * __cvdso_clock_getres_data() (x86's other entry points). */
int vdsolab_tree_gettimeofday(const void* vd, struct vdsolab_timeval* tv,
                              struct vdsolab_timezone* tz);
int64_t vdsolab_tree_time(const void* vd, int64_t* t);
int vdsolab_tree_clock_getres(const void* vd, int clock,
                              struct vdsolab_timespec* res);

enum seq_state { SEQ_BEGIN, SEQ_CHECK };

/* One call of the kernel code. Lives on the glue's stack; `cur` points at it
 * while the kernel code runs. The load hooks' fields come first. */
struct call {
  const uint8_t* page;
  uint64_t area_bytes; /* ops->area_bytes: the area is [page, page + this) */
  /* Every load in the area so far, for the budget (a quiet call's too). */
  uint64_t loads;
  /* In a quiet call (vdsolab_ops.quiet) outside a namespace's view, the
   * budget: loads below it the hooks take inline (on_load()); 0 in any
   * other call. */
  uint64_t quiet_limit;
  /* A quiet call's seq notes (struct vdsolab_quiet's), kept here and
   * handed over with the load count before each callback (quiet_sync()). */
  uint32_t last_seq;
  uint32_t begin_seq;
  const struct vdsolab_ops* ops;
  struct vdsolab_quiet* quiet; /* ops->quiet, looked up once */
  /* `loads` when the count was last handed over, less the loads the host
   * does not step for (a namespace's own page). */
  uint64_t quiet_mark;
  /* ops->time_page_offset: 0, or in a time namespace's view where the
   * time page is (page 0 is then the namespace's page). */
  uint64_t time_page;
  struct call* saved;
  uint32_t seq_offset; /* the seq word the state refers to */
  uint32_t seq_start;
  enum seq_state seq_state;
  int retry_due; /* ask may_retry() before the next seq load */
  void* jump[5]; /* __builtin_setjmp buffer */
};

/* initial-exec: a %fs-relative access in every hook instead of a call to
 * __tls_get_addr (glibc keeps static TLS room for dlopen()ed objects). */
static __thread struct call* cur __attribute__((tls_model("initial-exec")));

static const uint32_t kSeqOffsets[] = VDSOLAB_TREE_SEQ_OFFSETS;

/* The vvar symbols. The kernel object references them RIP-relative, so
 * they must be here rather than in the simulated area; the ones a tree does
 * not reference cost 4 KiB of .bss each. */
VDSOLAB_HIDDEN __attribute__((aligned(4096))) uint8_t pvclock_page[4096];
VDSOLAB_HIDDEN __attribute__((aligned(4096))) uint8_t hvclock_page[4096];
/* Where the x86 vDSO before 6.13 finds the time page from a namespace's
 * page (x86 vdso-layout.lds.S: timens_page + the _vdso_data offset):
 * in a namespace call, loads here are the time page's bytes at
 * VDSOLAB_TREE_DATA_OFFSET + their offset (timens_load()); outside one a
 * load here dies as the kernel's SIGBUS does (timens_load()): the kernel
 * maps no page there for a task in the initial namespace. */
VDSOLAB_HIDDEN __attribute__((aligned(4096))) uint8_t timens__vdso_data[4096];
/* Reached only by __cvdso_clock_gettime(), which the plugin never calls
 * (it passes the simulated page to __cvdso_clock_gettime_data()). */
VDSOLAB_HIDDEN __attribute__((aligned(4096))) uint8_t vvar__vdso_data[4096];
VDSOLAB_HIDDEN __attribute__((aligned(4096))) uint8_t vvar__vdso_rng_data[4096];
VDSOLAB_HIDDEN __attribute__((aligned(4096))) uint8_t vdso_u_time_data[4096];
VDSOLAB_HIDDEN __attribute__((aligned(4096))) uint8_t vdso_u_rng_data[4096];
VDSOLAB_HIDDEN __attribute__((aligned(4096))) uint8_t vdso_u_arch_data[4096];

static void copy_bytes(uint8_t* dst, const uint8_t* src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = src[i];
}

/* Whether a layout's seq word starts `offset` bytes into the area: the
 * compile-time offsets, so a quiet load tests them without a memory load
 * (they are the layout's, as struct vdsolab_quiet's seq_start map is). */
static inline __attribute__((always_inline)) int is_seq(uint64_t offset) {
  for (size_t i = 0; i < sizeof(kSeqOffsets) / sizeof(kSeqOffsets[0]); ++i) {
    if (kSeqOffsets[i] == offset) return 1;
  }
  return 0;
}

/* A quiet call's count of loads since the last hand-over and its seq notes,
 * to the host's struct vdsolab_quiet: before every callback (the host takes
 * them in first) and at the call's end. Nothing in any other call. */
static void quiet_sync(struct call* c) {
  struct vdsolab_quiet* q = c->quiet;
  if (q == NULL) return;
  q->loads += c->loads - c->quiet_mark;
  c->quiet_mark = c->loads;
  q->last_seq = c->last_seq;
  q->begin_seq = c->begin_seq;
}

/* After a callback: the notes as the host left them. */
static void quiet_resync(struct call* c) {
  struct vdsolab_quiet* q = c->quiet;
  if (q == NULL) return;
  c->last_seq = q->last_seq;
  c->begin_seq = q->begin_seq;
}

static void ask_may_retry(struct call* c) {
  quiet_sync(c);
  const int yes = c->ops->may_retry(c->ops->ctx);
  quiet_resync(c);
  if (!yes) __builtin_longjmp(c->jump, 1);
}

/* The seqlock reader protocol as the loads show it: a begin load (odd:
 * spin; even: the section starts), then a re-check (equal: done; else
 * retry). The next load of the word after a spin or a failed re-check is
 * where a built-in reader calls may_retry(). */
static void seq_loaded(struct call* c, uint32_t offset, uint32_t value) {
  if (offset != c->seq_offset) {
    c->seq_offset = offset;
    c->seq_state = SEQ_BEGIN;
  }
  if (c->seq_state == SEQ_BEGIN) {
    if (value & 1) {
      c->retry_due = 1;
    } else {
      c->seq_state = SEQ_CHECK;
      c->seq_start = value;
    }
  } else {
    if (value != c->seq_start) c->retry_due = 1;
    c->seq_state = SEQ_BEGIN;
  }
}

/* A load in a quiet call (vdsolab_ops.quiet), already counted in
 * c->loads: its seq note, as vdsolab's load path makes it, instead of a
 * before_load() call. `p` is `offset` bytes into the area. */
static inline __attribute__((always_inline)) void quiet_note(struct call* c,
                                                             const uint8_t* p,
                                                             uint64_t offset,
                                                             size_t size) {
  if (is_seq(offset)) {
    /* The low 32 bits of the little-endian value (one load for a seq word,
     * which is 4 bytes). */
    uint32_t v = 0;
    if (size >= 4) {
      v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
          (uint32_t)p[3] << 24;
    } else {
      copy_bytes((uint8_t*)&v, p, size);
    }
    c->last_seq = v;
  } else {
    c->begin_seq = c->last_seq;
  }
}

static VDSOLAB_SLOW void page_load(struct call* c, const uint8_t* p,
                                   uint32_t size) {
  uint32_t offset = (uint32_t)(p - c->page);
  /* A namespace's own page: not a load the host steps for, so never
   * handed over (quiet_sync()), even by the budget's may_retry(). */
  const int own_page = c->time_page != 0 && offset < c->time_page;
  if (own_page) ++c->quiet_mark;
  if (++c->loads > VDSOLAB_LOAD_BUDGET) ask_may_retry(c);
  if (c->time_page != 0) {
    /* A namespace's view. Its own page is written once, before the
     * namespace's first task (no store can land between its loads), and
     * its seq (1 for good) is not the time page's: no preemption point,
     * nothing for the seq protocol. The time page's seq words are where
     * they are in the time page. */
    if (own_page) return;
    if (offset < 2 * c->time_page) offset -= (uint32_t)c->time_page;
  }
  if (c->quiet != NULL) {
    /* Nothing changes the page during a quiet call: a seq word reads the
     * same at every load, so the retry protocol below has nothing to see
     * but an odd seq, whose spin the load budget ends (an aborted quiet
     * call, run again with before_load()). on_load() takes these itself
     * outside a namespace's view. */
    quiet_note(c, p, offset, size);
    return;
  }
  const int seq = size == 4 && is_seq(offset);
  if (seq && c->retry_due) {
    c->retry_due = 0;
    ask_may_retry(c);
  }
  c->ops->before_load(c->ops->ctx, p, size);
  if (seq) {
    uint32_t v = 0;
    copy_bytes((uint8_t*)&v, p, 4);
    seq_loaded(c, offset, v);
  }
}

/* A load from the pvclock shadow: the same bytes of the simulated pvclock
 * page, made current by before_load() and copied into the shadow, which the
 * kernel's load then reads. The shadow is per process: two threads running
 * tree code on kvm-clock pages at once would race on it (vdsolab's
 * simulation runs one call at a time). */
static VDSOLAB_SLOW void pvclock_load(struct call* c, const uint8_t* p,
                                      size_t size) {
  const size_t off = (size_t)(p - pvclock_page);
  if (off + size > sizeof(pvclock_page)) size = sizeof(pvclock_page) - off;
  const uint8_t* src = c->page + c->ops->pvclock_offset + off;
  if (src < c->page || (uint64_t)(src + size - c->page) > c->area_bytes) {
    return;
  }
  if (++c->loads > VDSOLAB_LOAD_BUDGET) ask_may_retry(c);
  if (c->quiet != NULL) {
    quiet_note(c, src, (uint64_t)(src - c->page), size);
  } else {
    c->ops->before_load(c->ops->ctx, src, (uint32_t)size);
  }
  copy_bytes((uint8_t*)p, src, size);
}

/* A load from the time namespace shadow: in a namespace call, the time
 * page's bytes there, made current by page_load() (a load of the time
 * page like any other) and copied into the shadow, which the kernel's load
 * then reads. Per process, like the pvclock shadow. */
static VDSOLAB_SLOW void timens_load(struct call* c, const uint8_t* p,
                                     size_t size) {
  const size_t off = (size_t)(p - timens__vdso_data);
  if (c->time_page == 0) {
    /* Outside a namespace the kernel maps nothing there, and the load is
     * SIGBUS (arch/x86/entry/vdso/vma.c, vvar_fault()). The same load made
     * of the area's own namespace slot (page 1, unmapped in the readers'
     * view), so that the call dies as the kernel's would and the host
     * names the page: a code path that strays into the namespace data
     * would otherwise read the shadow's zeros as a time. */
    const uint64_t slot = 4096 + VDSOLAB_TREE_DATA_OFFSET + off;
    if (slot + size <= c->area_bytes) {
      (void)*(volatile const uint8_t*)(c->page + slot);
    }
    return;
  }
  if (off + size > sizeof(timens__vdso_data)) {
    size = sizeof(timens__vdso_data) - off;
  }
  const uint8_t* src = c->page + c->time_page + VDSOLAB_TREE_DATA_OFFSET + off;
  if ((uint64_t)(src + size - c->page) > c->area_bytes) return;
  page_load(c, src, (uint32_t)size);
  copy_bytes((uint8_t*)p, src, size);
}

static inline void on_load(const void* addr, size_t size) {
  struct call* c = cur;
  const uint8_t* p = (const uint8_t*)addr;
  if (c == NULL) return;
  /* As an offset: an address below the area wraps to a large one. */
  const uint64_t offset = (uint64_t)(p - c->page);
  if (offset < c->area_bytes) {
    /* A quiet call's load within the budget, counted and noted here:
     * page_load()'s quiet path, inline in the hook. */
    if (c->loads < c->quiet_limit) {
      ++c->loads;
      quiet_note(c, p, offset, size);
      return;
    }
    page_load(c, p, (uint32_t)size);
  } else if (p >= pvclock_page && p < pvclock_page + sizeof(pvclock_page)) {
    pvclock_load(c, p, size);
  } else if (p >= timens__vdso_data &&
             p < timens__vdso_data + sizeof(timens__vdso_data)) {
    timens_load(c, p, size);
  }
}

/* The compiler's instrumentation entry points (the TSan ABI). Stores go to
 * the caller's timespec or the stack: nothing to do. */
#define VDSOLAB_LOAD_HOOKS(n)                                              \
  VDSOLAB_HIDDEN void __tsan_read##n(void* a) { on_load(a, n); }           \
  VDSOLAB_HIDDEN void __tsan_volatile_read##n(void* a) { on_load(a, n); }  \
  VDSOLAB_HIDDEN void __tsan_unaligned_read##n(void* a) { on_load(a, n); } \
  VDSOLAB_HIDDEN void __tsan_write##n(void* a) { (void)a; }                \
  VDSOLAB_HIDDEN void __tsan_volatile_write##n(void* a) { (void)a; }       \
  VDSOLAB_HIDDEN void __tsan_unaligned_write##n(void* a) { (void)a; }

VDSOLAB_LOAD_HOOKS(1)
VDSOLAB_LOAD_HOOKS(2)
VDSOLAB_LOAD_HOOKS(4)
VDSOLAB_LOAD_HOOKS(8)
VDSOLAB_LOAD_HOOKS(16)

/* The signatures are gcc's builtin ones (sanitizer.def: a long length,
 * func_exit taking the return address), which gcc checks whenever any
 * sanitizer is on (Bazel's --config=asan/ubsan compile this file too); clang
 * calls func_exit with no argument, which an ignored parameter accepts. */
VDSOLAB_HIDDEN void __tsan_read_range(void* a, long n) {
  on_load(a, (size_t)n);
}
VDSOLAB_HIDDEN void __tsan_write_range(void* a, long n) {
  (void)a;
  (void)n;
}
VDSOLAB_HIDDEN void __tsan_init(void) {}
VDSOLAB_HIDDEN void __tsan_func_entry(void* pc) { (void)pc; }
VDSOLAB_HIDDEN void __tsan_func_exit(void* pc) { (void)pc; }

/* clang instruments struct copies as calls to these. */
VDSOLAB_HIDDEN void* __tsan_memcpy(void* dst, const void* src, size_t n) {
  on_load(src, n);
  copy_bytes((uint8_t*)dst, (const uint8_t*)src, n);
  return dst;
}
VDSOLAB_HIDDEN void* __tsan_memmove(void* dst, const void* src, size_t n) {
  on_load(src, n);
  uint8_t* d = (uint8_t*)dst;
  const uint8_t* s = (const uint8_t*)src;
  if (d < s) {
    copy_bytes(d, s, n);
  } else {
    for (size_t i = n; i != 0; --i) d[i - 1] = s[i - 1];
  }
  return dst;
}
VDSOLAB_HIDDEN void* __tsan_memset(void* dst, int v, size_t n) {
  uint8_t* d = (uint8_t*)dst;
  for (size_t i = 0; i < n; ++i) d[i] = (uint8_t)v;
  return dst;
}

/* smp_rmb()/smp_wmb() where a tree leaves them out of line (an include
 * order that misses asm/barrier.h): x86 is TSO, so they are compiler
 * barriers, which the call already is; smp_rmb() is reported to the
 * simulation as the reader's barrier. */
VDSOLAB_HIDDEN void smp_rmb(void) {
  struct call* c = cur;
  /* A quiet call has no loads to order (QuietAccess::Rmb() is empty). */
  if (c != NULL && c->quiet == NULL) c->ops->rmb(c->ops->ctx);
}
VDSOLAB_HIDDEN void smp_wmb(void) {}

/* The barriers of the tree's own code: with CONFIG_KCSAN_WEAK_MEMORY (the
 * generated config) its smp_rmb(), virt_rmb() and smp_mb() are each a
 * __atomic_signal_fence() of a memory order kcsan-checks.h assigns, which
 * -fsanitize=thread turns into this call. Acquire (rmb) and seq_cst (mb)
 * order loads and are reported as the reader's barrier; acq_rel (wmb) and
 * release order only stores, which a reader's loads do not care about. */
VDSOLAB_HIDDEN void __tsan_atomic_signal_fence(int mo) {
  struct call* c = cur;
  if (c != NULL && c->quiet == NULL &&
      (mo == __ATOMIC_ACQUIRE || mo == __ATOMIC_SEQ_CST)) {
    c->ops->rmb(c->ops->ctx);
  }
}

/* Called by the thunks. */
VDSOLAB_HIDDEN uint64_t vdsolab_glue_counter(uint64_t kind) {
  struct call* c = cur;
  if (c == NULL) return 0;
  quiet_sync(c);
  const uint64_t v = c->ops->read_counter(c->ops->ctx, (int)kind);
  quiet_resync(c);
  return v;
}

VDSOLAB_HIDDEN int64_t vdsolab_glue_syscall(int64_t nr, int64_t a1, int64_t a2,
                                            int64_t a3) {
  struct call* c = cur;
  (void)a3;
  if (c == NULL) return -VDSOLAB_ENOSYS;
  int64_t r = -VDSOLAB_ENOSYS;
  quiet_sync(c);
  switch (nr) {
    case VDSOLAB_NR_CLOCK_GETTIME:
      r = c->ops->fallback(c->ops->ctx, (int32_t)a1,
                           (struct vdsolab_timespec*)(uintptr_t)a2);
      break;
    case VDSOLAB_NR_GETTIMEOFDAY:
      r = c->ops->gettimeofday_fallback(
          c->ops->ctx, (struct vdsolab_timeval*)(uintptr_t)a1,
          (struct vdsolab_timezone*)(uintptr_t)a2);
      break;
    case VDSOLAB_NR_CLOCK_GETRES:
      r = c->ops->clock_getres_fallback(
          c->ops->ctx, (int32_t)a1, (struct vdsolab_timespec*)(uintptr_t)a2);
      break;
    default:
      break;
  }
  quiet_resync(c);
  return r;
}

/* The thunks the rewritten rdtsc / rdtscp / rdtsc_ordered() / syscall
 * sites call. Each saves every general register the instruction does not
 * define (and the arithmetic flags, which a compiler may keep live across
 * an intrinsic's rdtsc), realigns the stack for the C call and restores all
 * of it. Vector and x87 registers are not saved: the kernel object is
 * compiled with the kernel's -mno-sse -mno-mmx -mno-80387 (shims.cc's
 * CommonFlags()), so none is live at a site, whatever the C side
 * clobbers. Counter thunks return EDX:EAX with the upper halves clear;
 * rdtscp also sets ECX (TSC_AUX, 0 here). The syscall thunk takes RAX and
 * RDI/RSI/RDX, returns RAX and clobbers RCX/R11 as the instruction does. */
__asm__(
    "  .text\n"
    "  .p2align 4\n"
    "  .globl vdsolab_thunk_rdtsc_ordered\n"
    "  .hidden vdsolab_thunk_rdtsc_ordered\n"
    "  .type vdsolab_thunk_rdtsc_ordered,@function\n"
    "vdsolab_thunk_rdtsc_ordered:\n"
    "  pushq $0\n" /* VDSOLAB_RDTSC_ORDERED */
    "  jmp vdsolab_thunk_counter\n"
    "  .globl vdsolab_thunk_rdtscp\n"
    "  .hidden vdsolab_thunk_rdtscp\n"
    "  .type vdsolab_thunk_rdtscp,@function\n"
    "vdsolab_thunk_rdtscp:\n"
    "  pushq $1\n" /* VDSOLAB_RDTSCP */
    "  jmp vdsolab_thunk_counter\n"
    "  .globl vdsolab_thunk_rdtsc\n"
    "  .hidden vdsolab_thunk_rdtsc\n"
    "  .type vdsolab_thunk_rdtsc,@function\n"
    "vdsolab_thunk_rdtsc:\n"
    "  pushq $2\n" /* VDSOLAB_RDTSC */
    "  jmp vdsolab_thunk_counter\n"
    "  .type vdsolab_thunk_counter,@function\n"
    "vdsolab_thunk_counter:\n"
    /* 0(%rbp) saved rbp, 8 the arithmetic flags, 16 kind, 24 return
     * address. The flags as lahf (AH: SF ZF AF PF CF) and seto (AL: OF)
     * save them and sahf restores them: popfq, which also reloads the
     * system flags, cost more than the rest of the thunk. RAX is free: the
     * instruction defines it. */
    "  lahf\n"
    "  seto %al\n"
    "  pushq %rax\n"
    "  pushq %rbp\n"
    "  movq %rsp, %rbp\n"
    "  pushq %rcx\n"
    "  pushq %rsi\n"
    "  pushq %rdi\n"
    "  pushq %r8\n"
    "  pushq %r9\n"
    "  pushq %r10\n"
    "  pushq %r11\n"
    "  andq $-16, %rsp\n"
    "  movq 16(%rbp), %rdi\n"
    "  cld\n"
    "  call vdsolab_glue_counter\n"
    "  leaq -56(%rbp), %rsp\n"
    "  popq %r11\n"
    "  popq %r10\n"
    "  popq %r9\n"
    "  popq %r8\n"
    "  popq %rdi\n"
    "  popq %rsi\n"
    "  popq %rcx\n"
    "  cmpq $1, 16(%rbp)\n"
    "  jne 1f\n"
    "  xorl %ecx, %ecx\n"
    "1:\n"
    /* The value over the kind, then the flags back, then EDX:EAX from the
     * value with moves, which leave the flags alone. */
    "  movq %rax, 16(%rbp)\n"
    "  movq 8(%rbp), %rax\n"
    "  addb $0x7f, %al\n" /* OF = (AL == 1); sahf leaves OF alone */
    "  sahf\n"
    "  movl 16(%rbp), %eax\n"
    "  movl 20(%rbp), %edx\n"
    "  popq %rbp\n"
    "  leaq 16(%rsp), %rsp\n" /* drop the flags and the value */
    "  ret\n"
    "  .size vdsolab_thunk_counter, .-vdsolab_thunk_counter\n"
    "\n"
    "  .p2align 4\n"
    "  .globl vdsolab_thunk_syscall\n"
    "  .hidden vdsolab_thunk_syscall\n"
    "  .type vdsolab_thunk_syscall,@function\n"
    "vdsolab_thunk_syscall:\n"
    "  pushfq\n"
    "  pushq %rbp\n"
    "  movq %rsp, %rbp\n"
    "  pushq %rdi\n"
    "  pushq %rsi\n"
    "  pushq %rdx\n"
    "  pushq %r8\n"
    "  pushq %r9\n"
    "  pushq %r10\n"
    "  andq $-16, %rsp\n"
    "  movq %rdx, %rcx\n" /* (nr, a1, a2, a3) <- (rax, rdi, rsi, rdx) */
    "  movq %rsi, %rdx\n"
    "  movq %rdi, %rsi\n"
    "  movq %rax, %rdi\n"
    "  cld\n"
    "  call vdsolab_glue_syscall\n"
    "  leaq -48(%rbp), %rsp\n"
    "  popq %r10\n"
    "  popq %r9\n"
    "  popq %r8\n"
    "  popq %rdx\n"
    "  popq %rsi\n"
    "  popq %rdi\n"
    "  popq %rbp\n"
    "  popfq\n"
    "  ret\n"
    "  .size vdsolab_thunk_syscall, .-vdsolab_thunk_syscall\n");

/* A call of the kernel code with `ops` current for this thread: `c` on
 * the caller's stack, made current here; the caller sets its jump buffer
 * (the frame that calls the kernel code must be the one that set it). */
static inline void call_begin(struct call* c, const struct vdsolab_ops* ops,
                              const uint8_t* page) {
  c->page = page;
  c->area_bytes = ops->area_bytes;
  c->loads = 0;
  c->ops = ops;
  c->quiet = ops->quiet;
  c->time_page = ops->time_page_offset;
  /* A namespace's view takes page_load()'s way, which knows its pages. */
  c->quiet_limit =
      c->quiet != NULL && c->time_page == 0 ? VDSOLAB_LOAD_BUDGET : 0;
  c->quiet_mark = 0;
  if (c->quiet != NULL) {
    c->last_seq = c->quiet->last_seq;
    c->begin_seq = c->quiet->begin_seq;
  }
  c->saved = cur;
  c->seq_offset = UINT32_MAX;
  c->seq_start = 0;
  c->seq_state = SEQ_BEGIN;
  c->retry_due = 0;
  cur = c;
}

/* The end of a call, returned or abandoned: the quiet counts handed over,
 * the caller's call current again. */
static inline void call_end(struct call* c) {
  quiet_sync(c);
  cur = c->saved;
}

/* The plugin's reader: the tree's __cvdso_clock_gettime_data() on the
 * simulated page, with `ops` current for this thread while it runs. */
static int32_t tree_clock_gettime(const struct vdsolab_ops* ops,
                                  const uint8_t* page, int32_t clock,
                                  struct vdsolab_timespec* ts) {
  struct call c;
  call_begin(&c, ops, page);
  if (__builtin_setjmp(c.jump) != 0) {
    /* may_retry() said no inside the kernel code. */
    call_end(&c);
    return VDSOLAB_ABANDONED;
  }
  struct vdsolab_timespec kts = {0, 0};
  const int r =
      vdsolab_tree_clock_gettime(page + VDSOLAB_TREE_DATA_OFFSET, clock, &kts);
  call_end(&c);
  if (r == 0) {
    /* Field by field: the kernel code stored them as two 8-byte words, and
     * one 16-byte load of both (what a struct copy compiles to) cannot be
     * forwarded from those stores: a stall on every call. */
    ts->tv_sec = kts.tv_sec;
    ts->tv_nsec = kts.tv_nsec;
  }
  return r;
}

/* The other entry points, the same way: the kernel code writes to the
 * glue's own copies, which go to the caller's pointers afterwards. The
 * copies start as the caller's buffers (which vdsolab poisons), so that a
 * store the kernel code leaves out still shows. */
static int32_t tree_gettimeofday(const struct vdsolab_ops* ops,
                                 const uint8_t* page,
                                 struct vdsolab_timeval* tv,
                                 struct vdsolab_timezone* tz) {
  struct call c;
  call_begin(&c, ops, page);
  if (__builtin_setjmp(c.jump) != 0) {
    call_end(&c);
    return VDSOLAB_ABANDONED;
  }
  struct vdsolab_timeval ktv = {0, 0};
  struct vdsolab_timezone ktz = {0, 0};
  if (tv != NULL) ktv = *tv;
  if (tz != NULL) ktz = *tz;
  const int r = vdsolab_tree_gettimeofday(page + VDSOLAB_TREE_DATA_OFFSET,
                                          tv != NULL ? &ktv : NULL,
                                          tz != NULL ? &ktz : NULL);
  call_end(&c);
  if (r == 0) {
    if (tv != NULL) *tv = ktv;
    if (tz != NULL) *tz = ktz;
  }
  return r;
}

static int64_t tree_time(const struct vdsolab_ops* ops, const uint8_t* page,
                         int64_t* t) {
  struct call c;
  call_begin(&c, ops, page);
  if (__builtin_setjmp(c.jump) != 0) {
    call_end(&c);
    return VDSOLAB_ABANDONED;
  }
  int64_t kt = t != NULL ? *t : 0;
  const int64_t r = vdsolab_tree_time(page + VDSOLAB_TREE_DATA_OFFSET,
                                      t != NULL ? &kt : NULL);
  call_end(&c);
  if (t != NULL) *t = kt;
  return r;
}

static int32_t tree_clock_getres(const struct vdsolab_ops* ops,
                                 const uint8_t* page, int32_t clock,
                                 struct vdsolab_timespec* res) {
  struct call c;
  call_begin(&c, ops, page);
  if (__builtin_setjmp(c.jump) != 0) {
    call_end(&c);
    return VDSOLAB_ABANDONED;
  }
  struct vdsolab_timespec kres = {0, 0};
  if (res != NULL) kres = *res;
  const int r = vdsolab_tree_clock_getres(page + VDSOLAB_TREE_DATA_OFFSET,
                                          clock, res != NULL ? &kres : NULL);
  call_end(&c);
  if (r == 0 && res != NULL) *res = kres;
  return r;
}

static const int32_t kClocks[] = VDSOLAB_TREE_CLOCKS;

static const struct vdsolab_plugin3 kPlugin = {
    {
        VDSOLAB_PLUGIN_ABI_V3,
        VDSOLAB_TREE_NAME,
        VDSOLAB_TREE_PROVENANCE,
        VDSOLAB_TREE_SUMMARY,
        VDSOLAB_TREE_LAYOUT,
        kClocks,
        sizeof(kClocks) / sizeof(kClocks[0]),
        tree_clock_gettime,
        VDSOLAB_TREE_COUNTER_SEMANTICS,
        VDSOLAB_TREE_SEMANTICS_FLAGS,
        VDSOLAB_TREE_COUNTER_READ,
        VDSOLAB_TREE_ERA,
        VDSOLAB_TREE_ORIGIN,
    },
    tree_gettimeofday,
    tree_time,
    tree_clock_getres,
    VDSOLAB_TREE_CONFIG_HZ,
};

VDSOLAB_EXPORT const struct vdsolab_plugin3* vdsolab_plugin_v3(void) {
  return &kPlugin;
}
