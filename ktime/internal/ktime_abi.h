/* File: ktime/internal/ktime_abi.h
 *
 * The C ABI between vdsolab and a kernel tree's own kernel/time code built
 * into a shared object (docs/ktime.md). Plain C types only: the glue that
 * implements it is compiled with the kernel's headers and -nostdinc.
 * Every counter value the kernel code reads through clock->read() is `now`
 * of the call that runs it.
 */
#ifndef VDSOLAB_KTIME_ABI_H_
#define VDSOLAB_KTIME_ABI_H_

#define VDSOLAB_KT_ABI_VERSION 7

#ifdef __cplusplus
extern "C" {
#endif

/* The clocksource the tree registers (__clocksource_register_scale()). */
struct vdsolab_kt_clock {
  unsigned long long mask;
  unsigned int scale; /* 1000: clocksource_register_khz(); 1: _hz() */
  unsigned int freq;
  int vdso_clock_mode;
  int rating;
  int suspend_nonstop; /* CLOCK_SOURCE_SUSPEND_NONSTOP */
};

/* What registration computed (struct clocksource). */
struct vdsolab_kt_clock_fields {
  unsigned long long mask, max_cycles, max_idle_ns, max_raw_delta;
  unsigned int mult, shift, maxadj;
};

struct vdsolab_kt_tkr {
  unsigned long long mask, cycle_last, xtime_nsec, base_real;
  long long base;
  unsigned int mult, shift;
};

/* struct timekeeper (tk_core.timekeeper) and ntp.c's state. */
struct vdsolab_kt_state {
  struct vdsolab_kt_tkr tkr_mono, tkr_raw;
  unsigned long long xtime_sec, ktime_sec, raw_sec;
  long long wtm_sec, wtm_nsec, mtb_sec, mtb_nsec;
  long long offs_real, offs_boot, offs_tai, next_leap_ktime;
  int tai_offset;
  unsigned int clock_was_set_seq, cs_was_changed_seq;
  unsigned long long cycle_interval, xtime_interval, raw_interval, ntp_tick;
  long long xtime_remainder, ntp_error;
  unsigned int ntp_error_shift, ntp_err_mult, skip_second_overflow;
  /* ntp.c */
  unsigned long long tick_usec, tick_length, tick_length_base;
  int time_state, time_status;
  long long time_offset, time_constant, time_maxerror, time_esterror;
  long long time_freq, time_reftime, time_adjust, ntp_tick_adj;
  long long ntp_next_leap_sec;
  int suspended; /* timekeeping_suspended */
};

/* struct __kernel_timex, field by field. */
struct vdsolab_kt_timex {
  unsigned int modes;
  int status, tai, shift;
  long long offset, freq, maxerror, esterror, constant, precision, tolerance;
  long long time_sec, time_usec, tick, ppsfreq, jitter, stabil;
  long long jitcnt, calcnt, errcnt, stbcnt;
};

/* One store update_vsyscall() made into _vdso_data, in program order:
 * `offset` bytes into the array, `size` bytes (1, 2, 4 or 8) of `value`
 * (little-endian). `update` numbers the update_vsyscall() calls since the
 * last take from 1 (0: a store outside one, e.g. update_vsyscall_tz()).
 * Version 4: `flags` bit 0 (VDSOLAB_KT_WMB_BEFORE) when a barrier that
 * orders stores (smp_wmb(), smp_mb()) ran since the store before it. */
#define VDSOLAB_KT_WMB_BEFORE 1u
struct vdsolab_kt_store {
  unsigned int update, offset, size, flags;
  unsigned long long value;
};

/* Events the kernel code raised (clock_was_set(), hrtimer, notifier, ...)
 * and its printk output, since the last vdsolab_kt_take_events(). */
struct vdsolab_kt_api {
  int abi_version;
  /* Restores every static of the kernel code to its state at load. */
  void (*reset)(void);
  /* Registers the clocksource; timekeeping_init() then runs on it. */
  int (*register_clock)(const struct vdsolab_kt_clock* c,
                        struct vdsolab_kt_clock_fields* out);
  void (*init)(unsigned long long now, long long wall_sec, long long wall_nsec,
               long long boot_sec, long long boot_nsec);
  void (*tick)(unsigned long long now); /* update_wall_time */
  int (*adjtimex)(struct vdsolab_kt_timex* txc, unsigned long long now);
  int (*settimeofday)(long long sec, long long nsec, unsigned long long now);
  int (*inject_offset)(long long sec, long long nsec, unsigned long long now);
  void (*suspend)(unsigned long long now, long long rtc_sec,
                  long long rtc_nsec);
  void (*resume)(unsigned long long now, long long rtc_sec, long long rtc_nsec);
  void (*inject_sleeptime)(long long sec, long long nsec,
                           unsigned long long now);
  void (*read_state)(struct vdsolab_kt_state* out);
  /* The vvar page as update_vsyscall() left it: _vdso_data[CS_BASES]. */
  const unsigned char* (*vdso_data)(unsigned int* size);
  /* Events and log lines, '\n'-separated, since the last call. */
  const char* (*take_events)(void);
  /* The stores since the last call (*n of them, over *updates calls of
   * update_vsyscall()); *overflow is set if some were lost. Valid until
   * the next operation. */
  const struct vdsolab_kt_store* (*take_stores)(unsigned int* n,
                                                unsigned int* updates,
                                                unsigned int* overflow);
  /* Version 3: the tree's ntp_tick_adj_setup(), the __setup handler of the
   * ntp_tick_adj= boot parameter, on `value` (the text after the '=');
   * call it after reset() and before init(), as the kernel parses its
   * command line before timekeeping_init(). Returns the handler's value. */
  int (*ntp_tick_adj_setup)(char* value);
  /* Version 5: registers another clocksource (a fresh struct clocksource
   * each time, up to VDSOLAB_KT_MAX_SWITCHES per reset()) and switches to
   * it through timekeeping_notify(), i.e. change_clocksource(): the old
   * clocksource reads `now_old` (timekeeping_forward_now()), the new one
   * `now_new` (tk_setup_internals()), and every operation after reads the
   * new one. Returns timekeeping_notify()'s value, or the registration's
   * error, or -1 when the pool is exhausted. */
  int (*change_clocksource)(const struct vdsolab_kt_clock* c,
                            struct vdsolab_kt_clock_fields* out,
                            unsigned long long now_old,
                            unsigned long long now_new);
  /* Version 6: the object's WARN() traps (its __bug_table entries flagged
   * BUGFLAG_WARNING), up to `max` of them: each one's address, and the
   * source file and line of the WARN(); returns how many there are. The
   * kernel goes on after one; so does a guarded call
   * (variants/plugin/call_guard.h). */
  unsigned int (*warn_sites)(unsigned long* addr, const char** file,
                             unsigned int* line, unsigned int max);
  /* Version 7: the tree's reader of syscall clock `clock`
   * (VDSOLAB_KT_CLOCK_*) with clock->read() at `now`: its timespec64 in
   * *sec, *nsec. The counter of the operations (the `now` of the last one)
   * is what it was after. Returns 0, or -1 for an unknown clock. Not while
   * timekeeping is suspended: the readers WARN_ON(timekeeping_suspended). */
  int (*read_clock)(int clock, unsigned long long now, long long* sec,
                    long long* nsec);
  /* Version 7: the object's BUG() traps (its __bug_table entries not
   * flagged BUGFLAG_WARNING), as warn_sites() lists the WARN()s: a trap at
   * one stays a crash, named by its file and line. */
  unsigned int (*bug_sites)(unsigned long* addr, const char** file,
                            unsigned int* line, unsigned int max);
};

#define VDSOLAB_KT_MAX_SWITCHES 16

/* Version 7: the syscall clocks read_clock() reads, each by the tree's own
 * reader (kernel/time/timekeeping.c, include/linux/timekeeping.h). */
enum {
  VDSOLAB_KT_CLOCK_REAL,        /* ktime_get_real_ts64() */
  VDSOLAB_KT_CLOCK_MONOTONIC,   /* ktime_get_ts64() */
  VDSOLAB_KT_CLOCK_RAW,         /* ktime_get_raw_ts64() */
  VDSOLAB_KT_CLOCK_BOOTTIME,    /* ktime_get_boottime_ts64() */
  VDSOLAB_KT_CLOCK_TAI,         /* ktime_get_clocktai_ts64() */
  VDSOLAB_KT_CLOCK_COARSE_REAL, /* ktime_get_coarse_real_ts64() */
  VDSOLAB_KT_CLOCK_COARSE_MONO, /* ktime_get_coarse_ts64() */
  VDSOLAB_KT_NCLOCKS
};

/* The one exported symbol. */
const struct vdsolab_kt_api* vdsolab_ktime_api(void);

#ifdef __cplusplus
}
#endif

#endif /* VDSOLAB_KTIME_ABI_H_ */
