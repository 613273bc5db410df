/* File: ktime/internal/glue_clocksource.c
 * The tree's kernel/time/clocksource.c, unmodified: registration
 * (clocks_calc_mult_shift(), maxadj, max_cycles, max_idle_ns), and the
 * suspend timing resume reads the sleep from on a nonstop clocksource. */
#include "kernel/time/clocksource.c"
