#include "sim/run_report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace vdsolab::sim {
namespace {

std::vector<TraceStep> Steps(int n) {
  std::vector<TraceStep> steps(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    steps[static_cast<size_t>(i)].t_ns = static_cast<uint64_t>(i);
    steps[static_cast<size_t>(i)].what = absl::StrCat("step ", i);
  }
  return steps;
}

std::string Line(const TraceStep& s) { return s.what + "\n"; }

// A trace a person can read whole is printed whole; one of a reader
// looping to its budget (15,000 steps from a patched tree: a megabyte of
// output) shows its ends and says how much it left out.
TEST(FormatTraceSteps, PrintsShortTracesWholeAndLongOnesByTheirEnds) {
  for (int n : {0, 1, 199, 200}) {
    const std::string text = FormatTraceSteps(Steps(n), Line);
    EXPECT_EQ(std::vector<std::string>(absl::StrSplit(text, '\n')).size(),
              static_cast<size_t>(n) + 1)
        << n;
    EXPECT_EQ(text.find("not shown"), std::string::npos) << n;
  }
  for (int n : {201, 15663}) {
    const std::string text = FormatTraceSteps(Steps(n), Line);
    const std::vector<std::string> lines = absl::StrSplit(text, '\n');
    ASSERT_EQ(lines.size(), 120u + 1 + 40 + 1) << n;
    EXPECT_EQ(lines[0], "step 0");
    EXPECT_EQ(lines[119], "step 119");
    EXPECT_NE(lines[120].find(absl::StrCat(n - 160, " steps not shown")),
              std::string::npos)
        << lines[120];
    EXPECT_EQ(lines[121], absl::StrCat("step ", n - 40));
    EXPECT_EQ(lines[160], absl::StrCat("step ", n - 1));
  }
}

TEST(FormatChoices, RunsOfEightOrMoreAreOneEntry) {
  EXPECT_EQ(FormatChoices({}), "");
  EXPECT_EQ(FormatChoices({0, 1, 0}), "0, 1, 0");
  EXPECT_EQ(FormatChoices({2, 2, 2, 2, 2, 2, 2}), "2, 2, 2, 2, 2, 2, 2");
  EXPECT_EQ(FormatChoices({2, 2, 2, 2, 2, 2, 2, 2}), "2 (x8)");
  std::vector<int> loop(15663, 0);
  loop.front() = 1;
  loop.push_back(3);
  EXPECT_EQ(FormatChoices(loop), "1, 0 (x15662), 3");
}

}  // namespace
}  // namespace vdsolab::sim
