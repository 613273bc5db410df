// A plugin's record (variants/plugin/vdsolab_plugin.h) reaches the variant
// vdsolab makes of it whole: for every plugin the tree builds (the
// examples of both ABI versions and the misbehaving ones the containment
// tests use), each field the record declares (name, provenance, summary,
// the clocks it serves, v2's era and origin) is what `vdsolab variants`,
// reports, JSON and replay files then say of it. The record is read here
// straight from the shared object's entry point, independently of the
// loader's copy of it; a field dropped on the way (the variant then says
// "" or "(plugin)") changes no clock's value, so no reader property would
// notice.

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "testing/runfile.h"
#include "variants/plugin/loader.h"
#include "variants/plugin/vdsolab_plugin.h"
#include "variants/variant.h"

namespace vdsolab::variants {
namespace {

using ::vdsolab::testing::Runfile;

// The fields both versions share, as the plugin declares them.
struct Declared {
  int abi = 0;
  std::string name, provenance, summary;
  std::vector<ClockId> clocks;
  const char* era = nullptr;               // v2 on.
  const char* origin = nullptr;            // v2 on.
  const vdsolab_own_clock* own = nullptr;  // v4 only.
  uint32_t n_own = 0;
};

template <class R>
Declared Common(const R& p, int abi) {
  Declared d;
  d.abi = abi;
  d.name = p.name;
  d.provenance = p.provenance != nullptr ? p.provenance : "";
  d.summary = p.summary != nullptr ? p.summary : "";
  d.clocks.assign(p.vdso_clocks, p.vdso_clocks + p.n_vdso_clocks);
  return d;
}

// The record from the entry point the loader looks for first (v2, then v1).
Declared ReadDeclared(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(h, nullptr) << dlerror();
  if (h == nullptr) return {};
  using V4 = const vdsolab_plugin4* (*)();
  using V2 = const vdsolab_plugin2* (*)();
  using V1 = const vdsolab_plugin* (*)();
  if (auto v4 = reinterpret_cast<V4>(dlsym(h, "vdsolab_plugin_v4"))) {
    const vdsolab_plugin4* p = v4();
    Declared d = Common(p->v3.v2, 4);
    d.era = p->v3.v2.era;
    d.origin = p->v3.v2.origin;
    d.own = p->own_clocks;
    d.n_own = p->n_own_clocks;
    // The own clocks are answered from the page too.
    for (uint32_t i = 0; i < d.n_own; ++i) d.clocks.push_back(d.own[i].id);
    return d;
  }
  if (auto v2 = reinterpret_cast<V2>(dlsym(h, "vdsolab_plugin_v2"))) {
    const vdsolab_plugin2* p = v2();
    Declared d = Common(*p, 2);
    d.era = p->era;
    d.origin = p->origin;
    return d;
  }
  auto v1 = reinterpret_cast<V1>(dlsym(h, "vdsolab_plugin_v1"));
  EXPECT_NE(v1, nullptr) << path << ": no entry point";
  if (v1 == nullptr) return {};
  return Common(*v1(), 1);
}

TEST(PluginRecord, EveryDeclaredFieldReachesTheVariant) {
  const std::vector<std::string> plugins = {
      "libexample_plugin.so",      "libexample_plugin_v2.so",
      "libmisbehaving_segv.so",    "libmisbehaving_fpe.so",
      "libmisbehaving_abort.so",   "libmisbehaving_spin.so",
      "libmisbehaving_recurse.so", "libown_clock_plugin.so",
  };
  int versions[5] = {0, 0, 0, 0, 0};
  for (const std::string& file : plugins) {
    SCOPED_TRACE(file);
    const std::string path = Runfile("examples/plugin/" + file);
    const Declared want = ReadDeclared(path);
    ASSERT_FALSE(want.name.empty());
    ++versions[want.abi];
    absl::StatusOr<const Variant*> v = LoadPluginVariant(path);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ((*v)->name, want.name);
    // A plugin that declares none gets the loader's placeholder instead.
    EXPECT_EQ((*v)->provenance,
              want.provenance.empty() ? "(plugin)" : want.provenance);
    EXPECT_EQ((*v)->summary, want.summary);
    EXPECT_EQ((*v)->vdso_clocks, want.clocks);
    const PluginInfo* info = FindPluginInfo(*v);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->path, path);
    EXPECT_EQ(info->abi_version, want.abi);
    EXPECT_EQ(info->era, want.era != nullptr ? want.era : "");
    EXPECT_EQ(info->origin, want.origin != nullptr ? want.origin : "");
    // Version 4's own clocks, each as its kind says.
    ASSERT_EQ((*v)->own_clocks.size(), want.n_own);
    for (uint32_t i = 0; i < want.n_own; ++i) {
      const ClockDef& c = (*v)->own_clocks[i];
      EXPECT_EQ(c.id, want.own[i].id);
      EXPECT_EQ(c.name, want.own[i].name);
      const bool alias = want.own[i].kind == VDSOLAB_OWN_SAME_AS;
      EXPECT_EQ(c.same_as, alias ? want.own[i].same_as : -1);
      EXPECT_EQ(c.kind,
                alias ? ClockKind::kVariantSyscall : ClockKind::kUserspace);
    }
  }
  // ABI versions 1, 2 and 4 were among them.
  EXPECT_GT(versions[1], 0);
  EXPECT_GT(versions[2], 0);
  EXPECT_GT(versions[4], 0);
}

// A file that is not a loadable shared object is refused with what the
// dynamic loader says of it (dlerror(), asked here directly), whatever
// the reason: a missing file, a directory, text, an empty file.
TEST(PluginRecord, AFileDlopenRefusesIsRefusedWithTheLoadersReason) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  const std::string text = dir + "/not_a_plugin.so";
  const std::string empty = dir + "/empty_plugin.so";
  std::FILE* f = std::fopen(text.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("int x;\n", f);
  std::fclose(f);
  f = std::fopen(empty.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  for (const std::string& path :
       {dir + "/no_such_plugin.so", dir, text, empty}) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_EQ(h, nullptr) << path;
    const char* why = dlerror();
    ASSERT_NE(why, nullptr) << path;
    const std::string reason = why;
    absl::StatusOr<const Variant*> v = LoadPluginVariant(path);
    ASSERT_FALSE(v.ok()) << path;
    EXPECT_NE(std::string(v.status().message()).find(reason), std::string::npos)
        << path << ": " << v.status().message() << "\nwanted: " << reason;
  }
}

}  // namespace
}  // namespace vdsolab::variants
