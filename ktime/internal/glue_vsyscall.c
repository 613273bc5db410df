/* File: ktime/internal/glue_vsyscall.c
 *
 * The tree's kernel/time/vsyscall.c, unmodified, and the x86 vvar data it
 * writes: arch/x86/entry/vdso/vma.c's DEFINE_VVAR(struct vdso_data,
 * _vdso_data), here an ordinary array the caller reads back.
 */
#include "kernel/time/vsyscall.c"

struct vdso_data _vdso_data[CS_BASES] __attribute__((aligned(16)));

const unsigned char *vdsolab_kt_vdso_data(unsigned int *size) {
  *size = sizeof(_vdso_data);
  return (const unsigned char *)_vdso_data;
}
