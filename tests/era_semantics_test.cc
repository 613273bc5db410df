// The kernel-version rule (variants::SemanticsOfKernel(), which judges a
// host vDSO by its kernel's version) against the built-in eras, at every
// version from 4.0 to 7.20: each version gets the semantics of the newest
// built-in era at or below it (or of the oldest era below that: the
// semantics changed first in 6.5), and the upstream reader's at and after
// 6.17, the version it models. A rule off by one minor at a boundary
// (6.5's masked counter, 6.10's overflow protection, 6.15's coarse_nsec)
// judges that kernel by the wrong era.

#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "variants/registry.h"
#include "variants/semantics.h"
#include "variants/variant.h"

namespace vdsolab::variants {
namespace {

std::string Describe(const Semantics& s) {
  return absl::StrFormat(
      "{counter %s, overflow_protected %d, coarse_from_coarse_nsec %d}",
      s.counter == CounterSemantics::kMasked63 ? "masked63" : "clamp_to_last",
      s.overflow_protected, s.coarse_from_coarse_nsec);
}

// major * 100 + minor from an era's name ("6.10"), or -1.
int VersionOf(std::string_view name) {
  int major = 0, minor = 0;
  const char* end = name.data() + name.size();
  auto [p, ec] = std::from_chars(name.data(), end, major);
  if (ec != std::errc() || p == end || *p != '.') return -1;
  auto [q, ec2] = std::from_chars(p + 1, end, minor);
  if (ec2 != std::errc() || q != end) return -1;
  return major * 100 + minor;
}

TEST(EraSemantics, TheKernelVersionRuleAgreesWithEveryBuiltInEra) {
  // (version, semantics), ascending: the eras, then upstream at 6.17.
  std::vector<std::pair<int, Semantics>> eras;
  Semantics upstream;
  bool have_upstream = false;
  for (const Variant* v : AllVariants()) {
    if (v->name == "upstream") {
      upstream = v->semantics;
      have_upstream = true;
    } else if (const int version = VersionOf(v->name); version > 0) {
      eras.emplace_back(version, v->semantics);
    }
  }
  ASSERT_TRUE(have_upstream);
  ASSERT_GE(eras.size(), 5u) << "the eras 5.3, 6.1, 6.5, 6.10 and 6.15";
  std::sort(eras.begin(), eras.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  eras.emplace_back(617, upstream);
  int checked = 0;
  for (int major = 4; major <= 7; ++major) {
    for (int minor = 0; minor <= 20; ++minor) {
      const int version = major * 100 + minor;
      Semantics want = eras.front().second;
      for (const auto& [at, s] : eras) {
        if (at <= version) want = s;
      }
      const Semantics got = SemanticsOfKernel(major, minor);
      EXPECT_EQ(got, want) << absl::StrFormat(
          "%d.%d: the rule says %s, the "
          "eras %s",
          major, minor, Describe(got), Describe(want));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4 * 21);
}

}  // namespace
}  // namespace vdsolab::variants
