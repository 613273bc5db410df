// File: fuzz/page_fuzzer.cc
//
// Arbitrary page bytes: a vvar area is what a test, a replay or `vdsolab
// inspect` hands in, and on a real machine a reader may see a page in any
// state. The input is a counter value (8 bytes) and the page's first
// bytes; the rest of the page is zero. Then:
// - `inspect`'s layout check and decoders (text and JSON) run on it;
// - every built-in variant's reader reads every clock id 0..23 and three
//   invalid ones on it, through the simulation's access policy, with the
//   counter fixed and retries bounded (a seq that stays odd is a
//   livelock the simulation reports, not a hang).
// Nothing may crash, and under --config=fuzz (ASan) or --config=ubsan
// nothing may be undefined.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "common/clock_result.h"
#include "common/clockid.h"
#include "host/inspect.h"
#include "host/live_vvar.h"
#include "testing/fixed_counter_hooks.h"
#include "variants/registry.h"
#include "variants/variant.h"
#include "vdso/access.h"
#include "vdso/datapage.h"
#include "vdso/vvar_page.h"

namespace {

using vdsolab::ClockId;
using vdsolab::ClockResult;

vdsolab::vdso::VvarPage& Page() {
  static std::unique_ptr<vdsolab::vdso::VvarPage> page = [] {
    auto p = vdsolab::vdso::VvarPage::Create();
    if (!p.ok()) std::abort();
    return *std::move(p);
  }();
  return *page;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint64_t counter = 0;
  std::memcpy(&counter, data, size < 8 ? size : 8);
  const uint8_t* bytes = data + (size < 8 ? size : 8);
  const size_t n = size < 8 ? 0 : size - 8;

  // The vvar area: the input, then zeros; the pvclock page is the input's
  // bytes past the time page, if any.
  vdsolab::vdso::VvarPage& page = Page();
  std::vector<uint8_t> area(page.size(), 0);
  std::memcpy(area.data(), bytes, n < area.size() ? n : area.size());
  // The kernel writes VDSO_CLOCKMODE_TIMENS (0x7fffffff) only into a
  // namespace's page, never into the time page this is: a record claiming
  // it sends a reader with a namespace path (upstream's, 6.1's) to the
  // namespace's slot, which a task outside a namespace cannot read
  // (SIGBUS; PROT_NONE here). Every layout's clock_mode is an aligned
  // word of the first page: none of them holds that value here.
  for (size_t at = 0; at + 4 <= 4096; at += 4) {
    uint32_t word = 0;
    std::memcpy(&word, area.data() + at, 4);
    if (word == 0x7fffffffu) std::memset(area.data() + at, 0, 4);
  }
  page.CopyIn(0, area.data(), area.size());

  vdsolab::host::LiveSnapshot snap;
  snap.time_page.assign(area.begin(), area.begin() + 4096);
  if (n > 4096) {
    snap.pvclock_page.assign(
        area.begin() + vdsolab::vdso::kPvclockPageOffset,
        area.begin() + vdsolab::vdso::kPvclockPageOffset + 4096);
  }
  for (const vdsolab::host::KernelVersion& k :
       {vdsolab::host::KernelVersion{6, 18, "6.18"},
        vdsolab::host::KernelVersion{6, 15, "6.15"},
        vdsolab::host::KernelVersion{6, 1, "6.1"}}) {
    (void)vdsolab::host::CheckLayout(snap, k);
    (void)vdsolab::host::DescribeSnapshotText(snap, k);
    (void)vdsolab::host::DescribeSnapshotJson(snap, k);
  }

  // A fixed counter; 63 loop iterations per call at most (the syscall's
  // answer does not matter).
  vdsolab::testing::FixedCounterHooks hooks(counter);
  hooks.retry_budget = 63;
  for (const vdsolab::variants::Variant* v : vdsolab::variants::AllVariants()) {
    std::unique_ptr<vdsolab::variants::SimReader> reader = v->make_sim_reader();
    for (ClockId clock :
         {0,  1,  2,  3,  4,  5,  6,  7,       8,       9,      10,
          11, 12, 16, 23, 24, 32, -1, 0x10000, 0x10001, 0x10002}) {
      hooks.Reset();
      vdsolab::vdso::HookedAccess access(page.data(), &hooks);
      const std::optional<ClockResult> r =
          reader->Call(access, page.data(), clock);
      // tv_nsec is whatever the reader computed; a result is all that is
      // required (or nullopt: abandoned after the retry budget).
      (void)r;
    }
  }
  return 0;
}
