/*
 * File: variants/plugin/vdsolab_plugin.h
 *
 * The vdsolab plugin ABI, version 1: a vDSO clock_gettime() variant compiled
 * into its own shared object (C or C++) and run by vdsolab without
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
 */
#ifndef VDSOLAB_PLUGIN_H_
#define VDSOLAB_PLUGIN_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VDSOLAB_PLUGIN_ABI_VERSION 1

/* struct __kernel_timespec on x86-64. */
struct vdsolab_timespec {
  int64_t tv_sec;
  int64_t tv_nsec;
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
};

struct vdsolab_plugin {
  uint32_t abi_version;   /* VDSOLAB_PLUGIN_ABI_VERSION */
  const char* name;       /* Unique among variants, e.g. "mine". */
  const char* provenance; /* Where it comes from: patch, thread, author. */
  const char* summary;    /* One line. */
  /* The built-in variant whose page layout, writer and era semantics this
   * plugin reads and is judged by (see `vdsolab variants`), e.g.
   * "upstream", "6.1", "x86-4.16". */
  const char* layout;
  /* The clock ids the plugin answers from the page (for reports). */
  const int32_t* vdso_clocks;
  uint32_t n_vdso_clocks;
  /* clock_gettime(clock, ts) on the page at `page` (the start of the time
   * data page): 0 or -errno, or VDSOLAB_ABANDONED. */
  int32_t (*clock_gettime)(const struct vdsolab_ops* ops, const uint8_t* page,
                           int32_t clock, struct vdsolab_timespec* ts);
};

/* The one symbol a version-1 plugin exports. */
const struct vdsolab_plugin* vdsolab_plugin_v1(void);

#ifdef __cplusplus
}
#endif

#endif /* VDSOLAB_PLUGIN_H_ */
