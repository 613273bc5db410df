/*
 * File: variants/plugin/vdsolab_plugin.h
 *
 * The vdsolab plugin ABI, versions 1 to 4: a vDSO clock_gettime() variant
 * compiled into its own shared object (C or C++) and run by vdsolab without
 * rebuilding it:
 *
 *   vdsolab run SCENARIO --variant-so=./libmine.so --variant=mine
 *   vdsolab compare --variant-so=./libmine.so
 *
 * The plugin reads a page that one of vdsolab's built-in variants writes
 * (its `layout`): it gets that page's base address, and reaches the page,
 * the counter, barriers and the syscall only through `vdsolab_ops`, so the
 * simulation interleaves writer stores, preempts, migrates and injects
 * counter faults exactly as for a built-in variant. docs/plugins.md has a
 * complete example.
 *
 * This header is C (C99) and C++ compatible and has no dependencies. The ABI
 * only ever grows by a new version number and a new entry point; a plugin
 * built against version 1 keeps working.
 *
 * Version 2 (struct vdsolab_plugin2, from vdsolab_plugin_v2()) adds what
 * version 1 borrowed from the layout's built-in variant: the era semantics the
 * oracle judges the plugin by, the counter instruction of its main path, where
 * it comes from (for replay files), and a hook for plugins that load the page
 * with plain loads of their own (compiled kernel code: `before_load`).
 *
 * Version 3 (struct vdsolab_plugin3, from vdsolab_plugin_v3()) adds the
 * vDSO's other entry points, gettimeofday(), time() and clock_getres(),
 * which vdsolab checks against its model's system calls.
 *
 * Version 4 (struct vdsolab_plugin4, from vdsolab_plugin_v4()) adds clocks
 * of the plugin's own (a tracer's clock, a TSC clock with its own
 * calibration) under ids the kernel does not use, each judged either as a
 * kernel clock it must equal or by what a clock without a kernel
 * counterpart can be held to.
 */
#ifndef VDSOLAB_PLUGIN_H_
#define VDSOLAB_PLUGIN_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of struct vdsolab_plugin (vdsolab_plugin_v1). It stays 1 so
 * that version-1 sources keep compiling and loading. */
#define VDSOLAB_PLUGIN_ABI_VERSION 1
/* The version of struct vdsolab_plugin2 (vdsolab_plugin_v2()). */
#define VDSOLAB_PLUGIN_ABI_V2 2
/* The version of struct vdsolab_plugin3 (vdsolab_plugin_v3()). */
#define VDSOLAB_PLUGIN_ABI_V3 3
/* The version of struct vdsolab_plugin4 (vdsolab_plugin_v4()). */
#define VDSOLAB_PLUGIN_ABI_V4 4

/* struct __kernel_timespec on x86-64. */
struct vdsolab_timespec {
  int64_t tv_sec;
  int64_t tv_nsec;
};
/* struct __kernel_old_timeval and struct timezone on x86-64. */
struct vdsolab_timeval {
  int64_t tv_sec;
  int64_t tv_usec;
};
struct vdsolab_timezone {
  int32_t tz_minuteswest;
  int32_t tz_dsttime;
};

/* How the counter is read; the simulation orders each as a CPU does. */
enum vdsolab_counter_read {
  VDSOLAB_RDTSC_ORDERED = 0, /* rdtsc_ordered(): after earlier loads */
  VDSOLAB_RDTSCP = 1,        /* rdtscp: after earlier loads on every CPU */
  VDSOLAB_RDTSC = 2          /* bare rdtsc: may run before earlier loads */
};

/* Returned by clock_gettime when `may_retry` said no: the simulation gave
 * up on the call (a livelock). Not an errno. */
#define VDSOLAB_ABANDONED (-0x10000)

/* Loads a plugin counts itself in a quiet call (vdsolab_ops.quiet). */
struct vdsolab_quiet {
  /* seq_start[offset] != 0 where a seq word of the layout starts, for
   * offsets below seq_start_size (from the `page` a call receives). */
  const uint8_t* seq_start;
  uint64_t seq_start_size;
  /* Kept by the plugin, one update per load it would have announced with
   * before_load(): how many; the low 32 bits of the last load at a seq
   * start; and, at every other load, the last seq value loaded before it
   * (both start at 0, or as vdsolab leaves them). */
  uint64_t loads;
  uint32_t last_seq;
  uint32_t begin_seq;
};

/* What the plugin's reader may do. Every function takes `ctx` first. */
struct vdsolab_ops {
  void* ctx;
  /* READ_ONCE() of a page field at `p` (inside the page). */
  uint32_t (*load32)(void* ctx, const uint8_t* p);
  uint64_t (*load64)(void* ctx, const uint8_t* p);
  /* The counter (TSC), read as `kind` (enum vdsolab_counter_read). */
  uint64_t (*read_counter)(void* ctx, int kind);
  /* smp_rmb(), and cpu_relax() in a spin loop. */
  void (*rmb)(void* ctx);
  void (*cpu_relax)(void* ctx);
  /* Call once per loop iteration (retry or spin); 0: return
   * VDSOLAB_ABANDONED now. */
  int (*may_retry)(void* ctx);
  /* The clock_gettime() system call: 0 or -errno, *ts filled on 0. */
  int32_t (*fallback)(void* ctx, int32_t clock, struct vdsolab_timespec* ts);
  /* Version 2 only (a version-1 plugin never reads past `fallback`). */
  /* A preemption point before a plain load of `size` bytes at `p` that the
   * plugin makes itself: the simulation may make writer stores visible
   * first, and the load that follows sees them. For code that cannot call
   * load32/load64 (compiled kernel source, hooked by the compiler). */
  void (*before_load)(void* ctx, const uint8_t* p, uint32_t size);
  /* The vvar area starting at the `page` a call receives: its size in
   * bytes, and where the pvclock page (struct pvclock_vcpu_time_info of
   * vCPU 0, for kvm-clock) is, both from `page`. */
  uint64_t area_bytes;
  uint64_t pvclock_offset;
  /* Version 2, since vdsolab 0.10: non-NULL in a call in which nothing can
   * happen at a load but the passing of time. The plugin may then count
   * its loads there instead of calling before_load() (a plugin that
   * ignores it is still right). vdsolab sets it only for the plugins it
   * builds from kernel trees, whose code keeps no state between calls
   * (such a call may be run again from its start). */
  struct vdsolab_quiet* quiet;
  /* Version 2, added after `quiet`: where the time data page is, from
   * `page`: 0; or 4096 in a call of a reader in a time namespace, whose
   * `page` is then the namespace's view of the area (vvar_fault() in a
   * namespace): page 0 the namespace's page (written once, before the
   * namespace's first task: its loads are no preemption points), page 1
   * the time page, the pages after it where they always are. */
  uint64_t time_page_offset;
  /* Version 3: the gettimeofday() and clock_getres() system calls, for a
   * version-3 plugin's other entry points (0 or -errno, *tv, *tz and *res
   * filled where not NULL on 0). In a clock_gettime() call they answer
   * -ENOSYS. */
  int32_t (*gettimeofday_fallback)(void* ctx, struct vdsolab_timeval* tv,
                                   struct vdsolab_timezone* tz);
  int32_t (*clock_getres_fallback)(void* ctx, int32_t clock,
                                   struct vdsolab_timespec* res);
};

struct vdsolab_plugin {
  uint32_t abi_version; /* VDSOLAB_PLUGIN_ABI_VERSION */
  /* Unique among variants, e.g. "mine": letters, digits and . _ + @ -,
   * not starting with '-' or '.', at most 128 bytes. */
  const char* name;
  const char* provenance; /* Where it comes from: patch, thread, author. */
  const char* summary;    /* One line. */
  /* The built-in variant whose page layout, writer and era semantics this
   * plugin reads and is judged by (see `vdsolab variants`), e.g.
   * "upstream", "6.1", "x86-4.16". */
  const char* layout;
  /* The clock ids the plugin answers from the page (for reports, and for
   * property fast_path: a call of one of them that goes to the syscall
   * where lib/vdso would not fails). */
  const int32_t* vdso_clocks;
  uint32_t n_vdso_clocks;
  /* clock_gettime(clock, ts) on the page at `page` (the start of the time
   * data page): 0 or -errno, or VDSOLAB_ABANDONED. */
  int32_t (*clock_gettime)(const struct vdsolab_ops* ops, const uint8_t* page,
                           int32_t clock, struct vdsolab_timespec* ts);
};

/* The one symbol a version-1 plugin exports. */
const struct vdsolab_plugin* vdsolab_plugin_v1(void);

/* How a reader's era treats the counter (the oracle computes the expected
 * answer by these rules). */
enum vdsolab_counter_semantics {
  /* 6.5+: rdtsc & S64_MAX; a delta with bit 62 set is negative motion,
   * clamped to the base time. */
  VDSOLAB_COUNTER_MASKED63 = 0,
  /* 4.x-6.4: a counter behind cycle_last is clamped to it; the raw delta
   * otherwise (no masking). */
  VDSOLAB_COUNTER_CLAMP_TO_LAST = 1
};
/* semantics_flags */
/* 6.10+: delta * mult cannot overflow (the max_cycles slow path). */
#define VDSOLAB_SEM_OVERFLOW_PROTECTED 0x1u
/* 6.15+: the coarse clocks come from coarse_nsec. */
#define VDSOLAB_SEM_COARSE_FROM_COARSE_NSEC 0x2u
/* The reader follows VDSO_CLOCKMODE_TIMENS (5.6+): on a time namespace's
 * page (seq 1, clock_mode TIMENS) it reads the time page and adds the
 * namespace's offsets. vdsolab then runs it with readers in a namespace
 * too, if the layout's variant can write a namespace page
 * (vdsolab_ops.time_page_offset says where the time page is). A plugin
 * on a layout whose built-in reader follows it ("upstream") is run there
 * whatever it declares. */
#define VDSOLAB_SEM_TIME_NAMESPACE 0x4u
/* The reader reads kvm-clock from the pvclock page in VDSO_CLOCKMODE_PVCLOCK
 * (x86 CONFIG_PARAVIRT_CLOCK; vdsolab_ops.pvclock_offset says where) and
 * falls back only while PVCLOCK_TSC_STABLE_BIT is clear. vdsolab then
 * judges a fallback in PVCLOCK mode under the stable bit as a lost fast
 * path (property fast_path). Without it (and in version 1) a plugin may
 * leave PVCLOCK mode to the syscall, as a TSC-only reader does. */
#define VDSOLAB_SEM_PVCLOCK 0x8u

/* A version-2 plugin: the version-1 fields in the same order, then the
 * semantics it declares instead of borrowing them from `layout`. */
struct vdsolab_plugin2 {
  uint32_t abi_version; /* VDSOLAB_PLUGIN_ABI_V2 */
  const char* name;
  const char* provenance;
  const char* summary;
  /* The built-in variant whose page layout and writer the plugin reads. */
  const char* layout;
  const int32_t* vdso_clocks;
  uint32_t n_vdso_clocks;
  int32_t (*clock_gettime)(const struct vdsolab_ops* ops, const uint8_t* page,
                           int32_t clock, struct vdsolab_timespec* ts);
  /* The era semantics the plugin is judged by. */
  uint32_t counter_semantics; /* enum vdsolab_counter_semantics */
  uint32_t semantics_flags;   /* VDSOLAB_SEM_* */
  /* The counter instruction its main path uses (enum vdsolab_counter_read),
   * for reports and benchmarks. */
  uint32_t counter_read;
  /* The era the semantics are from, for reports: "Linux 6.12.117". */
  const char* era;
  /* Where the code comes from, for replay files: free text, e.g. the
   * kernel tree and patches it was built from with their hashes; NULL. */
  const char* origin;
};

/* The one symbol a version-2 plugin exports. */
const struct vdsolab_plugin2* vdsolab_plugin_v2(void);

/* A version-3 plugin: the version-2 record, then the vDSO's other entry
 * points (x86 vclock_gettime.c), each NULL where the plugin has none.
 * vdsolab calls them on pages no writer is changing, with the counter
 * fixed, and checks them against its timekeeper model's system calls;
 * `ops` is as for clock_gettime (gettimeofday_fallback and
 * clock_getres_fallback answer). */
struct vdsolab_plugin3 {
  struct vdsolab_plugin2 v2; /* v2.abi_version: VDSOLAB_PLUGIN_ABI_V3 */
  /* gettimeofday(tv, tz): 0 or -errno. */
  int32_t (*gettimeofday)(const struct vdsolab_ops* ops, const uint8_t* page,
                          struct vdsolab_timeval* tv,
                          struct vdsolab_timezone* tz);
  /* time(t): the seconds, also stored at `t` when not NULL. */
  int64_t (*time)(const struct vdsolab_ops* ops, const uint8_t* page,
                  int64_t* t);
  /* clock_getres(clock, res): 0 or -errno. */
  int32_t (*clock_getres)(const struct vdsolab_ops* ops, const uint8_t* page,
                          int32_t clock, struct vdsolab_timespec* res);
  /* The kernel's CONFIG_HZ the code was built with, where it compiles in
   * the coarse clocks' resolution (LOW_RES_NSEC); 0: the scenario's. */
  uint32_t config_hz;
};

/* The symbol a version-3 plugin exports. */
const struct vdsolab_plugin3* vdsolab_plugin_v3(void);

/* How vdsolab judges a clock of the plugin's own (version 4). 0 is no
 * kind: a record left zeroed is refused. */
enum vdsolab_own_clock_kind {
  /* Must equal, bit for bit, the system call of kernel clock `same_as`
   * (CLOCK_REALTIME 0, MONOTONIC 1, MONOTONIC_RAW 4, BOOTTIME 7 or TAI 11)
   * at the counter the call read, for the page state its seq validated,
   * under the era semantics the plugin declares; checked as that clock is
   * (exact, torn, monotonic and causal where that clock is monotonic, and
   * fast_path: it may go to the syscall only where lib/vdso would): a
   * tracer's clock that is MONOTONIC_RAW under an id of its own. */
  VDSOLAB_OWN_SAME_AS = 1,
  /* No kernel counterpart (a clock with its own calibration or origin):
   * checked for normalised timespecs and, unless flagged
   * VDSOLAB_OWN_NOT_MONOTONIC, for monotonicity per reader and across
   * readers (causality); its rate against CLOCK_MONOTONIC_RAW is measured
   * (compare's "Clocks without a kernel oracle"), not judged. */
  VDSOLAB_OWN_MEASURED = 2
};
/* flags of a VDSOLAB_OWN_MEASURED clock: it may go backwards by design. */
#define VDSOLAB_OWN_NOT_MONOTONIC 0x1u

struct vdsolab_own_clock {
  /* 32 .. INT32_MAX: ids 0 .. 31 are the kernel's clocks, its aux clocks
   * and room for them to grow; negative ids are CPU-time clocks. Unique
   * among the plugin's own clocks. */
  int32_t id;
  /* For reports: letters, digits and _ . + @ -, at most 64 bytes, not a
   * kernel clock's name; unique among the plugin's own clocks. */
  const char* name;
  uint32_t kind;   /* enum vdsolab_own_clock_kind */
  int32_t same_as; /* VDSOLAB_OWN_SAME_AS: the kernel clock id; else 0 */
  uint32_t flags;  /* VDSOLAB_OWN_NOT_MONOTONIC (MEASURED only); else 0 */
};

/* A version-4 plugin: the version-3 record, then its own clocks. vdsolab
 * calls clock_gettime() with them as with the scenario's clocks (every
 * reader calls each of them too, whatever its list), from the page and
 * with the counter through `ops` as for a kernel clock; a clock it sends
 * to ops->fallback() gets the system call of its `same_as` clock, or
 * -EINVAL for a MEASURED one (the kernel has no such clock). */
struct vdsolab_plugin4 {
  struct vdsolab_plugin3 v3; /* v3.v2.abi_version: VDSOLAB_PLUGIN_ABI_V4 */
  const struct vdsolab_own_clock* own_clocks;
  uint32_t n_own_clocks; /* at most 16 */
};

/* The symbol a version-4 plugin exports (looked up first). */
const struct vdsolab_plugin4* vdsolab_plugin_v4(void);

#ifdef __cplusplus
}
#endif

#endif /* VDSOLAB_PLUGIN_H_ */
