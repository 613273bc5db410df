#include "host/vdso_elf.h"

#include <sys/auxv.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "host/vdso_image.h"

namespace vdsolab::host {

namespace {

// The mapped vDSO, parsed from a copy of its first `image_size` bytes.
absl::StatusOr<VdsoImage> MappedImage(uint64_t image_size, uintptr_t* base) {
  *base = getauxval(AT_SYSINFO_EHDR);
  if (*base == 0) return absl::NotFoundError("no AT_SYSINFO_EHDR: no vDSO");
  const auto* p = reinterpret_cast<const uint8_t*>(*base);
  absl::StatusOr<VdsoImage> img = ParseVdsoImage(
      std::vector<uint8_t>(p, p + image_size), "the mapped vDSO");
  if (!img.ok()) return absl::FailedPreconditionError(img.status().message());
  return img;
}

}  // namespace

absl::StatusOr<VdsoSymbol> FindVdsoSymbol(const std::string& name,
                                          uint64_t image_size) {
  uintptr_t base = 0;
  absl::StatusOr<VdsoImage> img = MappedImage(image_size, &base);
  if (!img.ok()) return img.status();
  for (const ElfSymbol& s : img->symbols) {
    // Dynamic symbols come first, as the mapped image has no .symtab.
    if (s.name == name && s.shndx != 0) {
      return VdsoSymbol{base + s.value, s.size};
    }
  }
  return absl::NotFoundError(absl::StrFormat("the vDSO exports no %s", name));
}

absl::StatusOr<VdsoSymbol> FindVdsoText(uint64_t image_size) {
  uintptr_t base = 0;
  absl::StatusOr<VdsoImage> img = MappedImage(image_size, &base);
  if (!img.ok()) return img.status();
  const ElfSection* text = img->Section(".text");
  if (text == nullptr) {
    return absl::NotFoundError("the vDSO has no .text section");
  }
  return VdsoSymbol{base + text->addr, text->size};
}

}  // namespace vdsolab::host
