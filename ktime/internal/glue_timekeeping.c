/* File: ktime/internal/glue_timekeeping.c
 *
 * The tree's kernel/time/timekeeping.c, unmodified, and the entry points of
 * the ktime ABI (ktime_abi.h) that need its statics. This wrapper includes
 * the source file, as the vDSO's vclock_gettime.c includes gettimeofday.c,
 * so the static functions the kernel reaches through syscore ops and
 * do_adjtimex() (timekeeping_suspend(), timekeeping_resume(),
 * timekeeping_inject_offset()) can be called directly.
 * Compiled with the kernel's flags and headers (no libc).
 */
#include "kernel/time/timekeeping.c"
#include "ktime_abi.h"

/* shims.c: the counter of the current call, the persistent clock, events. */
extern unsigned long long vdsolab_kt_now;
extern long long vdsolab_kt_rtc_sec, vdsolab_kt_rtc_nsec;
extern long long vdsolab_kt_boot_sec, vdsolab_kt_boot_nsec;
extern struct clocksource* vdsolab_kt_clock;
void vdsolab_kt_reset_statics(void);
const char* vdsolab_kt_take_events(void);
/* glue_ntp.c, glue_vsyscall.c */
void vdsolab_kt_read_ntp(struct vdsolab_kt_state* out);
int vdsolab_kt_ntp_tick_adj_setup(char* value);
const unsigned char* vdsolab_kt_vdso_data(unsigned int* size);
const struct vdsolab_kt_store* vdsolab_kt_take_stores(unsigned int* n,
                                                      unsigned int* updates,
                                                      unsigned int* overflow);

/* During change_clocksource() the clocksource being switched to reads
 * its own counter; every other read, and every read after, `now`. */
static struct clocksource* vdsolab_switching_to;
static unsigned long long vdsolab_now_new;

/* clock->read(): the simulation's counter. */
static u64 vdsolab_read(struct clocksource* cs) {
  return cs == vdsolab_switching_to ? vdsolab_now_new : vdsolab_kt_now;
}

static struct clocksource vdsolab_cs = {
    .name = "tsc",
    .read = vdsolab_read,
};

/* Clocksources switched to: registration links each into clocksource.c's
 * list, so none is registered twice; reset() restores the pool. */
static struct clocksource vdsolab_next_cs[VDSOLAB_KT_MAX_SWITCHES];
static int vdsolab_next_used;

static int vdsolab_register(struct clocksource* cs,
                            const struct vdsolab_kt_clock* c,
                            struct vdsolab_kt_clock_fields* out) {
  int ret;
  cs->mask = c->mask;
  cs->rating = c->rating;
  cs->vdso_clock_mode = c->vdso_clock_mode;
  /* arch/x86/kernel/tsc.c's clocksource_tsc flags. */
  cs->flags = CLOCK_SOURCE_IS_CONTINUOUS | CLOCK_SOURCE_VALID_FOR_HRES |
              CLOCK_SOURCE_MUST_VERIFY | CLOCK_SOURCE_VERIFY_PERCPU;
  if (c->suspend_nonstop) cs->flags |= CLOCK_SOURCE_SUSPEND_NONSTOP;
  ret = __clocksource_register_scale(cs, c->scale, c->freq);
  out->mask = cs->mask;
  out->mult = cs->mult;
  out->shift = cs->shift;
  out->maxadj = cs->maxadj;
  out->max_cycles = cs->max_cycles;
  out->max_idle_ns = cs->max_idle_ns;
#ifdef VDSOLAB_KT_HAS_MAX_RAW_DELTA
  out->max_raw_delta = cs->max_raw_delta;
#else
  out->max_raw_delta = 0;
#endif
  return ret;
}

static int vdsolab_register_clock(const struct vdsolab_kt_clock* c,
                                  struct vdsolab_kt_clock_fields* out) {
  int ret = vdsolab_register(&vdsolab_cs, c, out);
  vdsolab_kt_clock = &vdsolab_cs;
  return ret;
}

static int vdsolab_change_clocksource(const struct vdsolab_kt_clock* c,
                                      struct vdsolab_kt_clock_fields* out,
                                      unsigned long long now_old,
                                      unsigned long long now_new) {
  struct clocksource* cs;
  int ret;
  if (vdsolab_next_used >= VDSOLAB_KT_MAX_SWITCHES) return -1;
  cs = &vdsolab_next_cs[vdsolab_next_used++];
  cs->name = "vdsolab-next";
  cs->read = vdsolab_read;
  ret = vdsolab_register(cs, c, out);
  if (ret != 0) return ret;
  vdsolab_kt_now = now_old;
  vdsolab_now_new = now_new;
  vdsolab_switching_to = cs;
  ret = timekeeping_notify(cs);
  vdsolab_switching_to = NULL;
  vdsolab_kt_now = now_new;
  vdsolab_kt_clock = cs;
  return ret;
}

static void vdsolab_init(unsigned long long now, long long wall_sec,
                         long long wall_nsec, long long boot_sec,
                         long long boot_nsec) {
  vdsolab_kt_now = now;
  vdsolab_kt_rtc_sec = wall_sec;
  vdsolab_kt_rtc_nsec = wall_nsec;
  vdsolab_kt_boot_sec = boot_sec;
  vdsolab_kt_boot_nsec = boot_nsec;
  timekeeping_init();
}

static void vdsolab_tick(unsigned long long now) {
  vdsolab_kt_now = now;
  update_wall_time();
}

static int vdsolab_adjtimex(struct vdsolab_kt_timex* t,
                            unsigned long long now) {
  struct __kernel_timex txc = {0};
  int ret;
  vdsolab_kt_now = now;
  txc.modes = t->modes;
  txc.offset = t->offset;
  txc.freq = t->freq;
  txc.maxerror = t->maxerror;
  txc.esterror = t->esterror;
  txc.status = t->status;
  txc.constant = t->constant;
  txc.precision = t->precision;
  txc.tolerance = t->tolerance;
  txc.time.tv_sec = t->time_sec;
  txc.time.tv_usec = t->time_usec;
  txc.tick = t->tick;
  txc.tai = t->tai;
  ret = do_adjtimex(&txc);
  t->modes = txc.modes;
  t->offset = txc.offset;
  t->freq = txc.freq;
  t->maxerror = txc.maxerror;
  t->esterror = txc.esterror;
  t->status = txc.status;
  t->constant = txc.constant;
  t->precision = txc.precision;
  t->tolerance = txc.tolerance;
  t->time_sec = txc.time.tv_sec;
  t->time_usec = txc.time.tv_usec;
  t->tick = txc.tick;
  t->ppsfreq = txc.ppsfreq;
  t->jitter = txc.jitter;
  t->shift = txc.shift;
  t->stabil = txc.stabil;
  t->jitcnt = txc.jitcnt;
  t->calcnt = txc.calcnt;
  t->errcnt = txc.errcnt;
  t->stbcnt = txc.stbcnt;
  t->tai = txc.tai;
  return ret;
}

static int vdsolab_settimeofday(long long sec, long long nsec,
                                unsigned long long now) {
  struct timespec64 ts = {.tv_sec = sec, .tv_nsec = nsec};
  vdsolab_kt_now = now;
  return do_settimeofday64(&ts);
}

static int vdsolab_inject_offset(long long sec, long long nsec,
                                 unsigned long long now) {
  struct timespec64 ts = {.tv_sec = sec, .tv_nsec = nsec};
  vdsolab_kt_now = now;
  return timekeeping_inject_offset(&ts);
}

static void vdsolab_suspend(unsigned long long now, long long rtc_sec,
                            long long rtc_nsec) {
  vdsolab_kt_now = now;
  vdsolab_kt_rtc_sec = rtc_sec;
  vdsolab_kt_rtc_nsec = rtc_nsec;
  timekeeping_suspend();
}

static void vdsolab_resume(unsigned long long now, long long rtc_sec,
                           long long rtc_nsec) {
  vdsolab_kt_now = now;
  vdsolab_kt_rtc_sec = rtc_sec;
  vdsolab_kt_rtc_nsec = rtc_nsec;
  timekeeping_resume();
}

static void vdsolab_inject_sleeptime(long long sec, long long nsec,
                                     unsigned long long now) {
  struct timespec64 ts = {.tv_sec = sec, .tv_nsec = nsec};
  vdsolab_kt_now = now;
  timekeeping_inject_sleeptime64(&ts);
}

static void vdsolab_copy_tkr(struct vdsolab_kt_tkr* o,
                             const struct tk_read_base* t) {
  o->mask = t->mask;
  o->cycle_last = t->cycle_last;
  o->xtime_nsec = t->xtime_nsec;
  o->base_real = t->base_real;
  o->base = t->base;
  o->mult = t->mult;
  o->shift = t->shift;
}

static void vdsolab_read_state(struct vdsolab_kt_state* o) {
  const struct timekeeper* tk = &tk_core.timekeeper;
  vdsolab_copy_tkr(&o->tkr_mono, &tk->tkr_mono);
  vdsolab_copy_tkr(&o->tkr_raw, &tk->tkr_raw);
  o->xtime_sec = tk->xtime_sec;
  o->ktime_sec = tk->ktime_sec;
  o->raw_sec = tk->raw_sec;
  o->wtm_sec = tk->wall_to_monotonic.tv_sec;
  o->wtm_nsec = tk->wall_to_monotonic.tv_nsec;
  o->mtb_sec = tk->monotonic_to_boot.tv_sec;
  o->mtb_nsec = tk->monotonic_to_boot.tv_nsec;
  o->offs_real = tk->offs_real;
  o->offs_boot = tk->offs_boot;
  o->offs_tai = tk->offs_tai;
  o->next_leap_ktime = tk->next_leap_ktime;
  o->tai_offset = tk->tai_offset;
  o->clock_was_set_seq = tk->clock_was_set_seq;
  o->cs_was_changed_seq = tk->cs_was_changed_seq;
  o->cycle_interval = tk->cycle_interval;
  o->xtime_interval = tk->xtime_interval;
  o->raw_interval = tk->raw_interval;
  o->ntp_tick = tk->ntp_tick;
  o->xtime_remainder = tk->xtime_remainder;
  o->ntp_error = tk->ntp_error;
  o->ntp_error_shift = tk->ntp_error_shift;
  o->ntp_err_mult = tk->ntp_err_mult;
  o->skip_second_overflow = tk->skip_second_overflow;
  o->suspended = timekeeping_suspended;
  vdsolab_kt_read_ntp(o);
}

/* The object's WARN() traps: every file's __bug_table entries, merged by
 * the linker, which defines these bounds (weak: an object without a WARN()
 * has no table). The kernel finds them so in report_bug(). */
extern const struct bug_entry __start___bug_table[] __attribute__((weak));
extern const struct bug_entry __stop___bug_table[] __attribute__((weak));

/* The entries flagged BUGFLAG_WARNING (`warning`), or the others: BUG()s. */
static unsigned int vdsolab_bug_entries(int warning, unsigned long* addr,
                                        const char** file, unsigned int* line,
                                        unsigned int max) {
  const struct bug_entry* b;
  unsigned int n = 0;
  if (__start___bug_table == NULL) return 0;
  for (b = __start___bug_table; b < __stop___bug_table; ++b) {
    if (!(b->flags & BUGFLAG_WARNING) != !warning) continue;
    if (n < max) {
      /* CONFIG_GENERIC_BUG_RELATIVE_POINTERS and CONFIG_DEBUG_BUGVERBOSE:
       * lib/bug.c's bug_addr() and bug_get_file_line(). */
      addr[n] = (unsigned long)&b->bug_addr_disp + b->bug_addr_disp;
      file[n] = (const char*)&b->file_disp + b->file_disp;
      line[n] = b->line;
    }
    ++n;
  }
  return n;
}

static unsigned int vdsolab_warn_sites(unsigned long* addr, const char** file,
                                       unsigned int* line, unsigned int max) {
  return vdsolab_bug_entries(1, addr, file, line, max);
}

static unsigned int vdsolab_bug_sites(unsigned long* addr, const char** file,
                                      unsigned int* line, unsigned int max) {
  return vdsolab_bug_entries(0, addr, file, line, max);
}

static int vdsolab_read_clock(int clock, unsigned long long now, long long* sec,
                              long long* nsec) {
  const unsigned long long saved = vdsolab_kt_now;
  struct timespec64 ts = {0};
  int ret = 0;
  vdsolab_kt_now = now;
  switch (clock) {
    case VDSOLAB_KT_CLOCK_REAL:
      ktime_get_real_ts64(&ts);
      break;
    case VDSOLAB_KT_CLOCK_MONOTONIC:
      ktime_get_ts64(&ts);
      break;
    case VDSOLAB_KT_CLOCK_RAW:
      ktime_get_raw_ts64(&ts);
      break;
    case VDSOLAB_KT_CLOCK_BOOTTIME:
      ktime_get_boottime_ts64(&ts);
      break;
    case VDSOLAB_KT_CLOCK_TAI:
      ktime_get_clocktai_ts64(&ts);
      break;
    case VDSOLAB_KT_CLOCK_COARSE_REAL:
      ktime_get_coarse_real_ts64(&ts);
      break;
    case VDSOLAB_KT_CLOCK_COARSE_MONO:
      ktime_get_coarse_ts64(&ts);
      break;
    default:
      ret = -1;
      break;
  }
  vdsolab_kt_now = saved;
  *sec = ts.tv_sec;
  *nsec = ts.tv_nsec;
  return ret;
}

static const struct vdsolab_kt_api vdsolab_api = {
    .abi_version = VDSOLAB_KT_ABI_VERSION,
    .reset = vdsolab_kt_reset_statics,
    .register_clock = vdsolab_register_clock,
    .init = vdsolab_init,
    .tick = vdsolab_tick,
    .adjtimex = vdsolab_adjtimex,
    .settimeofday = vdsolab_settimeofday,
    .inject_offset = vdsolab_inject_offset,
    .suspend = vdsolab_suspend,
    .resume = vdsolab_resume,
    .inject_sleeptime = vdsolab_inject_sleeptime,
    .read_state = vdsolab_read_state,
    .vdso_data = vdsolab_kt_vdso_data,
    .take_events = vdsolab_kt_take_events,
    .take_stores = vdsolab_kt_take_stores,
    .ntp_tick_adj_setup = vdsolab_kt_ntp_tick_adj_setup,
    .change_clocksource = vdsolab_change_clocksource,
    .warn_sites = vdsolab_warn_sites,
    .bug_sites = vdsolab_bug_sites,
    .read_clock = vdsolab_read_clock,
};

__attribute__((visibility("default"))) const struct vdsolab_kt_api*
vdsolab_ktime_api(void) {
  return &vdsolab_api;
}
