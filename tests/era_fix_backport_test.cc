// An era's behaviour excuses that era's reader; it is not a bar for a fix.
// A reader with 6.5's masked counter arithmetic, judged by the 6.1 era's
// rules (a counter behind cycle_last clamped to it), answers exactly the
// kernel's syscall across a 64-bit counter wrap, where the 6.1 vDSO lets
// time stand still: a kernel developer backporting "x86/vdso: Fix
// gettimeofday masking" to 6.1 must not be told it is a defect.

#include <gtest/gtest.h>

#include "sim/engine.h"
#include "sim/scenario_toml.h"
#include "testing/runfile.h"
#include "variants/registry.h"
#include "variants/variant.h"

namespace vdsolab::sim {
namespace {

uint64_t Defects(const RunResult& r) {
  uint64_t n = 0;
  for (const PropertyStats& s : r.stats) n += s.defects;
  return n;
}

TEST(EraFixBackport, AMaskingReaderJudgedAs61PassesTheCounterWrap) {
  absl::StatusOr<Scenario> s = LoadScenarioFile(
      vdsolab::testing::Runfile("scenarios/counter-wrap.toml"));
  ASSERT_TRUE(s.ok()) << s.status();
  // The wrap 2 ms after a tick (the file's falls on one): the calls until
  // the next tick see a counter behind cycle_last.
  s->machine.counter_start = ~uint64_t{0} - 1045200000 + 1;  // 0.402 s.
  absl::StatusOr<const variants::Variant*> v65 = variants::FindVariant("6.5");
  ASSERT_TRUE(v65.ok()) << v65.status();
  ASSERT_EQ((*v65)->semantics.counter, variants::CounterSemantics::kMasked63);
  variants::Variant backport = **v65;
  backport.name = "6.1-with-6.5-masking";
  backport.semantics.counter = variants::CounterSemantics::kClampToLast;
  absl::StatusOr<RunResult> r = RunRandom(*s, backport, RandomOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->coverage.counter_wrapped, 0u) << "the counter must wrap";
  EXPECT_EQ(Defects(*r), 0u);
  for (const Violation& v : r->violations) {
    if (v.verdict == Verdict::kPrecondition) continue;
    ADD_FAILURE() << PropertyName(v.property) << ": " << v.why << " "
                  << v.detail;
    break;
  }
}

}  // namespace
}  // namespace vdsolab::sim
