#include "hostvdso/internal/geometry.h"

#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "vdso/datapage.h"

namespace vdsolab::hostvdso::internal {
namespace {

constexpr int64_t kPage = static_cast<int64_t>(vdso::kPageSize);

const char* RoleName(int sim) {
  switch (sim) {
    case kSimTime:
      return "time";
    case kSimTimens:
      return "timens";
    case kSimRng:
      return "rng";
    case kSimArch:
      return "arch";
    case kSimPvclock:
      return "pvclock";
    case kSimHvclock:
      return "hvclock";
    default:
      return "?";
  }
}

// The symbols that name a data page, with the simulated page of its role.
struct PageSymbol {
  const char* name;
  int sim;
};
constexpr PageSymbol kPageSymbols[] = {
    {"vvar_page", kSimTime},        {"vdso_u_time_data", kSimTime},
    {"timens_page", kSimTimens},    {"vdso_u_rng_data", kSimRng},
    {"vdso_u_arch_data", kSimArch}, {"pvclock_page", kSimPvclock},
    {"hvclock_page", kSimHvclock},
};

// The arrangement of a kernel version, lowest page first.
std::vector<int> VersionArrangement(int major, int minor) {
  const int v = major * 100 + minor;
  if (v >= 613) {
    return {kSimTime, kSimTimens, kSimRng, kSimArch, kSimPvclock, kSimHvclock};
  }
  if (v >= 506) return {kSimTime, kSimPvclock, kSimHvclock, kSimTimens};
  if (v >= 503) return {kSimTime, kSimPvclock, kSimHvclock};
  return {};
}

}  // namespace

std::string Geometry::Describe() const {
  std::vector<std::string> parts;
  for (int i = 0; i < view_pages; ++i) {
    const int64_t at = (i - view_pages) * kPage;
    parts.push_back(absl::StrFormat(
        "%s %s%#x", sim_page[i] < 0 ? "unmapped" : RoleName(sim_page[i]),
        at < 0 ? "-" : "", at < 0 ? -at : at));
  }
  return absl::StrJoin(parts, ", ");
}

absl::StatusOr<Geometry> FindGeometry(const host::VdsoImage& image) {
  Geometry g;
  // 1. Symbols: page-aligned, below the image.
  std::map<int64_t, int> by_symbol;  // Address -> simulated page.
  std::vector<std::string> used;
  for (const PageSymbol& ps : kPageSymbols) {
    const host::ElfSymbol* s = image.Symbol(ps.name);
    if (s == nullptr) continue;
    const auto at = static_cast<int64_t>(s->value);
    if (at >= 0 || at % kPage != 0 || at < -kMaxViewPages * kPage) {
      return absl::InvalidArgumentError(
          absl::StrFormat("symbol %s = %#x is not a data page below the image",
                          ps.name, s->value));
    }
    by_symbol[at] = ps.sim;
    used.push_back(ps.name);
  }
  const std::vector<int> arrangement =
      VersionArrangement(image.major(), image.minor());
  if (!by_symbol.empty()) {
    int64_t lowest = 0;
    for (const auto& [at, sim] : by_symbol) lowest = std::min(lowest, at);
    // The version's arrangement fills pages the symbols leave unnamed
    // (6.13+ names no time namespace page), where it has that many.
    const int pages = static_cast<int>(-lowest / kPage);
    g.view_pages = std::max(pages, static_cast<int>(arrangement.size()));
    if (g.view_pages > kMaxViewPages) {
      return absl::InvalidArgumentError("the data pages span too many pages");
    }
    for (int i = 0; i < g.view_pages; ++i) {
      const int64_t at = (i - g.view_pages) * kPage;
      auto it = by_symbol.find(at);
      if (it != by_symbol.end()) {
        g.sim_page[i] = static_cast<int8_t>(it->second);
      } else if (arrangement.size() == static_cast<size_t>(g.view_pages)) {
        g.sim_page[i] =
            static_cast<int8_t>(arrangement[static_cast<size_t>(i)]);
      }
    }
    g.source = "the image's symbols (" + absl::StrJoin(used, ", ") + ")";
    return g;
  }
  // 2. The version's arrangement.
  if (arrangement.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "where Linux %s keeps the vDSO's data pages is not known to vdsolab "
        "(the generic x86 vDSO begins with 5.3), and the image has no "
        "symbols saying so (a vdso64.so.dbg file has them)",
        image.Version().empty() ? "(no version note)" : image.Version()));
  }
  g.view_pages = static_cast<int>(arrangement.size());
  for (size_t i = 0; i < arrangement.size(); ++i) {
    g.sim_page[i] = static_cast<int8_t>(arrangement[i]);
  }
  g.source = absl::StrFormat("the Linux %d.%d arrangement", image.major(),
                             image.minor());
  return g;
}

absl::Status CheckReferences(const Geometry& g, const host::CodeScan& scan,
                             uint32_t first_record) {
  const int64_t bottom = -g.view_pages * kPage;
  bool record = false;
  for (const host::RipReference& r : scan.references) {
    if (r.target >= 0) continue;  // Inside the image.
    if (r.target < bottom) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the code at %#x refers to %#x below the image, below the data "
          "pages vdsolab maps there (%s)",
          r.insn, -r.target, g.Describe()));
    }
    const int page = static_cast<int>((r.target - bottom) / kPage);
    if (g.sim_page[page] < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the code at %#x refers to -%#x, a page vdsolab does not map (%s)",
          r.insn, -r.target, g.Describe()));
    }
    if (g.sim_page[page] == kSimTime &&
        r.target - (bottom + page * kPage) == first_record) {
      record = true;
    }
  }
  if (!record) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "no code refers to the first clock record where the layout has it "
        "(the time page + %d; data pages: %s)",
        first_record, g.Describe()));
  }
  return absl::OkStatus();
}

}  // namespace vdsolab::hostvdso::internal
