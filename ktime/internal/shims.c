/* File: ktime/internal/shims.c
 *
 * What the rest of the kernel supplies around kernel/time/timekeeping.c,
 * ntp.c, vsyscall.c, clocksource.c and time.c, for a single-threaded user
 * space caller (docs/ktime.md lists every shim and why it is faithful):
 *
 * - locks (raw spinlocks, mutexes) are no-ops: one caller, no interrupts;
 *   seqcounts are the tree's own inline code and need nothing;
 * - printk and WARN go to the event log as "log: ..." lines;
 * - clock_was_set(), hrtimers, the pvclock_gtod notifier, workqueues, the
 *   RTC, syscore registration, tick and clockevent suspend/resume are
 *   recorded as events and otherwise do nothing;
 * - the counter (clock->read()), the persistent clock
 *   (read_persistent_clock64(), read_persistent_wall_and_boot_offset():
 *   __weak arch hooks) and the boot clocksource are the caller's;
 * - stop_machine() calls its function.
 *
 * Compiled as ordinary user-space C (libc headers, not the kernel's): the
 * kernel's prototypes are matched by hand, and pointers to kernel structs
 * are opaque here.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The caller's inputs of the current operation (glue_timekeeping.c). */
unsigned long long vdsolab_kt_now;
long long vdsolab_kt_rtc_sec, vdsolab_kt_rtc_nsec;
long long vdsolab_kt_boot_sec, vdsolab_kt_boot_nsec;
void* vdsolab_kt_clock; /* struct clocksource * */

/* ---- the event log ---- */

static char events[1 << 16];
static size_t events_len;
static char events_out[sizeof(events)];

static void vevent(const char* prefix, const char* fmt, va_list ap) {
  char line[512];
  int n = snprintf(line, sizeof(line), "%s", prefix);
  /* printk's KERN_<level> prefix: SOH and a level character. */
  if (fmt[0] == '\001' && fmt[1] != 0) fmt += 2;
  vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
  size_t len = strlen(line);
  while (len > 0 && line[len - 1] == '\n') line[--len] = 0;
  if (events_len + len + 2 > sizeof(events)) return; /* full: drop */
  memcpy(events + events_len, line, len);
  events_len += len;
  events[events_len++] = '\n';
  events[events_len] = 0;
}

static void event(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vevent("", fmt, ap);
  va_end(ap);
}

const char* vdsolab_kt_take_events(void) {
  memcpy(events_out, events, events_len + 1);
  events_len = 0;
  events[0] = 0;
  return events_out;
}

/* ---- reset: every writable static back to its value at load ---- */

struct segment {
  uintptr_t start, end;
};
static struct segment segments[8];
static int nsegments;
static unsigned char* snapshot;
static size_t snapshot_size;

static int find_self(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  uintptr_t self = (uintptr_t)data;
  int mine = 0;
  uintptr_t relro_start = 0, relro_end = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr)* p = &info->dlpi_phdr[i];
    uintptr_t s = info->dlpi_addr + p->p_vaddr;
    if (p->p_type == PT_LOAD && self >= s && self < s + p->p_memsz) mine = 1;
    if (p->p_type == PT_GNU_RELRO) {
      relro_start = s;
      relro_end = s + p->p_memsz;
    }
  }
  if (!mine) return 0;
  for (int i = 0; i < info->dlpi_phnum && nsegments < 8; i++) {
    const ElfW(Phdr)* p = &info->dlpi_phdr[i];
    if (p->p_type != PT_LOAD || !(p->p_flags & PF_W)) continue;
    uintptr_t s = info->dlpi_addr + p->p_vaddr, e = s + p->p_memsz;
    /* RELRO is read-only after relocation (and never changes). */
    if (relro_end > s && relro_end < e) s = relro_end;
    if (relro_start <= s && relro_end >= e) continue;
    segments[nsegments].start = s;
    segments[nsegments].end = e;
    nsegments++;
  }
  return 1;
}

/* The snapshot excludes itself: its own bookkeeping lives in these
 * variables, which are restored to the values they have now. */
static void take_snapshot(void) {
  dl_iterate_phdr(find_self, (void*)&find_self);
  for (int i = 0; i < nsegments; i++) {
    snapshot_size += segments[i].end - segments[i].start;
  }
  snapshot = malloc(snapshot_size);
  size_t off = 0;
  for (int i = 0; i < nsegments; i++) {
    size_t n = segments[i].end - segments[i].start;
    memcpy(snapshot + off, (void*)segments[i].start, n);
    off += n;
  }
}

__attribute__((constructor)) static void vdsolab_kt_load(void) {
  take_snapshot();
}

void vdsolab_kt_reset_statics(void) {
  unsigned char* snap = snapshot;
  struct segment segs[8];
  int n = nsegments;
  memcpy(segs, segments, sizeof(segs));
  size_t off = 0;
  for (int i = 0; i < n; i++) {
    size_t len = segs[i].end - segs[i].start;
    memcpy((void*)segs[i].start, snap + off, len);
    off += len;
  }
}

/* ---- printk, WARN ---- */

int _printk(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vevent("log: ", fmt, ap);
  va_end(ap);
  return 0;
}
int _printk_deferred(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vevent("log: ", fmt, ap);
  va_end(ap);
  return 0;
}
void __warn_printk(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vevent("warn: ", fmt, ap);
  va_end(ap);
}
/* WARN_ON()'s trap (x86's ud2 under CONFIG_GENERIC_BUG) cannot be shimmed;
 * the build compiles with the trap and vdsolab treats SIGILL as a crash of
 * the kernel code. */

/* ---- locks ---- */

unsigned long _raw_spin_lock_irqsave(void* lock) {
  (void)lock;
  return 0;
}
void _raw_spin_unlock_irqrestore(void* lock, unsigned long flags) {
  (void)lock;
  (void)flags;
}
void mutex_lock(void* m) { (void)m; }
void mutex_unlock(void* m) { (void)m; }

/* ---- the clock, the persistent clock ---- */

struct kt_timespec64 {
  long long tv_sec;
  long tv_nsec;
};

void* clocksource_default_clock(void) { return vdsolab_kt_clock; }
void clocksource_arch_init(void* cs) { (void)cs; }

void read_persistent_clock64(struct kt_timespec64* ts) {
  ts->tv_sec = vdsolab_kt_rtc_sec;
  ts->tv_nsec = vdsolab_kt_rtc_nsec;
}
void read_persistent_wall_and_boot_offset(struct kt_timespec64* wall,
                                          struct kt_timespec64* boot) {
  wall->tv_sec = vdsolab_kt_rtc_sec;
  wall->tv_nsec = vdsolab_kt_rtc_nsec;
  boot->tv_sec = vdsolab_kt_boot_sec;
  boot->tv_nsec = vdsolab_kt_boot_nsec;
}
unsigned long long sched_clock(void) { return 0; }
unsigned long long jiffies_64;

/* ---- recorded events ---- */

void clock_was_set(unsigned int bases) { event("clock_was_set(%#x)", bases); }
void clock_was_set_delayed(void) { event("clock_was_set_delayed()"); }
void tick_clock_notify(void) { event("tick_clock_notify()"); }
void tick_suspend(void) { event("tick_suspend()"); }
void tick_resume(void) { event("tick_resume()"); }
int tick_oneshot_mode_active(void) { return 0; }
void clockevents_suspend(void) { event("clockevents_suspend()"); }
void clockevents_resume(void) { event("clockevents_resume()"); }
void calc_global_load(void) {}
void add_device_randomness(const void* buf, size_t len) {
  (void)buf;
  (void)len;
}
void register_syscore_ops(void* ops) { (void)ops; }
void register_syscore(void* ops) { (void)ops; }
int raw_notifier_call_chain(void* nh, unsigned long val, void* v) {
  (void)nh;
  (void)v;
  /* Every update calls the chain; only a clock-was-set one is news. */
  if (val != 0) event("pvclock_gtod notifier(%lu)", val);
  return 0;
}
int raw_notifier_chain_register(void* nh, void* n) {
  (void)nh;
  (void)n;
  return 0;
}
int raw_notifier_chain_unregister(void* nh, void* n) {
  (void)nh;
  (void)n;
  return 0;
}
int stop_machine(int (*fn)(void*), void* data, const void* cpus) {
  (void)cpus;
  return fn(data);
}
unsigned int hrtimer_resolution = 1; /* CONFIG_HIGH_RES_TIMERS */
void hrtimer_init(void* timer, int clock_id, int mode) {
  (void)timer;
  event("hrtimer_init(clock %d, mode %d)", clock_id, mode);
}
void hrtimer_start_range_ns(void* timer, long long tim,
                            unsigned long long delta, int mode) {
  (void)timer;
  (void)delta;
  event("hrtimer_start(%lld, mode %d)", tim, mode);
}
int hrtimer_cancel(void* timer) {
  (void)timer;
  event("hrtimer_cancel()");
  return 0;
}
void* system_freezable_power_efficient_wq;
_Bool queue_work_on(int cpu, void* wq, void* work) {
  (void)cpu;
  (void)wq;
  (void)work;
  event("queue_work()");
  return 1;
}
void* rtc_class_open(const char* name) {
  (void)name;
  return NULL;
}
void rtc_class_close(void* rtc) { (void)rtc; }
int rtc_set_time(void* rtc, void* tm) {
  (void)rtc;
  (void)tm;
  return -19; /* -ENODEV */
}
void rtc_time64_to_tm(long long time, void* tm) {
  (void)time;
  (void)tm;
}
/* lib/kstrtox.c's kstrtoll() (the ntp_tick_adj= boot parameter's parser):
 * an optional sign, base 0 choosing 16 for "0x", 8 for a leading 0, else
 * 10; one trailing newline allowed; -ERANGE past 64 bits or the sign's
 * range, -EINVAL for no digits or anything after them. */
static int vdsolab_kt_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}
static int vdsolab_kt_kstrtoull(const char* s, unsigned int base,
                                unsigned long long* res) {
  if (base == 0) {
    if (s[0] == '0') {
      base = ((s[1] | 0x20) == 'x' && vdsolab_kt_digit(s[2]) < 16) ? 16 : 8;
    } else {
      base = 10;
    }
  }
  if (base == 16 && s[0] == '0' && (s[1] | 0x20) == 'x') s += 2;
  unsigned long long v = 0;
  int digits = 0, overflow = 0;
  for (; vdsolab_kt_digit(*s) < (int)base; s++, digits++) {
    const unsigned long long d = (unsigned long long)vdsolab_kt_digit(*s);
    if (v > (~0ull - d) / base) overflow = 1;
    v = v * base + d;
  }
  if (digits == 0) return -22; /* -EINVAL */
  if (overflow) return -34;    /* -ERANGE */
  if (*s == '\n') s++;
  if (*s) return -22;
  *res = v;
  return 0;
}
int kstrtoll(const char* s, unsigned int base, long long* res) {
  unsigned long long tmp;
  int rv;
  if (s[0] == '-') {
    rv = vdsolab_kt_kstrtoull(s + 1, base, &tmp);
    if (rv < 0) return rv;
    if ((long long)(0 - tmp) > 0) return -34;
    *res = (long long)(0 - tmp);
  } else {
    if (s[0] == '+') s++;
    rv = vdsolab_kt_kstrtoull(s, base, &tmp);
    if (rv < 0) return rv;
    if ((long long)tmp < 0) return -34;
    *res = (long long)tmp;
  }
  return 0;
}
long sized_strscpy(char* dst, const char* src, size_t count) {
  size_t n = strnlen(src, count);
  if (n == count) {
    if (count == 0) return -7;
    memcpy(dst, src, count - 1);
    dst[count - 1] = 0;
    return -7; /* -E2BIG */
  }
  memcpy(dst, src, n + 1);
  return (long)n;
}
/* 6.1's lib/string.c strlcpy() (boot_override_clocksource(), never
 * called). */
size_t strlcpy(char* dst, const char* src, size_t size) {
  size_t n = strlen(src);
  if (size) {
    size_t len = n >= size ? size - 1 : n;
    memcpy(dst, src, len);
    dst[len] = 0;
  }
  return n;
}
/* time.c's system calls copy to and from user space; never called. */
unsigned long _copy_from_user(void* to, const void* from, unsigned long n) {
  (void)to;
  (void)from;
  return n;
}
unsigned long _copy_to_user(void* to, const void* from, unsigned long n) {
  (void)to;
  (void)from;
  return n;
}
_Bool cap_settime(void) { return 0; }
/* The user-access helpers have their own calling convention (asm/uaccess.h);
 * only time.c's system calls reach them, and nothing calls those. */
__asm__(
    ".globl __get_user_8\n__get_user_8: ud2\n"
    ".globl __put_user_8\n__put_user_8: ud2\n");
