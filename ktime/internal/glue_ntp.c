/* File: ktime/internal/glue_ntp.c
 *
 * The tree's kernel/time/ntp.c, unmodified, and a reader of its state (its
 * globals are static: this wrapper includes the source file). Linux 6.1 to
 * 6.13 keep the NTP state in file-scope statics; 6.14 moved it into
 * struct ntp_data (not supported yet: the build fails here).
 */
#include "kernel/time/ntp.c"
#include "ktime_abi.h"

/* The ntp_tick_adj= boot parameter's handler (static __init in ntp.c). */
int vdsolab_kt_ntp_tick_adj_setup(char* value) {
  return ntp_tick_adj_setup(value);
}

void vdsolab_kt_read_ntp(struct vdsolab_kt_state* o) {
  o->tick_usec = tick_usec;
  o->tick_length = tick_length;
  o->tick_length_base = tick_length_base;
  o->time_state = time_state;
  o->time_status = time_status;
  o->time_offset = time_offset;
  o->time_constant = time_constant;
  o->time_maxerror = time_maxerror;
  o->time_esterror = time_esterror;
  o->time_freq = time_freq;
  o->time_reftime = time_reftime;
  o->time_adjust = time_adjust;
  o->ntp_tick_adj = ntp_tick_adj;
  o->ntp_next_leap_sec = ntp_next_leap_sec;
}
