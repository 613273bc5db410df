#include "ktree/testing/test_trees.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "ktree/internal/fs.h"
#include "ktree/internal/source.h"
#include "ktree/load.h"

namespace vdsolab::ktree::testing {

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  static const std::string base =
      tmp != nullptr && *tmp != '\0'
          ? std::string(tmp)
          : "/tmp/vdsolab-ktree-test." + std::to_string(getpid());
  return base + "/" + name;
}

absl::StatusOr<std::string> TreeRoot(const std::string& tree) {
  absl::StatusOr<internal::TreeSource> src = internal::ResolveTree(
      tree, internal::JoinPath(TestDir("ktree-cache"), "ktree-v1"));
  if (!src.ok()) return src.status();
  return src->root;
}

absl::StatusOr<BuiltVariant> Build(const std::string& tree,
                                   const std::vector<std::string>& patches,
                                   const std::string& cc) {
  BuildOptions o;
  o.tree = tree;
  o.patches = patches;
  o.cache_dir = TestDir("ktree-cache");
  o.cc = cc;
  return BuildTreeVariant(o);
}

const variants::Variant* BuildAndLoad(const std::string& tree,
                                      const std::vector<std::string>& patches,
                                      BuiltVariant* built) {
  absl::StatusOr<BuiltVariant> b = Build(tree, patches);
  EXPECT_TRUE(b.ok()) << b.status() << "\n" << BuildLogOf(b.status());
  if (!b.ok()) return nullptr;
  if (built != nullptr) *built = *b;
  absl::StatusOr<const variants::Variant*> v = LoadTreeVariant(*b);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : nullptr;
}

PublishedPage::PublishedPage(const variants::Variant* writer)
    : writer_(writer) {
  absl::StatusOr<std::unique_ptr<vdso::VvarPage>> p = vdso::VvarPage::Create();
  EXPECT_TRUE(p.ok()) << p.status();
  page_ = std::move(*p);
}

void PublishedPage::UpdateVsyscall(const timekeeper::Timekeeper& tk) {
  page_->Apply(writer_->build_update(tk, seq_, variants::PublishContext{}));
  seq_ += 2;
}

void PublishedPage::Start(const timekeeper::Clocksource& cs, int hz,
                          uint64_t c0, const Timespec64& wall,
                          const Timespec64& boot) {
  tk_ = std::make_unique<timekeeper::Timekeeping>(cs, hz, this);
  tk_->Init(c0, wall, boot);
}

std::optional<ClockResult> PublishedPage::Read(variants::SimReader& reader,
                                               ClockId clock,
                                               FixedCounterHooks& hooks) {
  vdso::HookedAccess access(page_->data(), &hooks);
  return reader.Call(access, page_->data(), clock);
}

}  // namespace vdsolab::ktree::testing
