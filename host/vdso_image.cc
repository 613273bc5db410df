#include "host/vdso_image.h"

#include <elf.h>
#include <sys/auxv.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "host/live_vvar.h"

namespace vdsolab::host {
namespace {

// A vDSO is a few pages; anything much larger is not one.
constexpr uint64_t kMaxLoaded = 1u << 20;
constexpr uint64_t kMaxFile = 64u << 20;

bool InFile(const std::vector<uint8_t>& f, uint64_t off, uint64_t len) {
  return off <= f.size() && len <= f.size() - off;
}

template <class T>
T At(const std::vector<uint8_t>& f, uint64_t off) {
  T v;
  std::memcpy(&v, f.data() + off, sizeof(T));
  return v;
}

// The NUL-terminated string at `off` of a string table [base, base + size).
std::string StringAt(const std::vector<uint8_t>& f, uint64_t base,
                     uint64_t size, uint64_t off) {
  if (off >= size) return "";
  const char* s = reinterpret_cast<const char*>(f.data() + base + off);
  return std::string(s, strnlen(s, size - off));
}

absl::Status Bad(const std::string& what, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", what, why));
}

absl::Status ReadSymbols(VdsoImage& img, const Elf64_Shdr* sh, int n,
                         uint32_t type) {
  const std::vector<uint8_t>& f = img.file;
  for (int i = 0; i < n; ++i) {
    if (sh[i].sh_type != type || sh[i].sh_link >= static_cast<uint32_t>(n)) {
      continue;
    }
    const Elf64_Shdr& strtab = sh[sh[i].sh_link];
    if (!InFile(f, sh[i].sh_offset, sh[i].sh_size) ||
        !InFile(f, strtab.sh_offset, strtab.sh_size)) {
      continue;
    }
    const uint64_t count = sh[i].sh_size / sizeof(Elf64_Sym);
    for (uint64_t j = 0; j < count; ++j) {
      const auto s = At<Elf64_Sym>(f, sh[i].sh_offset + j * sizeof(Elf64_Sym));
      ElfSymbol sym;
      sym.name = StringAt(f, strtab.sh_offset, strtab.sh_size, s.st_name);
      if (sym.name.empty()) continue;
      sym.value = s.st_value;
      sym.size = s.st_size;
      sym.type = ELF64_ST_TYPE(s.st_info);
      sym.shndx = s.st_shndx;
      img.symbols.push_back(std::move(sym));
    }
  }
  return absl::OkStatus();
}

// The "Linux" note of type 0 in any SHT_NOTE section.
void ReadVersionNote(VdsoImage& img) {
  const std::vector<uint8_t>& f = img.file;
  for (const ElfSection& s : img.sections) {
    if (s.type != SHT_NOTE || !InFile(f, s.offset, s.size)) continue;
    uint64_t off = s.offset;
    const uint64_t end = s.offset + s.size;
    while (off + 12 <= end) {
      const uint32_t namesz = At<uint32_t>(f, off);
      const uint32_t descsz = At<uint32_t>(f, off + 4);
      const uint32_t type = At<uint32_t>(f, off + 8);
      const uint64_t name = off + 12;
      const uint64_t desc = name + ((namesz + 3ull) & ~3ull);
      const uint64_t next = desc + ((descsz + 3ull) & ~3ull);
      if (next > end) break;
      if (type == 0 && namesz == 6 && descsz == 4 &&
          std::memcmp(f.data() + name, "Linux", 6) == 0) {
        img.linux_version_code = At<uint32_t>(f, desc);
        return;
      }
      off = next;
    }
  }
}

}  // namespace

const ElfSection* VdsoImage::Section(const std::string& name) const {
  for (const ElfSection& s : sections) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const ElfSymbol* VdsoImage::Symbol(const std::string& name) const {
  for (const ElfSymbol& s : symbols) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

int VdsoImage::major() const {
  return linux_version_code ? static_cast<int>(*linux_version_code >> 16) : 0;
}
int VdsoImage::minor() const {
  return linux_version_code
             ? static_cast<int>((*linux_version_code >> 8) & 0xff)
             : 0;
}

std::string VdsoImage::Version() const {
  if (!linux_version_code) return "";
  return absl::StrFormat("%d.%d.%d", major(), minor(),
                         *linux_version_code & 0xff);
}

absl::StatusOr<VdsoImage> ParseVdsoImage(std::vector<uint8_t> file,
                                         const std::string& what) {
  VdsoImage img;
  img.file = std::move(file);
  const std::vector<uint8_t>& f = img.file;
  if (!InFile(f, 0, sizeof(Elf64_Ehdr))) return Bad(what, "not an ELF file");
  const auto eh = At<Elf64_Ehdr>(f, 0);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    return Bad(what, "not an ELF file");
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64) {
    return Bad(what,
               "not an x86-64 ELF image (vdsolab runs the 64-bit x86 vDSO, "
               "vdso64.so)");
  }
  if (eh.e_type != ET_DYN) return Bad(what, "not a shared object (ET_DYN)");
  // Program headers: the PT_LOAD segments, laid out at their addresses.
  if (eh.e_phentsize != sizeof(Elf64_Phdr) ||
      !InFile(f, eh.e_phoff,
              static_cast<uint64_t>(eh.e_phnum) * sizeof(Elf64_Phdr))) {
    return Bad(what, "program headers out of range");
  }
  uint64_t loaded_size = 0;
  for (int i = 0; i < eh.e_phnum; ++i) {
    const auto ph = At<Elf64_Phdr>(f, eh.e_phoff + i * sizeof(Elf64_Phdr));
    if (ph.p_type != PT_LOAD) continue;
    // The kernel links the vDSO at 0 and maps the file as it is: file
    // offsets are addresses (vdso2c checks the same).
    if (ph.p_memsz > kMaxLoaded || ph.p_vaddr > kMaxLoaded ||
        ph.p_vaddr != ph.p_offset || ph.p_filesz > ph.p_memsz ||
        !InFile(f, ph.p_offset, ph.p_filesz)) {
      return Bad(what, absl::StrFormat(
                           "PT_LOAD at %#x (%#x bytes) is not a vDSO segment",
                           ph.p_vaddr, ph.p_memsz));
    }
    if (ph.p_vaddr + ph.p_memsz > loaded_size) {
      loaded_size = ph.p_vaddr + ph.p_memsz;
    }
  }
  if (loaded_size == 0) return Bad(what, "no PT_LOAD segment");
  img.loaded.assign(loaded_size, 0);
  for (int i = 0; i < eh.e_phnum; ++i) {
    const auto ph = At<Elf64_Phdr>(f, eh.e_phoff + i * sizeof(Elf64_Phdr));
    if (ph.p_type != PT_LOAD) continue;
    std::memcpy(img.loaded.data() + ph.p_vaddr, f.data() + ph.p_offset,
                ph.p_filesz);
  }
  // Section headers and names.
  if (eh.e_shnum == 0 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      !InFile(f, eh.e_shoff,
              static_cast<uint64_t>(eh.e_shnum) * sizeof(Elf64_Shdr))) {
    return Bad(what,
               "no section headers (vdsolab needs .text and "
               ".altinstructions)");
  }
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), f.data() + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
  const int n = eh.e_shnum;
  if (eh.e_shstrndx >= n ||
      !InFile(f, sh[eh.e_shstrndx].sh_offset, sh[eh.e_shstrndx].sh_size)) {
    return Bad(what, "no section names");
  }
  const Elf64_Shdr& names = sh[eh.e_shstrndx];
  for (int i = 0; i < n; ++i) {
    ElfSection s;
    s.name = StringAt(f, names.sh_offset, names.sh_size, sh[i].sh_name);
    s.type = sh[i].sh_type;
    s.flags = sh[i].sh_flags;
    s.addr = sh[i].sh_addr;
    s.offset = sh[i].sh_offset;
    s.size = sh[i].sh_size;
    if ((s.flags & SHF_ALLOC) != 0 && s.type != SHT_NOBITS &&
        (s.addr > img.loaded.size() || s.size > img.loaded.size() - s.addr)) {
      return Bad(what, absl::StrFormat("section %s lies outside the loaded "
                                       "segments",
                                       s.name));
    }
    img.sections.push_back(std::move(s));
  }
  if (absl::Status s = ReadSymbols(img, sh.data(), n, SHT_DYNSYM); !s.ok()) {
    return s;
  }
  if (absl::Status s = ReadSymbols(img, sh.data(), n, SHT_SYMTAB); !s.ok()) {
    return s;
  }
  ReadVersionNote(img);
  return img;
}

absl::StatusOr<VdsoImage> ReadVdsoImageFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: cannot read the file", path));
  }
  std::vector<uint8_t> bytes;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0 || static_cast<uint64_t>(size) > kMaxFile) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not a vDSO image (%d bytes)", path, size));
  }
  in.seekg(0);
  bytes.resize(static_cast<size_t>(size));
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: cannot read the file", path));
  }
  return ParseVdsoImage(std::move(bytes), path);
}

absl::StatusOr<VdsoImage> ReadRunningVdsoImage() {
  absl::StatusOr<VdsoMappings> maps = FindVdsoMappings();
  if (!maps.ok()) return maps.status();
  const uintptr_t base = getauxval(AT_SYSINFO_EHDR);
  if (!maps->vdso || base == 0 || base != maps->vdso->start) {
    return absl::NotFoundError(
        "this process has no [vdso] mapping (no AT_SYSINFO_EHDR)");
  }
  const auto* p = reinterpret_cast<const uint8_t*>(maps->vdso->start);
  std::vector<uint8_t> bytes(p, p + (maps->vdso->end - maps->vdso->start));
  return ParseVdsoImage(std::move(bytes), "the running kernel's [vdso]");
}

}  // namespace vdsolab::host
