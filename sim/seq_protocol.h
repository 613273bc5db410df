// File: sim/seq_protocol.h
//
// The writer's half of the seq protocol, checked on every update it
// publishes, before the scheduler interleaves it with any reader: readers
// only ever compare a seq word for parity and equality, so a writer that
// bumps it by another amount passes every read check while it departs from
// the kernel (and from any reader that counts updates by it).

#ifndef VDSOLAB_SIM_SEQ_PROTOCOL_H_
#define VDSOLAB_SIM_SEQ_PROTOCOL_H_

#include <cstdint>
#include <map>
#include <string>

#include "variants/layout.h"
#include "vdso/vvar_page.h"

namespace vdsolab::sim {

// vdso_write_begin()/vdso_write_end() (lib/vdso, 5.3+), gtod_write_begin()/
// gtod_write_end() (x86, 4.x) and perf_event_update_userpage()'s
// ++userpg->lock: every seq word of `layout` that `update` writes is
// written twice, first its value between updates + 1 (odd: readers spin or
// retry), then + 2. `words` holds each seq word's value between updates,
// by offset (a word not in it was never written: 0, the zeroed page), and
// is brought up to date. "" if the update keeps the protocol, else what
// it wrote instead.
std::string SeqProtocolMismatch(const vdso::VvarUpdate& update,
                                const variants::Layout& layout,
                                std::map<uint32_t, uint32_t>* words);

}  // namespace vdsolab::sim

#endif  // VDSOLAB_SIM_SEQ_PROTOCOL_H_
