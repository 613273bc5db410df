/* File: ktime/internal/glue_vsyscall.c
 *
 * The tree's kernel/time/vsyscall.c, unmodified, and the x86 vvar data it
 * writes: arch/x86/entry/vdso/vma.c's DEFINE_VVAR(struct vdso_data,
 * _vdso_data), here an ordinary array the caller reads back.
 *
 * This unit alone is compiled with -fsanitize=thread (ktime.cc), so the
 * compiler calls __tsan_write<N>(addr) before every store vsyscall.c makes:
 * the hooks below log each store into _vdso_data in program order, with the
 * value it wrote, so that the simulation can replay update_vsyscall() store
 * by store (--kernel-time, docs/ktime.md). update_vsyscall() is renamed at
 * its definition and wrapped, to mark where each update begins and ends.
 */
#define update_vsyscall vdsolab_kt_tree_update_vsyscall
#include "kernel/time/vsyscall.c"
#undef update_vsyscall

#include "ktime_abi.h"

/* vdsolab's own code here runs inside the instrumentation: it is not
 * instrumented itself. */
#define VDSOLAB_NOTSAN __attribute__((__no_sanitize_thread__, __noinline__))
#define VDSOLAB_HIDDEN __attribute__((visibility("hidden"))) VDSOLAB_NOTSAN

struct vdso_data _vdso_data[CS_BASES] __attribute__((aligned(16)));

VDSOLAB_NOTSAN const unsigned char* vdsolab_kt_vdso_data(unsigned int* size) {
  *size = sizeof(_vdso_data);
  return (const unsigned char*)_vdso_data;
}

#define VDSOLAB_KT_MAX_STORES 4096

/* The log since the last take; all of it is in .bss, so the ABI's reset()
 * (which restores every static) empties it. */
static struct vdsolab_kt_store kt_stores[VDSOLAB_KT_MAX_STORES];
static unsigned int kt_nstores, kt_updates, kt_overflow;
/* The store whose hook ran last: its value is in memory once the next hook
 * runs (the store follows its hook; a call is not moved across a store). */
static int kt_pending = -1;
/* _vdso_data as the logged stores left it, to find stores the compiler did
 * not instrument (none are known; logged as whole-byte stores if found). */
static unsigned char kt_shadow[sizeof(_vdso_data)];

VDSOLAB_NOTSAN static void kt_settle(void) {
  if (kt_pending < 0) return;
  struct vdsolab_kt_store* s = &kt_stores[kt_pending];
  const unsigned char* p = (const unsigned char*)_vdso_data + s->offset;
  unsigned long long v = 0;
  for (unsigned int i = 0; i < s->size; i++) {
    v |= (unsigned long long)p[i] << (8 * i);
    kt_shadow[s->offset + i] = p[i];
  }
  s->value = v;
  kt_pending = -1;
}

/* A barrier that orders stores ran since the last logged store. */
static int kt_wmb;

VDSOLAB_NOTSAN static void kt_log(unsigned int offset, unsigned int size) {
  if (kt_nstores == VDSOLAB_KT_MAX_STORES) {
    kt_overflow = 1;
    return;
  }
  struct vdsolab_kt_store* s = &kt_stores[kt_nstores];
  s->update = kt_updates;
  s->offset = offset;
  s->size = size;
  s->flags = kt_wmb ? VDSOLAB_KT_WMB_BEFORE : 0u;
  kt_wmb = 0;
  s->value = 0;
  kt_pending = (int)kt_nstores++;
}

VDSOLAB_NOTSAN static void kt_on_store(const void* addr, unsigned long size) {
  kt_settle();
  const unsigned char* p = (const unsigned char*)addr;
  const unsigned char* base = (const unsigned char*)_vdso_data;
  if (p < base || p >= base + sizeof(_vdso_data)) return;
  unsigned int off = (unsigned int)(p - base);
  /* A range store (a struct copy) becomes stores of at most 8 bytes. */
  while (size > 0 && off < sizeof(_vdso_data)) {
    unsigned int n = size > 8 ? 8 : (unsigned int)size;
    kt_settle();
    kt_log(off, n);
    off += n;
    size -= n;
    if (size > 0) kt_settle();
  }
}

/* Bytes of _vdso_data no logged store accounts for. */
VDSOLAB_NOTSAN static void kt_catch_unlogged(void) {
  kt_settle();
  const unsigned char* p = (const unsigned char*)_vdso_data;
  for (unsigned int i = 0; i < sizeof(_vdso_data); i++) {
    if (p[i] == kt_shadow[i]) continue;
    kt_log(i, 1);
    kt_settle();
  }
}

#define VDSOLAB_KT_HOOKS(n)                                                    \
  VDSOLAB_HIDDEN void __tsan_read##n(void* a) {                                \
    (void)a;                                                                   \
    kt_settle();                                                               \
  }                                                                            \
  VDSOLAB_HIDDEN void __tsan_volatile_read##n(void* a) {                       \
    (void)a;                                                                   \
    kt_settle();                                                               \
  }                                                                            \
  VDSOLAB_HIDDEN void __tsan_unaligned_read##n(void* a) {                      \
    (void)a;                                                                   \
    kt_settle();                                                               \
  }                                                                            \
  VDSOLAB_HIDDEN void __tsan_write##n(void* a) { kt_on_store(a, n); }          \
  VDSOLAB_HIDDEN void __tsan_volatile_write##n(void* a) { kt_on_store(a, n); } \
  VDSOLAB_HIDDEN void __tsan_unaligned_write##n(void* a) { kt_on_store(a, n); }

VDSOLAB_KT_HOOKS(1)
VDSOLAB_KT_HOOKS(2)
VDSOLAB_KT_HOOKS(4)
VDSOLAB_KT_HOOKS(8)
VDSOLAB_KT_HOOKS(16)

/* gcc's builtin signatures (sanitizer.def), as ktree/internal/glue.c. */
VDSOLAB_HIDDEN void __tsan_read_range(void* a, long n) {
  (void)a;
  (void)n;
  kt_settle();
}
VDSOLAB_HIDDEN void __tsan_write_range(void* a, long n) {
  kt_on_store(a, (unsigned long)n);
}
/* vsyscall.c's barriers: with CONFIG_KCSAN_WEAK_MEMORY (the generated
 * config) its smp_wmb() and smp_mb() are each an __atomic_signal_fence()
 * of the order kcsan-checks.h assigns (acq_rel, seq_cst), which
 * -fsanitize=thread turns into this call; release orders stores too. An
 * smp_rmb() (acquire) orders loads only. The next logged store carries the
 * barrier, so the simulation reorders stores only between barriers. */
VDSOLAB_HIDDEN void __tsan_atomic_signal_fence(int mo) {
  if (mo != __ATOMIC_ACQUIRE && mo != __ATOMIC_RELAXED) kt_wmb = 1;
}
VDSOLAB_HIDDEN void __tsan_init(void) {}
VDSOLAB_HIDDEN void __tsan_func_entry(void* pc) { (void)pc; }
VDSOLAB_HIDDEN void __tsan_func_exit(void* pc) { (void)pc; }

void vdsolab_kt_tree_update_vsyscall(struct timekeeper* tk);

/* timekeeping_update() calls this: the tree's update_vsyscall(), as one
 * logged update. */
VDSOLAB_NOTSAN void update_vsyscall(struct timekeeper* tk) {
  kt_catch_unlogged(); /* e.g. update_vsyscall_tz() since the last one */
  kt_updates++;
  vdsolab_kt_tree_update_vsyscall(tk);
  kt_catch_unlogged();
}

VDSOLAB_NOTSAN const struct vdsolab_kt_store* vdsolab_kt_take_stores(
    unsigned int* n, unsigned int* updates, unsigned int* overflow) {
  kt_catch_unlogged();
  *n = kt_nstores;
  *updates = kt_updates;
  *overflow = kt_overflow;
  kt_nstores = 0;
  kt_updates = 0;
  kt_overflow = 0;
  return kt_stores;
}
