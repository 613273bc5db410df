// Both Debian trees through every built-in scenario (scenarios/*.toml),
// random and exhaustive, against the built-in reader of their era (6.1
// tree: "6.1"; 6.12 tree: "6.10"): a tree shows no defect anywhere, and a
// documented kernel behaviour only where the built-in reader of its era
// shows the same one (the era semantics come from the tree). Every
// scenario is printed with both tables. Namespace readers are the tree's
// own do_hres_timens(); the built-in reader's run outside the namespace.

#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ktree/testing/test_trees.h"
#include "sim/run.h"
#include "sim/scenario_toml.h"
#include "variants/registry.h"

namespace vdsolab::ktree {
namespace {

std::vector<std::string> BuiltInScenarios() {
  const char* root = std::getenv("TEST_SRCDIR");
  const std::string dir =
      std::string(root != nullptr ? root : ".") + "/vdsolab/scenarios";
  std::vector<std::string> files;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() > 5 && name.substr(name.size() - 5) == ".toml") {
        files.push_back(dir + "/" + name);
      }
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string Row(const sim::Outcome& o) {
  std::string s;
  for (int i = 0; i < sim::kNumProperties; ++i) {
    const sim::PropertyStats& p = o.stats[static_cast<size_t>(i)];
    s += std::string(sim::PropertyName(static_cast<sim::Property>(i + 1))) +
         " " + std::to_string(p.checked) + "/" + std::to_string(p.defects) +
         "/" + std::to_string(p.known_kernel) + "  ";
  }
  return s;
}

struct Pair {
  const char* tarball;
  const char* builtin;
};

class EveryScenario : public ::testing::TestWithParam<Pair> {};

TEST_P(EveryScenario, TreeIsCleanWhereItsEraIs) {
  const Pair& pair = GetParam();
  const variants::Variant* tree = testing::BuildAndLoad(pair.tarball);
  ASSERT_NE(tree, nullptr);
  absl::StatusOr<const variants::Variant*> builtin =
      variants::FindVariant(pair.builtin);
  ASSERT_TRUE(builtin.ok());
  const std::vector<std::string> files = BuiltInScenarios();
  ASSERT_GE(files.size(), 9u);
  int exhaustive = 0;
  for (const std::string& file : files) {
    absl::StatusOr<sim::Scenario> s = sim::LoadScenarioFile(file);
    ASSERT_TRUE(s.ok()) << s.status();
    exhaustive += s->run.strategy == sim::Strategy::kExhaustive;
    sim::RunOptions options;
    options.replays = sim::ReplayPolicy::kNone;
    sim::Scenario for_tree = *s;
    for_tree.run.reader = std::string(tree->name);
    sim::Scenario for_builtin = *s;
    for_builtin.run.reader = pair.builtin;
    // The built-in era readers have no TIMENS path (the trees run their
    // own): theirs read in the initial namespace, as compare runs them.
    if (!(*builtin)->timens) {
      for (sim::ReaderSpec& r : for_builtin.readers) r.timens = false;
    }
    absl::StatusOr<sim::Outcome> t = sim::Run(for_tree, *tree, options);
    absl::StatusOr<sim::Outcome> b = sim::Run(for_builtin, **builtin, options);
    ASSERT_TRUE(t.ok() && b.ok()) << s->name;
    std::printf("%s on %s\n  tree    %s\n  builtin %s\n", tree->name.data(),
                s->name.c_str(), Row(*t).c_str(), Row(*b).c_str());
    EXPECT_TRUE(t->complete) << s->name;
    for (int i = 0; i < sim::kNumProperties; ++i) {
      const sim::PropertyStats& tp = t->stats[static_cast<size_t>(i)];
      const sim::PropertyStats& bp = b->stats[static_cast<size_t>(i)];
      const char* property =
          sim::PropertyName(static_cast<sim::Property>(i + 1));
      EXPECT_EQ(tp.defects, 0u) << s->name << " " << property;
      if (bp.known_kernel == 0) {
        EXPECT_EQ(tp.known_kernel, 0u) << s->name << " " << property;
      }
      if (bp.checked > 0) {
        EXPECT_GT(tp.checked, 0u) << s->name << " " << property;
      }
    }
  }
  EXPECT_GE(exhaustive, 1);
}

INSTANTIATE_TEST_SUITE_P(Trees, EveryScenario,
                         ::testing::Values(Pair{testing::kTarball61, "6.1"},
                                           Pair{testing::kTarball612, "6.10"}),
                         [](const ::testing::TestParamInfo<Pair>& param) {
                           return param.index == 0 ? std::string("tree_6_1")
                                                   : std::string("tree_6_12");
                         });

}  // namespace
}  // namespace vdsolab::ktree
