/*
 * File: examples/plugin/example_plugin.c
 *
 * A complete vdsolab plugin in C (docs/plugins.md walks through it): the
 * 6.17/6.18 x86-64 vDSO clock_gettime() written against the plugin ABI,
 * reading the page vdsolab's "upstream" variant writes. Build it with
 * Bazel (//examples/plugin:libexample_plugin.so) or by hand:
 *
 *   cc -O2 -fPIC -shared -I variants/plugin \
 *      examples/plugin/example_plugin.c -o libexample_plugin.so
 *
 * and run it:
 *
 *   vdsolab run scenarios/baseline.toml --variant-so=./libexample_plugin.so \
 *       --variant=example-c
 *
 * Every page load, counter read, barrier and the syscall go through `ops`:
 * that is what lets the simulation race the writer against each load.
 */
#include <stddef.h>
#include <stdint.h>

#include "vdsolab_plugin.h"

/* struct vdso_clock (6.15+, x86-64, with max_cycles): offsets. */
enum {
  kVcSeq = 0,
  kVcClockMode = 4,
  kVcCycleLast = 8,
  kVcMaxCycles = 16,
  kVcMult = 32,
  kVcShift = 36,
  kVcBasetime = 40, /* struct vdso_timestamp basetime[12]: {sec, nsec} */
  kVcSize = 232     /* clock_data[0] at 0 (HRES, COARSE), [1] at 232 (RAW) */
};

enum { kVdsoClockmodeTsc = 1, kVdsoClockmodeTimens = 0x7fffffff };
/* In a time namespace `page` is the namespace's page; the time page is one
 * page on (x86 6.13+: __arch_get_vdso_u_timens_data()). */
enum { kTimensTimePage = 4096 };
#define S64_MAX 0x7fffffffffffffffULL
#define NSEC_PER_SEC 1000000000ULL

/* Which clock ids are served from which record (VDSO_HRES, ...). */
#define BIT(n) (1u << (n))
static const uint32_t kHres = BIT(0) | BIT(1) | BIT(7) | BIT(11);
static const uint32_t kCoarse = BIT(5) | BIT(6);
static const uint32_t kRaw = BIT(4);

/* Tells the caller to make the syscall. */
#define USE_SYSCALL 1

/* &vc->basetime[clk]: {u64 sec; u64 nsec}. */
static const uint8_t* basetime(const uint8_t* vc, int32_t clk) {
  return vc + kVcBasetime + 16 * clk;
}

/* mul_u64_u32_add_u64_shr(): (a * mul + b) >> shift without overflow. */
static uint64_t mul_add_shr(uint64_t a, uint32_t mul, uint64_t b,
                            uint32_t shift) {
  return (uint64_t)((((unsigned __int128)a * mul) + b) >> shift);
}

/* timens_offset offset[clk] of the namespace's record `vcns` (where
 * basetime[clk] is): added in u64, as do_hres_timens() adds it. */
static void add_offset(const struct vdsolab_ops* ops, const uint8_t* vcns,
                       int32_t clk, uint64_t* sec, uint64_t* ns) {
  *sec += ops->load64(ops->ctx, basetime(vcns, clk));
  *ns += ops->load64(ops->ctx, basetime(vcns, clk) + 8);
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

/* do_hres() (vcns NULL) or do_hres_timens() (vcns: the namespace's record,
 * vc the time page's): 0, USE_SYSCALL or VDSOLAB_ABANDONED. */
static int32_t do_hres(const struct vdsolab_ops* ops, const uint8_t* vc,
                       int32_t clk, struct vdsolab_timespec* ts,
                       const uint8_t* vcns) {
  const uint8_t* base = basetime(vc, clk);
  uint64_t sec, ns;
  uint32_t seq;
  do {
    /* vdso_read_begin(): wait out a writer; the rmb pairs with the
     * writer's smp_wmb() after its first seq increment. */
    while ((seq = ops->load32(ops->ctx, vc + kVcSeq)) & 1) {
      if (vcns == NULL && (int32_t)ops->load32(ops->ctx, vc + kVcClockMode) ==
                              kVdsoClockmodeTimens) {
        return do_hres(ops, vc + kTimensTimePage, clk, ts, vc);
      }
      if (!ops->may_retry(ops->ctx)) return VDSOLAB_ABANDONED;
      ops->cpu_relax(ops->ctx);
    }
    ops->rmb(ops->ctx);
    if ((int32_t)ops->load32(ops->ctx, vc + kVcClockMode) !=
        kVdsoClockmodeTsc) {
      return USE_SYSCALL; /* This example serves the TSC only. */
    }
    const uint64_t cycles =
        ops->read_counter(ops->ctx, VDSOLAB_RDTSC_ORDERED) & S64_MAX;
    const uint64_t last = ops->load64(ops->ctx, vc + kVcCycleLast);
    const uint64_t max_cycles = ops->load64(ops->ctx, vc + kVcMaxCycles);
    const uint32_t mult = ops->load32(ops->ctx, vc + kVcMult);
    const uint32_t shift = ops->load32(ops->ctx, vc + kVcShift);
    ns = ops->load64(ops->ctx, base + 8);
    sec = ops->load64(ops->ctx, base);
    const uint64_t delta = cycles - last;
    if (delta > max_cycles) {
      /* Bit 62: the counter is behind cycle_last (negative motion). */
      ns = (delta & (1ULL << 62))
               ? ns >> shift
               : mul_add_shr(delta & S64_MAX, mult, ns, shift);
    } else {
      ns = (delta * mult + ns) >> shift;
    }
    /* vdso_read_retry(): the rmb pairs with the writer's smp_wmb() before
     * its second seq increment. */
    ops->rmb(ops->ctx);
    if (ops->load32(ops->ctx, vc + kVcSeq) == seq) break;
    if (!ops->may_retry(ops->ctx)) return VDSOLAB_ABANDONED;
  } while (1);
  if (vcns != NULL) add_offset(ops, vcns, clk, &sec, &ns);
  /* Normalise outside the loop, as the kernel does. */
  return set_timespec(ts, sec, ns);
}

/* do_coarse() (vcns NULL) or do_coarse_timens(): the base time, in plain
 * ns, under the seq. */
static int32_t do_coarse(const struct vdsolab_ops* ops, const uint8_t* vc,
                         int32_t clk, struct vdsolab_timespec* ts,
                         const uint8_t* vcns) {
  const uint8_t* base = basetime(vc, clk);
  uint64_t sec, ns;
  uint32_t seq;
  do {
    while ((seq = ops->load32(ops->ctx, vc + kVcSeq)) & 1) {
      if (vcns == NULL && (int32_t)ops->load32(ops->ctx, vc + kVcClockMode) ==
                              kVdsoClockmodeTimens) {
        return do_coarse(ops, vc + kTimensTimePage, clk, ts, vc);
      }
      if (!ops->may_retry(ops->ctx)) return VDSOLAB_ABANDONED;
      ops->cpu_relax(ops->ctx);
    }
    ops->rmb(ops->ctx);
    sec = ops->load64(ops->ctx, base);
    ns = ops->load64(ops->ctx, base + 8);
    ops->rmb(ops->ctx);
    if (ops->load32(ops->ctx, vc + kVcSeq) == seq) break;
    if (!ops->may_retry(ops->ctx)) return VDSOLAB_ABANDONED;
  } while (1);
  /* A coarse base is normalised; the namespace's offset may carry. */
  if (vcns != NULL) add_offset(ops, vcns, clk, &sec, &ns);
  return set_timespec(ts, sec, ns);
}

static int32_t example_clock_gettime(const struct vdsolab_ops* ops,
                                     const uint8_t* page, int32_t clock,
                                     struct vdsolab_timespec* ts) {
  int32_t r = USE_SYSCALL;
  if (clock >= 0 && clock < 16) {
    const uint32_t bit = 1u << clock;
    if (bit & kHres) {
      r = do_hres(ops, page, clock, ts, NULL);
    } else if (bit & kCoarse) {
      r = do_coarse(ops, page, clock, ts, NULL);
    } else if (bit & kRaw) {
      r = do_hres(ops, page + kVcSize, clock, ts, NULL);
    }
  }
  if (r == USE_SYSCALL) return ops->fallback(ops->ctx, clock, ts);
  return r;
}

static const int32_t kClocks[] = {0, 1, 4, 5, 6, 7, 11};

static const struct vdsolab_plugin kPlugin = {
    VDSOLAB_PLUGIN_ABI_VERSION,
    "example-c",
    "examples/plugin/example_plugin.c: the 6.17/6.18 x86-64 vDSO written "
    "against the plugin ABI (docs/plugins.md)",
    "the upstream reader in C, as a plugin",
    "upstream",
    kClocks,
    sizeof(kClocks) / sizeof(kClocks[0]),
    example_clock_gettime,
};

const struct vdsolab_plugin* vdsolab_plugin_v1(void) { return &kPlugin; }
