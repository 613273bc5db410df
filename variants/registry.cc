#include "variants/registry.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "variants/eras/eras.h"
#include "variants/gtod/gtod.h"
#include "variants/perf/perf.h"
#include "variants/upstream.h"

namespace vdsolab::variants {
namespace {

std::vector<const Variant*>& Plugins() {
  static auto* plugins = new std::vector<const Variant*>;
  return *plugins;
}

std::vector<const Variant*> BuiltIns() {
  std::vector<const Variant*> all = {&UpstreamVariant()};
  for (const auto& family : {EraVariants(), GtodVariants(), PerfVariants()}) {
    all.insert(all.end(), family.begin(), family.end());
  }
  return all;
}

}  // namespace

std::vector<const Variant*> AllVariants() {
  std::vector<const Variant*> all = BuiltIns();
  all.insert(all.end(), Plugins().begin(), Plugins().end());
  return all;
}

absl::StatusOr<const Variant*> FindVariant(std::string_view name) {
  std::vector<std::string> names;
  for (const Variant* v : AllVariants()) {
    if (v->name == name) return v;
    names.emplace_back(v->name);
  }
  return absl::NotFoundError(absl::StrFormat(
      "unknown variant \"%s\" (known: %s; see vdsolab variants)", name,
      absl::StrJoin(names, ", ")));
}

absl::Status RegisterVariant(const Variant* variant) {
  for (const Variant* v : AllVariants()) {
    if (v->name == variant->name) {
      return absl::AlreadyExistsError(absl::StrFormat(
          "a variant named \"%s\" exists already", variant->name));
    }
  }
  Plugins().push_back(variant);
  return absl::OkStatus();
}

}  // namespace vdsolab::variants
