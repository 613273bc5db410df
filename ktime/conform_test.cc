// The tree's own kernel/time code against the timekeeper model in the
// tree's era profile: 100,000 random operations per Debian tree with no
// difference, and a model defect switched on is found and shrunk.

#include "ktime/conform.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "ktime/kernel_time.h"
#include "ktime/ktime.h"

namespace vdsolab::ktime {
namespace {

constexpr uint64_t kSeed = 0x6b74696d65;  // "ktime"

struct Tree {
  KernelTime kt;
  std::string version;
  TreeProfile profile;  // ProfileForKernelTime()'s.
};

bool Installed(const std::string& tarball) {
  return access(tarball.c_str(), R_OK) == 0;
}

// Builds (cache under $TEST_TMPDIR) and loads the Debian tree, with the
// model's profile for it; a failure is a test failure.
std::optional<Tree> LoadTree(const std::string& tarball) {
  BuildOptions o;
  o.tree = tarball;
  const char* tmp = std::getenv("TEST_TMPDIR");
  o.cache_dir = std::string(tmp ? tmp : "/tmp") + "/ktime-cache";
  absl::StatusOr<BuiltKernelTime> b = BuildKernelTime(o);
  EXPECT_TRUE(b.ok()) << b.status();
  if (!b.ok()) return std::nullopt;
  absl::StatusOr<KernelTime> kt = KernelTime::Load(b->so_path);
  EXPECT_TRUE(kt.ok()) << kt.status();
  if (!kt.ok()) return std::nullopt;
  absl::StatusOr<TreeProfile> tp = ProfileForKernelTime(*kt, b->version);
  EXPECT_TRUE(tp.ok()) << tp.status();
  if (!tp.ok()) return std::nullopt;
  return Tree{*kt, b->version, *tp};
}

class ConformTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ConformTest, ModelAgreesWithTheTreeAfterEveryOperation) {
  const std::string tarball =
      std::string("/usr/src/linux-source-") + GetParam() + ".tar.xz";
  if (!Installed(tarball)) GTEST_SKIP() << tarball << " is not installed";
  std::optional<Tree> tree = LoadTree(tarball);
  ASSERT_TRUE(tree.has_value());
  TreeProfile* tp = &tree->profile;
  // Debian's 6.12.117 and .118 have 6.13's max_raw_delta check (kernel/time/
  // timekeeping_internal.h); 6.1 the MSB check x86 selects.
  EXPECT_EQ(tp->backports, (tree->version.starts_with("6.12")
                                ? std::vector<std::string>{"max-raw-delta"}
                                : std::vector<std::string>{}));
  const timekeeper::TimekeeperProfile* profile = &tp->profile;
  ConformOptions o;
  o.ops = 100000;
  o.seed = kSeed;
  absl::StatusOr<ConformResult> r = RunConform(tree->kt, *profile, o);
  ASSERT_TRUE(r.ok()) << r.status();
  std::printf(
      "Linux %s (model era %s): %llu ops in %llu sequences; model "
      "%.0f ops/s, tree %.0f ops/s\n",
      tree->version.c_str(), profile->era.c_str(),
      static_cast<unsigned long long>(r->ops_compared),
      static_cast<unsigned long long>(r->sequences), r->model_ops_per_s,
      r->tree_ops_per_s);
  for (const std::string& c : r->op_counts) std::printf("  %s\n", c.c_str());
  EXPECT_TRUE(r->ok) << r->difference << "\n"
                     << FormatSequence(r->minimal) << r->events;
  EXPECT_EQ(r->ops_compared, o.ops);
}

// The tree's WARN()s go on after their traps, as in the kernel, and are
// counted: seed 1 drives timekeeping_apply_adjustment() into its mult
// overflow WARN_ON_ONCE() (where the model logs and returns as well).
// Before, the trap ended vdsolab by SIGILL.
TEST_P(ConformTest, AWarnGoesOnAfterItsTrap) {
  const std::string tarball =
      std::string("/usr/src/linux-source-") + GetParam() + ".tar.xz";
  if (!Installed(tarball)) GTEST_SKIP() << tarball << " is not installed";
  std::optional<Tree> tree = LoadTree(tarball);
  ASSERT_TRUE(tree.has_value());
  TreeProfile* tp = &tree->profile;
  ConformOptions o;
  o.ops = 25000;
  o.seed = 1;
  absl::StatusOr<ConformResult> r = RunConform(tree->kt, tp->profile, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ok) << r->difference;
  EXPECT_EQ(r->ops_compared, o.ops);
  EXPECT_GT(r->tree_warns, 0u);
  EXPECT_TRUE(r->first_warn.starts_with("kernel/time/timekeeping.c:"))
      << r->first_warn;
}

// The oracle can fail: 6.15-rc1's adjtimex() defect (TK_ADV_FREQ forwards
// and clears ntp_error) switched on in the model is a difference after the
// first frequency change, shrunk to a handful of operations.
TEST_P(ConformTest, FindsAndShrinksAModelDefect) {
  const std::string tarball =
      std::string("/usr/src/linux-source-") + GetParam() + ".tar.xz";
  if (!Installed(tarball)) GTEST_SKIP() << tarball << " is not installed";
  std::optional<Tree> tree = LoadTree(tarball);
  ASSERT_TRUE(tree.has_value());
  TreeProfile* tp = &tree->profile;
  timekeeper::TimekeeperProfile* profile = &tp->profile;
  profile->defects.adjtimex_forwards_and_clears_error = true;
  ConformOptions o;
  o.ops = 20000;
  o.seed = kSeed;
  absl::StatusOr<ConformResult> r = RunConform(tree->kt, *profile, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->ok);
  std::printf("%s\n%s", r->difference.c_str(),
              FormatSequence(r->minimal).c_str());
  EXPECT_LE(r->minimal.ops.size(), 6u);
  EXPECT_EQ(r->minimal.ops[r->failing_op].kind, OpKind::kAdjtimex);
  // Only the mode the defect needs is left: a frequency or tick change.
  const uint32_t modes = r->minimal.ops[r->failing_op].txc.modes;
  EXPECT_TRUE(modes == timekeeper::kAdjFrequency ||
              modes == timekeeper::kAdjTick)
      << std::hex << modes;
}

// The page comparison can fail: the 6.1 era's writer (240-byte records,
// no max_cycles) against the 6.12 tree's 248-byte records differs at boot.
TEST(ConformPageTest, AWrongEraWriterIsAPageDifference) {
  const std::string tarball = "/usr/src/linux-source-6.12.tar.xz";
  if (!Installed(tarball)) GTEST_SKIP() << tarball << " is not installed";
  std::optional<Tree> tree = LoadTree(tarball);
  ASSERT_TRUE(tree.has_value());
  absl::StatusOr<timekeeper::TimekeeperProfile> profile =
      timekeeper::ProfileForEra("6.1");
  ASSERT_TRUE(profile.ok());
  Sequence seq;
  seq.ops.push_back(Op{});
  seq.ops[0].cycles = 10400000;
  size_t failing = 0;
  const std::string d = CompareSequence(tree->kt, *profile, seq, &failing);
  std::printf("%s\n", d.c_str());
  EXPECT_NE(d.find("boot: page field vvar+"), std::string::npos) << d;
}

INSTANTIATE_TEST_SUITE_P(DebianTrees, ConformTest,
                         ::testing::Values("6.1", "6.12"));

}  // namespace
}  // namespace vdsolab::ktime
