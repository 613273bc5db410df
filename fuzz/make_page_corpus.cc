// File: fuzz/make_page_corpus.cc
//
// Writes page_fuzzer's seed corpus: for every built-in variant, the page
// its writer publishes for a 2.6 GHz TSC a few ticks after boot, prefixed
// with a counter just past the last update (the input format of
// page_fuzzer.cc). Run from the workspace:
//
//   ./bazelw run //fuzz:make_page_corpus -- "$PWD/fuzz/corpus/page"

#include <cstdio>
#include <fstream>
#include <string>

#include "testing/publish_bed.h"
#include "timekeeper/timekeeping.h"
#include "variants/registry.h"
#include "variants/variant.h"
#include "vdso/datapage.h"
#include "vdso/vvar_page.h"

namespace {

using namespace vdsolab;

bool Write(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
  if (!f) {
    std::fprintf(stderr, "make_page_corpus: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_page_corpus DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  constexpr uint32_t kKhz = 2600000;
  for (const variants::Variant* v : variants::AllVariants()) {
    const uint64_t boot = 1ull << 40;
    variants::PublishContext ctx;
    ctx.tsc_khz = kKhz;
    ctx.boot_counter = boot;
    testing::PublishBed bed(*v, testing::Tsc(kKhz), ctx);
    bed.tk().Init(boot, Timespec64{1764460800, 0}, Timespec64{0, 0});
    uint64_t now = boot;
    for (int i = 0; i < 3; ++i) {
      now += kKhz * 4;  // 4 ms at HZ=250.
      bed.tk().Advance(timekeeper::AdvanceMode::kTick, now);
    }
    vdso::VvarPage* page = &bed.page();
    const uint64_t counter = now + 1234567;
    // The counter, then the pages up to the end of the pvclock area's
    // first record (zero here: the writers publish clock mode TSC).
    std::string out(reinterpret_cast<const char*>(&counter), 8);
    out.append(reinterpret_cast<const char*>(page->data()), 4096);
    if (!Write(dir + "/" + std::string(v->name) + ".bin", out)) return 1;
    if (v->name != "upstream") continue;
    // The same page on kvm-clock: clock mode PVCLOCK in both records and a
    // stable pvclock page 0x4000 on (1 ns = 2 TSC cycles at shift -1).
    for (int cs_index : {vdso::kCsHresCoarse, vdso::kCsRaw}) {
      page->Store(vdso::ClockDataOffset(cs_index) + vdso::kVcClockMode, 4, 2);
    }
    const uint32_t pv = vdso::kPvclockPageOffset;
    page->Store(pv + vdso::kPvtiVersion, 4, 2);
    page->Store(pv + vdso::kPvtiTscTimestamp, 8, boot);
    page->Store(pv + vdso::kPvtiSystemTime, 8, 12000000);
    page->Store(pv + vdso::kPvtiMul, 4, 0xfffffff0u);
    page->Store(pv + vdso::kPvtiShift, 1, 0xff);
    page->Store(pv + vdso::kPvtiFlags, 1, vdso::kPvclockTscStableBit);
    std::string pvclock(reinterpret_cast<const char*>(&counter), 8);
    // Through the writer's mapping: the readers' leaves the pages between
    // (1 and 3) unreadable, as the kernel does.
    for (uint32_t i = 0; i < pv + 32; ++i) {
      pvclock.push_back(static_cast<char>(page->Load(i, 1)));
    }
    if (!Write(dir + "/upstream-pvclock.bin", pvclock)) return 1;
  }
  return 0;
}
