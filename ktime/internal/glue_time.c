/* File: ktime/internal/glue_time.c
 * The tree's kernel/time/time.c, unmodified: ns_to_timespec64(),
 * set_normalized_timespec64(), sys_tz and the conversions timekeeping.c
 * and ntp.c call. Its system calls are compiled but never called. */
#include "kernel/time/time.c"
