// The registry of live pages (vdso::VvarPage::Find(), by which the host
// vDSO's process and plugins' ABI find the memfd behind a page) against a
// model: after any sequence of creating pages of both kinds (plain, and
// with a time-namespace view) and destroying them in any order, Find()
// knows exactly the live pages by their data(), each with its own id and
// fd, and nothing else (the namespace views are not pages of their own).

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstddef>
#include <memory>
#include <set>
#include <vector>

#include "vdso/vvar_page.h"

namespace vdsolab {
namespace {

RC_GTEST_PROP(VvarRegistry, FindKnowsExactlyTheLivePages, ()) {
  std::vector<std::unique_ptr<vdso::VvarPage>> live;
  std::vector<const uint8_t*> gone;
  const int steps = *rc::gen::inRange(1, 24);
  int with_view = 0;
  for (int i = 0; i < steps; ++i) {
    if (live.empty() || *rc::gen::inRange(0, 3) != 0) {
      const bool timens = *rc::gen::arbitrary<bool>();
      with_view += timens ? 1 : 0;
      auto page = timens ? vdso::VvarPage::CreateWithTimensView()
                         : vdso::VvarPage::Create();
      RC_ASSERT(page.ok());
      live.push_back(std::move(*page));
    } else {
      const size_t at = *rc::gen::inRange<size_t>(0, live.size());
      gone.push_back(live[at]->data());
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
    }
    std::set<uint64_t> ids;
    std::set<int> fds;
    for (const auto& p : live) {
      RC_ASSERT(vdso::VvarPage::Find(p->data()) == p.get());
      if (p->timens_data() != nullptr) {
        RC_ASSERT(vdso::VvarPage::Find(p->timens_data()) == nullptr);
      }
      ids.insert(p->id());
      fds.insert(p->fd());
    }
    RC_ASSERT(ids.size() == live.size());
    RC_ASSERT(fds.size() == live.size());
    for (const uint8_t* data : gone) {
      // An address a live page reuses is that page's now.
      const vdso::VvarPage* found = vdso::VvarPage::Find(data);
      bool reused = false;
      for (const auto& p : live) reused |= p->data() == data;
      RC_ASSERT(found == nullptr || reused);
    }
  }
  RC_CLASSIFY(with_view > 0, "pages with a namespace view");
  RC_CLASSIFY(!gone.empty(), "pages destroyed");
}

}  // namespace
}  // namespace vdsolab
