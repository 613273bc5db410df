/*
 * File: examples/plugin/own_clock_plugin.c
 *
 * A plugin speaking ABI version 4 (docs/plugins.md, "Version 4"): a
 * tracer's two clocks of its own, read from the 6.17/6.18 x86-64 page
 * (layout "upstream"), the kernel's clocks left to the system call.
 *
 *   CLOCK_EXAMPLE_TRACE (0x20000): CLOCK_MONOTONIC_RAW under an id of its
 *     own, from the RAW record (clock_data[1]) as do_hres() reads it;
 *     declared VDSOLAB_OWN_SAME_AS MONOTONIC_RAW, so vdsolab holds it to
 *     the kernel's RAW bit for bit, torn reads included.
 *   example_tsc_ns (0x20001): the counter converted with RAW's mult and
 *     shift and no base, a clock with an origin of its own; declared
 *     VDSOLAB_OWN_MEASURED: checked for monotonicity and causality, its
 *     rate against MONOTONIC_RAW measured.
 *
 * Built with -DOWN_BUG=n, a bug a tracer's clock could have, for the
 * tests that vdsolab finds it:
 *   1: the trace clock reads the record once, without the seq re-check;
 *   2: the trace clock shifts the base and the delta apart (rounding);
 *   3: example_tsc_ns keeps 28 bits of the counter (wraps backwards);
 *   4: the trace clock loads the seconds after its seq loop;
 *   5: the trace clock always asks the system call (no fast path);
 *   6: example_tsc_ns rebased on RAW's base and cycle_last (1000 s on),
 *      loaded without the seq loop.
 * With OWN_BUG=3 and -DOWN_TSC_FLAGS=VDSOLAB_OWN_NOT_MONOTONIC the wrap is
 * declared, and nothing fails.
 */
#include <stddef.h>
#include <stdint.h>

#include "vdsolab_plugin.h"

#ifndef OWN_BUG
#define OWN_BUG 0
#endif
/* example_tsc_ns's flags: -DOWN_TSC_FLAGS=VDSOLAB_OWN_NOT_MONOTONIC with
 * OWN_BUG=3 declares the wrap that bug 3 makes. */
#ifndef OWN_TSC_FLAGS
#define OWN_TSC_FLAGS 0
#endif

/* struct vdso_clock (6.15+, x86-64): offsets; clock_data[1] is RAW's. */
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
enum { kVdsoClockmodeTsc = 1, kVdsoClockmodeTimens = 0x7fffffff };
enum { kClockMonotonicRaw = 4 };

#define CLOCK_EXAMPLE_TRACE 0x20000
#define CLOCK_EXAMPLE_TSC_NS 0x20001
#define S64_MAX 0x7fffffffffffffffULL
#define NSEC_PER_SEC 1000000000ULL
#define USE_SYSCALL 1
#define EINVAL_ 22

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

/* vdso_read_begin(): the seq, once even; IN_TIMENS on a time namespace's
 * page (seq 1 for good, clock mode TIMENS). */
#define IN_TIMENS 2
static int32_t begin(const struct vdsolab_ops* ops, const uint8_t* vc,
                     uint32_t* seq) {
  while ((*seq = ops->load32(ops->ctx, vc + kVcSeq)) & 1) {
    if ((int32_t)ops->load32(ops->ctx, vc + kVcClockMode) ==
        kVdsoClockmodeTimens) {
      return IN_TIMENS;
    }
    if (!ops->may_retry(ops->ctx)) return VDSOLAB_ABANDONED;
    ops->cpu_relax(ops->ctx);
  }
  /* Pairs with the writer's smp_wmb() after its opening seq store. */
  ops->rmb(ops->ctx);
  return 0;
}

/* CLOCK_EXAMPLE_TRACE: do_hres() on the RAW record; in a time namespace
 * do_hres_timens(): the same on the time page (ops->time_page_offset on),
 * plus the namespace's offset[CLOCK_MONOTONIC_RAW], which sits where
 * basetime[CLOCK_MONOTONIC_RAW] does in the namespace page's RAW record
 * (s64 sec, u64 nsec, added after the loop). */
static int32_t trace_clock(const struct vdsolab_ops* ops, const uint8_t* page,
                           struct vdsolab_timespec* ts) {
  const uint8_t* vc = page + kVcSize;
  const uint8_t* vcns = NULL;
  const uint8_t* base = vc + kVcBasetime + 16 * kClockMonotonicRaw;
  uint64_t sec, ns;
  uint32_t seq;
  for (;;) {
    const int32_t r = begin(ops, vc, &seq);
    if (r == IN_TIMENS && vcns == NULL) {
      vcns = vc;
      vc += ops->time_page_offset;
      base += ops->time_page_offset;
      continue;
    }
    if (r != 0) return r;
    if ((int32_t)ops->load32(ops->ctx, vc + kVcClockMode) !=
        kVdsoClockmodeTsc) {
      return USE_SYSCALL;
    }
    const uint64_t cycles =
        ops->read_counter(ops->ctx, VDSOLAB_RDTSC_ORDERED) & S64_MAX;
    const uint64_t delta =
        (cycles - ops->load64(ops->ctx, vc + kVcCycleLast)) & S64_MAX;
    const uint64_t max_cycles = ops->load64(ops->ctx, vc + kVcMaxCycles);
    const uint32_t mult = ops->load32(ops->ctx, vc + kVcMult);
    const uint32_t shift = ops->load32(ops->ctx, vc + kVcShift);
    ns = ops->load64(ops->ctx, base + 8);
    if (OWN_BUG != 4) sec = ops->load64(ops->ctx, base);
    if (delta & (1ULL << 62)) {
      ns >>= shift; /* Negative motion: the base time. */
    } else if (delta > max_cycles) {
      ns = (uint64_t)(((unsigned __int128)delta * mult + ns) >> shift);
    } else if (OWN_BUG == 2) {
      ns = (ns >> shift) + ((delta * mult) >> shift);
    } else {
      ns = (delta * mult + ns) >> shift;
    }
    if (OWN_BUG == 1) break;
    /* Pairs with the writer's smp_wmb() before its closing seq store. */
    ops->rmb(ops->ctx);
    if (ops->load32(ops->ctx, vc + kVcSeq) == seq) break;
    if (!ops->may_retry(ops->ctx)) return VDSOLAB_ABANDONED;
  }
  if (OWN_BUG == 4) sec = ops->load64(ops->ctx, base);
  if (vcns != NULL) {
    const uint8_t* off = vcns + kVcBasetime + 16 * kClockMonotonicRaw;
    sec += ops->load64(ops->ctx, off);
    ns += ops->load64(ops->ctx, off + 8);
  }
  return set_timespec(ts, sec, ns);
}

/* example_tsc_ns: cycles * mult >> shift with RAW's mult and shift, read
 * under the seq (a clocksource change rewrites them). */
static int32_t tsc_ns(const struct vdsolab_ops* ops, const uint8_t* page,
                      struct vdsolab_timespec* ts) {
  const uint8_t* vc = page + kVcSize;
  uint64_t cycles;
  uint32_t mult, shift, seq;
  for (;;) {
    const int32_t r = begin(ops, vc, &seq);
    if (r == IN_TIMENS) {
      vc = page + ops->time_page_offset + kVcSize; /* Its own origin. */
      continue;
    }
    if (r != 0) return r;
    /* Outside TSC mode mult and shift scale another counter (kvm-clock's
     * nanoseconds): this clock has no answer then, and the kernel has no
     * such clock to fall back to. */
    if ((int32_t)ops->load32(ops->ctx, vc + kVcClockMode) !=
        kVdsoClockmodeTsc) {
      return -EINVAL_;
    }
    mult = ops->load32(ops->ctx, vc + kVcMult);
    shift = ops->load32(ops->ctx, vc + kVcShift);
    cycles = ops->read_counter(ops->ctx, VDSOLAB_RDTSC_ORDERED);
    ops->rmb(ops->ctx); /* Pairs with the writer's closing smp_wmb(). */
    if (ops->load32(ops->ctx, vc + kVcSeq) == seq) break;
    if (!ops->may_retry(ops->ctx)) return VDSOLAB_ABANDONED;
  }
  if (OWN_BUG == 3) cycles &= (1ULL << 28) - 1;
  const unsigned __int128 ns = ((unsigned __int128)cycles * mult) >> shift;
  return set_timespec(ts, (uint64_t)(ns / NSEC_PER_SEC),
                      (uint64_t)(ns % NSEC_PER_SEC));
}

/* clock_getres(): the twin has MONOTONIC_RAW's resolution, asked of the
 * kernel; example_tsc_ns converts the counter to whole nanoseconds. */
static int32_t own_clock_getres(const struct vdsolab_ops* ops,
                                const uint8_t* page, int32_t clock,
                                struct vdsolab_timespec* res) {
  (void)page;
  if (clock == CLOCK_EXAMPLE_TRACE) {
    return ops->clock_getres_fallback(ops->ctx, kClockMonotonicRaw, res);
  }
  if (clock == CLOCK_EXAMPLE_TSC_NS) {
    if (res != NULL) {
      res->tv_sec = 0;
      res->tv_nsec = 1;
    }
    return 0;
  }
  return ops->clock_getres_fallback(ops->ctx, clock, res);
}

/* OWN_BUG 6's example_tsc_ns: a rebased clock without its seq loop. */
static int32_t tsc_ns_unlooped(const struct vdsolab_ops* ops,
                               const uint8_t* page,
                               struct vdsolab_timespec* ts) {
  const uint8_t* vc = page + kVcSize;
  const uint8_t* base = vc + kVcBasetime + 16 * kClockMonotonicRaw;
  const uint64_t last = ops->load64(ops->ctx, vc + kVcCycleLast);
  const uint32_t mult = ops->load32(ops->ctx, vc + kVcMult);
  const uint32_t shift = ops->load32(ops->ctx, vc + kVcShift);
  const uint64_t base_ns = ops->load64(ops->ctx, base + 8);
  const uint64_t sec = ops->load64(ops->ctx, base) + 1000;
  const uint64_t cycles =
      ops->read_counter(ops->ctx, VDSOLAB_RDTSC_ORDERED) & S64_MAX;
  return set_timespec(ts, sec, ((cycles - last) * mult + base_ns) >> shift);
}

static int32_t own_clock_gettime(const struct vdsolab_ops* ops,
                                 const uint8_t* page, int32_t clock,
                                 struct vdsolab_timespec* ts) {
  int32_t r = USE_SYSCALL;
  if (clock == CLOCK_EXAMPLE_TRACE && OWN_BUG != 5) {
    r = trace_clock(ops, page, ts);
  }
  if (clock == CLOCK_EXAMPLE_TSC_NS) {
    r = OWN_BUG == 6 ? tsc_ns_unlooped(ops, page, ts) : tsc_ns(ops, page, ts);
  }
  /* The kernel's clocks, and the trace clock outside TSC mode. */
  if (r == USE_SYSCALL) return ops->fallback(ops->ctx, clock, ts);
  return r;
}

static const struct vdsolab_own_clock kOwnClocks[] = {
    {CLOCK_EXAMPLE_TRACE, "CLOCK_EXAMPLE_TRACE", VDSOLAB_OWN_SAME_AS,
     kClockMonotonicRaw, 0},
    {CLOCK_EXAMPLE_TSC_NS, "example_tsc_ns", VDSOLAB_OWN_MEASURED, 0,
     OWN_TSC_FLAGS},
};

#define STR2(x) #x
#define STR(x) STR2(x)

static const struct vdsolab_plugin4 kPlugin = {
    {
        {
            VDSOLAB_PLUGIN_ABI_V4,
            OWN_BUG == 0      ? "example-own-clocks"
            : OWN_TSC_FLAGS != 0 ? "example-own-clocks-bug" STR(
                                       OWN_BUG) "-declared"
                                 : "example-own-clocks-bug" STR(OWN_BUG),
            "examples/plugin/own_clock_plugin.c: a tracer's clocks of its "
            "own (docs/plugins.md, Version 4)",
            "CLOCK_EXAMPLE_TRACE (MONOTONIC_RAW's twin) and example_tsc_ns",
            "upstream",
            NULL, /* The kernel's clocks: the system call. */
            0,
            own_clock_gettime,
            VDSOLAB_COUNTER_MASKED63,
            VDSOLAB_SEM_OVERFLOW_PROTECTED |
                VDSOLAB_SEM_COARSE_FROM_COARSE_NSEC,
            VDSOLAB_RDTSC_ORDERED,
            "Linux 6.17",
            NULL,
        },
        NULL, /* No gettimeofday() or time() of its own. */
        NULL,
        own_clock_getres,
        0,
    },
    kOwnClocks,
    sizeof(kOwnClocks) / sizeof(kOwnClocks[0]),
};

const struct vdsolab_plugin4* vdsolab_plugin_v4(void) { return &kPlugin; }
