/*
 * File: examples/plugin/entry_points_plugin.c
 *
 * A version-3 plugin (vdsolab_plugin3: gettimeofday(), time() and
 * clock_getres() besides clock_gettime()), for the tests of the other
 * entry points' probes (sim/entry_points.h). Built once per
 * VDSOLAB_V3_CASE:
 *   0 correct: every clock_gettime(), gettimeofday() and clock_getres()
 *     by the system call (ops->fallback, ops->gettimeofday_fallback,
 *     ops->clock_getres_fallback); time() from the page (the REALTIME
 *     seconds of the upstream layout's first clock record: one 8-byte
 *     load, no seq loop, as __cvdso_time_data())
 *   1 gettimeofday() dereferences a wild pointer (SIGSEGV): the call's
 *     crash finding, not vdsolab's end
 *   2 time() answers one second late
 *   3 declares config_hz 5 (no kernel's HZ): refused at load
 *   4 clock_getres() answers 1 ns for every id without the syscall (also
 *     the invalid ones, where the syscall says -EINVAL)
 *   5 has clock_getres() only (gettimeofday and time NULL): correct
 *   6 clock_getres() spins for ever: the watchdog stops it once, and the
 *     entry point is not probed again
 */
#include <stddef.h>
#include <stdint.h>

#include "vdsolab_plugin.h"

#ifndef VDSOLAB_V3_CASE
#define VDSOLAB_V3_CASE 0
#endif

/* struct vdso_clock of the upstream layout (6.15+): seq, clock_mode, and
 * basetime[CLOCK_REALTIME] (16 bytes per clock from offset 40). */
enum { kVcSeq = 0, kVcClockMode = 4, kVcRealtimeSec = 40 };
#define VDSO_CLOCKMODE_TIMENS 0x7fffffff

static uint32_t ld32(const struct vdsolab_ops* ops, const uint8_t* p) {
  return ops->load32(ops->ctx, p);
}
static uint64_t ld64(const struct vdsolab_ops* ops, const uint8_t* p) {
  return ops->load64(ops->ctx, p);
}

static int32_t ep_clock_gettime(const struct vdsolab_ops* ops,
                                const uint8_t* page, int32_t clock,
                                struct vdsolab_timespec* ts) {
  (void)page;
  return ops->fallback(ops->ctx, clock, ts);
}

static int32_t ep_gettimeofday(const struct vdsolab_ops* ops,
                               const uint8_t* page, struct vdsolab_timeval* tv,
                               struct vdsolab_timezone* tz) {
  (void)page;
  if (VDSOLAB_V3_CASE == 1) {
    /* Through a volatile, so the compiler cannot see the address. */
    static volatile uintptr_t wild_address = 16;
    tv->tv_sec = *(volatile int64_t*)wild_address;
  }
  return ops->gettimeofday_fallback(ops->ctx, tv, tz);
}

/* __cvdso_time_data(): the namespace's page sends the reader to the time
 * page; one 8-byte load needs no seq loop (READ_ONCE()). */
static int64_t ep_time(const struct vdsolab_ops* ops, const uint8_t* page,
                       int64_t* t) {
  const uint8_t* vc = page;
  if ((int32_t)ld32(ops, vc + kVcClockMode) == VDSO_CLOCKMODE_TIMENS) {
    vc = page + ops->time_page_offset;
  }
  int64_t sec = (int64_t)ld64(ops, vc + kVcRealtimeSec);
  if (VDSOLAB_V3_CASE == 2) sec += 1;
  if (t != NULL) *t = sec;
  return sec;
}

static int32_t ep_clock_getres(const struct vdsolab_ops* ops,
                               const uint8_t* page, int32_t clock,
                               struct vdsolab_timespec* res) {
  (void)page;
  if (VDSOLAB_V3_CASE == 6) {
    for (volatile int spin = 1; spin;) {
    }
  }
  if (VDSOLAB_V3_CASE == 4) {
    if (res != NULL) {
      res->tv_sec = 0;
      res->tv_nsec = 1;
    }
    return 0;
  }
  return ops->clock_getres_fallback(ops->ctx, clock, res);
}

static const int32_t kClocks[] = {0};

static const struct vdsolab_plugin3 kPlugin = {
    {
        VDSOLAB_PLUGIN_ABI_V3,
        VDSOLAB_V3_CASE == 0 || VDSOLAB_V3_CASE == 5 ? "entry-points"
                                                     : "entry-points-broken",
        "examples/plugin/entry_points_plugin.c (test only)",
        "clock_gettime(), gettimeofday() and clock_getres() by the syscall, "
        "time() from the page",
        "upstream",
        kClocks,
        0,
        ep_clock_gettime,
        VDSOLAB_COUNTER_MASKED63,
        VDSOLAB_SEM_OVERFLOW_PROTECTED | VDSOLAB_SEM_COARSE_FROM_COARSE_NSEC |
            VDSOLAB_SEM_TIME_NAMESPACE,
        VDSOLAB_RDTSC_ORDERED,
        "Linux 6.18",
        NULL,
    },
    VDSOLAB_V3_CASE == 5 ? NULL : ep_gettimeofday,
    VDSOLAB_V3_CASE == 5 ? NULL : ep_time,
    ep_clock_getres,
    VDSOLAB_V3_CASE == 3 ? 5u : 0u,
};

const struct vdsolab_plugin3* vdsolab_plugin_v3(void) { return &kPlugin; }
