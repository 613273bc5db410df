/*
 * File: examples/plugin/example_plugin_v2.c
 *
 * A plugin speaking ABI version 2 (docs/plugins.md): the 6.17/6.18 x86-64
 * reader of example_plugin.c, written the way compiled code reaches the
 * page: a before_load() preemption point, then its own plain load (this is
 * how a kernel tree's unmodified vDSO code is run, docs/kernel-trees.md).
 * Its smp_rmb()s still go through ops->rmb(): under relaxed ordering
 * (faults.reorder_ppm) a load may see any page state since the last one.
 * It declares its era semantics instead of borrowing the layout's, time
 * namespaces among them: a reader in one enters through the namespace's
 * page (do_hres_timens(), do_coarse_timens()) and finds the time page at
 * ops->time_page_offset.
 */
#include <stddef.h>
#include <stdint.h>

#include "vdsolab_plugin.h"

enum {
  kVcSeq = 0,
  kVcClockMode = 4,
  kVcCycleLast = 8,
  kVcMaxCycles = 16,
  kVcMult = 32,
  kVcShift = 36,
  kVcBasetime = 40,
  kVcSize = 232
};

#define S64_MAX 0x7fffffffffffffffULL
#define NSEC_PER_SEC 1000000000ULL
#define BIT(n) (1u << (n))
#define USE_SYSCALL 1
#define VDSO_CLOCKMODE_TIMENS 0x7fffffff

/* A load as compiled code makes it: the hook, then the load itself. */
static uint32_t ld32(const struct vdsolab_ops* ops, const uint8_t* p) {
  ops->before_load(ops->ctx, p, 4);
  return *(const volatile uint32_t*)p;
}
static uint64_t ld64(const struct vdsolab_ops* ops, const uint8_t* p) {
  ops->before_load(ops->ctx, p, 8);
  return *(const volatile uint64_t*)p;
}

/* vdso_read_begin_timens(): the seq to re-check, after waiting out an odd
 * one; or, when `timens` is given and the odd seq is a time namespace's
 * record (seq 1 for good, VDSO_CLOCKMODE_TIMENS), *timens = 1 at once. */
static uint32_t begin(const struct vdsolab_ops* ops, const uint8_t* vc,
                      int* abandoned, int* timens) {
  uint32_t seq;
  while ((seq = ld32(ops, vc + kVcSeq)) & 1) {
    if (timens != NULL &&
        (int32_t)ld32(ops, vc + kVcClockMode) == VDSO_CLOCKMODE_TIMENS) {
      *timens = 1;
      return seq;
    }
    if (!ops->may_retry(ops->ctx)) {
      *abandoned = 1;
      return 0;
    }
    ops->cpu_relax(ops->ctx);
  }
  /* vdso_read_begin()'s smp_rmb(): the data loads stay after the seq load;
   * pairs with the writer's smp_wmb() after its opening seq store. */
  ops->rmb(ops->ctx);
  return seq;
}

/* The body of do_hres()'s loop: base time and counter delta of record
 * `vc`, in *sec and *ns (not yet normalised); USE_SYSCALL if the clock mode
 * is not the TSC. */
static int32_t hres_body(const struct vdsolab_ops* ops, const uint8_t* vc,
                         int32_t clk, uint64_t* sec, uint64_t* ns) {
  const uint8_t* base = vc + kVcBasetime + 16 * clk;
  if ((int32_t)ld32(ops, vc + kVcClockMode) != 1) return USE_SYSCALL;
  const uint64_t cycles =
      ops->read_counter(ops->ctx, VDSOLAB_RDTSC_ORDERED) & S64_MAX;
  const uint64_t delta = cycles - ld64(ops, vc + kVcCycleLast);
  const uint64_t max_cycles = ld64(ops, vc + kVcMaxCycles);
  const uint32_t mult = ld32(ops, vc + kVcMult);
  const uint32_t shift = ld32(ops, vc + kVcShift);
  uint64_t n = ld64(ops, base + 8);
  *sec = ld64(ops, base);
  if (delta > max_cycles) {
    n = (delta & (1ULL << 62))
            ? n >> shift
            : (uint64_t)((((unsigned __int128)(delta & S64_MAX) * mult) + n) >>
                         shift);
  } else {
    n = (delta * mult + n) >> shift;
  }
  *ns = n;
  return 0;
}

/* vdso_set_timespec(): ns may hold whole seconds. */
static int32_t set_timespec(struct vdsolab_timespec* ts, uint64_t sec,
                            uint64_t ns) {
  while (ns >= NSEC_PER_SEC) {
    ns -= NSEC_PER_SEC;
    ++sec;
  }
  ts->tv_sec = (int64_t)sec;
  ts->tv_nsec = (int64_t)ns;
  return 0;
}

/* struct timens_offset at offset[clk] of the namespace's record `vcns`
 * (where basetime[clk] is in a time page's record): s64 sec, u64 nsec,
 * added in u64 as the kernel adds them. */
static void add_timens_offset(const struct vdsolab_ops* ops,
                              const uint8_t* vcns, int32_t clk, uint64_t* sec,
                              uint64_t* ns) {
  *sec += ld64(ops, vcns + kVcBasetime + 16 * clk);
  *ns += ld64(ops, vcns + kVcBasetime + 16 * clk + 8);
}

/* do_hres_timens(): the time page is ops->time_page_offset bytes after the
 * namespace's page (__arch_get_vdso_u_timens_data()), and the clock's
 * record there where `vcns` is in the namespace's page. */
static int32_t do_hres_timens(const struct vdsolab_ops* ops,
                              const uint8_t* vcns, int32_t clk,
                              struct vdsolab_timespec* ts) {
  const uint8_t* vc = vcns + ops->time_page_offset;
  uint64_t sec = 0, ns = 0;
  int abandoned = 0;
  for (;;) {
    const uint32_t seq = begin(ops, vc, &abandoned, NULL);
    if (abandoned) return VDSOLAB_ABANDONED;
    if (hres_body(ops, vc, clk, &sec, &ns) == USE_SYSCALL) return USE_SYSCALL;
    /* vdso_read_retry()'s smp_rmb(): pairs with the writer's smp_wmb()
     * before its closing seq store. */
    ops->rmb(ops->ctx);
    if (ld32(ops, vc + kVcSeq) == seq) break;
    if (!ops->may_retry(ops->ctx)) return VDSOLAB_ABANDONED;
  }
  add_timens_offset(ops, vcns, clk, &sec, &ns);
  return set_timespec(ts, sec, ns);
}

static int32_t do_hres(const struct vdsolab_ops* ops, const uint8_t* vc,
                       int32_t clk, struct vdsolab_timespec* ts) {
  uint64_t sec = 0, ns = 0;
  int abandoned = 0, timens = 0;
  for (;;) {
    const uint32_t seq = begin(ops, vc, &abandoned, &timens);
    if (abandoned) return VDSOLAB_ABANDONED;
    if (timens) return do_hres_timens(ops, vc, clk, ts);
    if (hres_body(ops, vc, clk, &sec, &ns) == USE_SYSCALL) return USE_SYSCALL;
    /* vdso_read_retry()'s smp_rmb(): pairs with the writer's smp_wmb()
     * before its closing seq store. */
    ops->rmb(ops->ctx);
    if (ld32(ops, vc + kVcSeq) == seq) break;
    if (!ops->may_retry(ops->ctx)) return VDSOLAB_ABANDONED;
  }
  return set_timespec(ts, sec, ns);
}

/* do_coarse_timens(): the time page's coarse base under its seq, plus the
 * namespace's offset. */
static int32_t do_coarse_timens(const struct vdsolab_ops* ops,
                                const uint8_t* vcns, int32_t clk,
                                struct vdsolab_timespec* ts) {
  const uint8_t* vc = vcns + ops->time_page_offset;
  const uint8_t* base = vc + kVcBasetime + 16 * clk;
  uint64_t sec = 0, ns = 0;
  int abandoned = 0;
  for (;;) {
    const uint32_t seq = begin(ops, vc, &abandoned, NULL);
    if (abandoned) return VDSOLAB_ABANDONED;
    sec = ld64(ops, base);
    ns = ld64(ops, base + 8);
    /* vdso_read_retry()'s smp_rmb(): pairs with the writer's smp_wmb()
     * before its closing seq store. */
    ops->rmb(ops->ctx);
    if (ld32(ops, vc + kVcSeq) == seq) break;
    if (!ops->may_retry(ops->ctx)) return VDSOLAB_ABANDONED;
  }
  add_timens_offset(ops, vcns, clk, &sec, &ns);
  return set_timespec(ts, sec, ns);
}

static int32_t do_coarse(const struct vdsolab_ops* ops, const uint8_t* vc,
                         int32_t clk, struct vdsolab_timespec* ts) {
  const uint8_t* base = vc + kVcBasetime + 16 * clk;
  int abandoned = 0, timens = 0;
  for (;;) {
    const uint32_t seq = begin(ops, vc, &abandoned, &timens);
    if (abandoned) return VDSOLAB_ABANDONED;
    if (timens) return do_coarse_timens(ops, vc, clk, ts);
    ts->tv_sec = (int64_t)ld64(ops, base);
    ts->tv_nsec = (int64_t)ld64(ops, base + 8);
    /* vdso_read_retry()'s smp_rmb(): pairs with the writer's smp_wmb()
     * before its closing seq store. */
    ops->rmb(ops->ctx);
    if (ld32(ops, vc + kVcSeq) == seq) return 0;
    if (!ops->may_retry(ops->ctx)) return VDSOLAB_ABANDONED;
  }
}

static int32_t v2_clock_gettime(const struct vdsolab_ops* ops,
                                const uint8_t* page, int32_t clock,
                                struct vdsolab_timespec* ts) {
  int32_t r = USE_SYSCALL;
  if (clock >= 0 && clock < 16) {
    const uint32_t bit = 1u << clock;
    if (bit & (BIT(0) | BIT(1) | BIT(7) | BIT(11))) {
      r = do_hres(ops, page, clock, ts);
    } else if (bit & (BIT(5) | BIT(6))) {
      r = do_coarse(ops, page, clock, ts);
    } else if (bit & BIT(4)) {
      r = do_hres(ops, page + kVcSize, clock, ts);
    }
  }
  if (r == USE_SYSCALL) return ops->fallback(ops->ctx, clock, ts);
  return r;
}

/* VDSOLAB_V2_CASE selects a broken record for the loader's tests. */
#ifndef VDSOLAB_V2_CASE
#define VDSOLAB_V2_CASE 0
#endif

#if VDSOLAB_V2_CASE == 8
static const int32_t kClocks[] = {0, 1, 99}; /* 99: no page holds it. */
#else
static const int32_t kClocks[] = {0, 1, 4, 5, 6, 7, 11};
#endif

#if VDSOLAB_V2_CASE == 5
#define VDSOLAB_V2_NAME ((const char*)16) /* A wild pointer. */
#elif VDSOLAB_V2_CASE == 7
#define VDSOLAB_V2_NAME "broken-v2\xff" /* Not UTF-8. */
#elif VDSOLAB_V2_CASE == 0
#define VDSOLAB_V2_NAME "example-c-v2"
#else
#define VDSOLAB_V2_NAME "broken-v2"
#endif

static const struct vdsolab_plugin2 kPlugin = {
    VDSOLAB_V2_CASE == 1 ? 1u : VDSOLAB_PLUGIN_ABI_V2,
    VDSOLAB_V2_NAME,
    "examples/plugin/example_plugin_v2.c: the 6.17/6.18 x86-64 vDSO with "
    "its own page loads after before_load()",
#if VDSOLAB_V2_CASE == 9
    "the upstream reader\x1b[2J\r in C", /* Terminal control characters. */
#else
    "the upstream reader in C, ABI version 2",
#endif
    "upstream",
    kClocks,
    VDSOLAB_V2_CASE == 6 ? 0xffffffffu /* Garbage. */
                         : sizeof(kClocks) / sizeof(kClocks[0]),
    v2_clock_gettime,
    VDSOLAB_V2_CASE == 2 ? 7u : (uint32_t)VDSOLAB_COUNTER_MASKED63,
    VDSOLAB_V2_CASE == 3 ? 0x10u
    /* 10: valid, but not its layout's (pre-6.10: delta * mult may wrap). */
    : VDSOLAB_V2_CASE == 10
        ? (VDSOLAB_SEM_COARSE_FROM_COARSE_NSEC | VDSOLAB_SEM_TIME_NAMESPACE)
        : (VDSOLAB_SEM_OVERFLOW_PROTECTED |
           VDSOLAB_SEM_COARSE_FROM_COARSE_NSEC | VDSOLAB_SEM_TIME_NAMESPACE),
    VDSOLAB_V2_CASE == 4 ? 9u : (uint32_t)VDSOLAB_RDTSC_ORDERED,
    "Linux 6.18",
    "examples/plugin/example_plugin_v2.c",
};

const struct vdsolab_plugin2* vdsolab_plugin_v2(void) { return &kPlugin; }
