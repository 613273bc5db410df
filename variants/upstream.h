// File: variants/upstream.h
//
// The "upstream" variant: the 6.17/6.18 x86-64 vDSO (vdso/upstream_reader.h)
// on the 6.17+ struct vdso_time_data, published by update_vsyscall()
// (timekeeper/vsyscall.h). The reference the other variants are compared
// with, and the code `vdsolab conform` checks against the host's vDSO.

#ifndef VDSOLAB_VARIANTS_UPSTREAM_H_
#define VDSOLAB_VARIANTS_UPSTREAM_H_

#include "variants/layout.h"
#include "variants/variant.h"

namespace vdsolab::variants {

// The 6.17+ time data page (plus the pvclock page's fields).
const Layout& UpstreamLayout();

const Variant& UpstreamVariant();

}  // namespace vdsolab::variants

#endif  // VDSOLAB_VARIANTS_UPSTREAM_H_
