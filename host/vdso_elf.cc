#include "host/vdso_elf.h"

#include <elf.h>
#include <sys/auxv.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace vdsolab::host {

namespace {

struct Image {
  uintptr_t base = 0;
  uintptr_t bias = 0;  // Add to a linked address to get a mapped one.
  const Elf64_Ehdr* eh = nullptr;
  const Elf64_Shdr* sh = nullptr;
};

absl::StatusOr<Image> OpenImage(uint64_t image_size) {
  Image img;
  const uintptr_t base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return absl::NotFoundError("no AT_SYSINFO_EHDR: no vDSO");
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(base);
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64) {
    return absl::FailedPreconditionError("the vDSO is not a 64-bit ELF image");
  }
  const auto in_image = [&](uint64_t off, uint64_t len) {
    return off <= image_size && len <= image_size - off;
  };
  // The load bias: the first PT_LOAD's address as linked vs as mapped.
  if (!in_image(eh->e_phoff,
                static_cast<uint64_t>(eh->e_phnum) * sizeof(Elf64_Phdr))) {
    return absl::FailedPreconditionError("vDSO program headers out of range");
  }
  const auto* ph = reinterpret_cast<const Elf64_Phdr*>(base + eh->e_phoff);
  uintptr_t bias = base;
  for (int i = 0; i < eh->e_phnum; ++i) {
    if (ph[i].p_type == PT_LOAD) {
      bias = base - ph[i].p_vaddr + ph[i].p_offset;
      break;
    }
  }
  if (!in_image(eh->e_shoff,
                static_cast<uint64_t>(eh->e_shnum) * sizeof(Elf64_Shdr))) {
    return absl::FailedPreconditionError("vDSO section headers are not mapped");
  }
  img.base = base;
  img.bias = bias;
  img.eh = eh;
  img.sh = reinterpret_cast<const Elf64_Shdr*>(base + eh->e_shoff);
  return img;
}

bool InImage(uint64_t image_size, uint64_t off, uint64_t len) {
  return off <= image_size && len <= image_size - off;
}

}  // namespace

absl::StatusOr<VdsoSymbol> FindVdsoSymbol(const std::string& name,
                                          uint64_t image_size) {
  absl::StatusOr<Image> img = OpenImage(image_size);
  if (!img.ok()) return img.status();
  const uintptr_t base = img->base;
  const Elf64_Ehdr* eh = img->eh;
  const Elf64_Shdr* sh = img->sh;
  const auto in_image = [&](uint64_t off, uint64_t len) {
    return InImage(image_size, off, len);
  };
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum) continue;
    const Elf64_Shdr& strtab = sh[sh[i].sh_link];
    if (!in_image(sh[i].sh_offset, sh[i].sh_size) ||
        !in_image(strtab.sh_offset, strtab.sh_size)) {
      continue;
    }
    const auto* syms =
        reinterpret_cast<const Elf64_Sym*>(base + sh[i].sh_offset);
    const char* strs = reinterpret_cast<const char*>(base + strtab.sh_offset);
    const size_t count = sh[i].sh_size / sizeof(Elf64_Sym);
    for (size_t j = 0; j < count; ++j) {
      if (syms[j].st_name >= strtab.sh_size) continue;
      if (name == std::string(strs + syms[j].st_name,
                              strnlen(strs + syms[j].st_name,
                                      strtab.sh_size - syms[j].st_name))) {
        return VdsoSymbol{img->bias + syms[j].st_value, syms[j].st_size};
      }
    }
  }
  return absl::NotFoundError(absl::StrFormat("the vDSO exports no %s", name));
}

absl::StatusOr<VdsoSymbol> FindVdsoText(uint64_t image_size) {
  absl::StatusOr<Image> img = OpenImage(image_size);
  if (!img.ok()) return img.status();
  const Elf64_Ehdr* eh = img->eh;
  if (eh->e_shstrndx >= eh->e_shnum) {
    return absl::FailedPreconditionError("the vDSO has no section names");
  }
  const Elf64_Shdr& names = img->sh[eh->e_shstrndx];
  if (!InImage(image_size, names.sh_offset, names.sh_size)) {
    return absl::FailedPreconditionError("vDSO section names out of range");
  }
  const char* strs = reinterpret_cast<const char*>(img->base + names.sh_offset);
  for (int i = 0; i < eh->e_shnum; ++i) {
    const Elf64_Shdr& s = img->sh[i];
    if (s.sh_name >= names.sh_size) continue;
    if (std::string(strs + s.sh_name,
                    strnlen(strs + s.sh_name, names.sh_size - s.sh_name)) ==
            ".text" &&
        InImage(image_size, s.sh_offset, s.sh_size)) {
      return VdsoSymbol{img->base + s.sh_offset, s.sh_size};
    }
  }
  return absl::NotFoundError("the vDSO has no .text section");
}

}  // namespace vdsolab::host
