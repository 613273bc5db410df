// File: host/vdso_image.h
//
// A vDSO image as an ELF file in memory: the running kernel's [vdso]
// mapping, or a vdso64.so / vdso64.so.dbg from a kernel build. What
// vdsolab needs of it: the loadable bytes laid out at their link
// addresses (the vDSO is linked at 0, its data pages below it), the
// sections (.text, .altinstructions, .altinstr_replacement), the symbols
// (.dynsym, and .symtab in a .dbg file: vvar_page, pvclock_page, ...), and
// the Linux version note (LINUX_VERSION_CODE, which every x86 vDSO
// carries in its .note section).
//
// Every offset and size in the file is checked before it is used: a
// truncated or hostile file is an error, never an out-of-bounds read.

#ifndef VDSOLAB_HOST_VDSO_IMAGE_H_
#define VDSOLAB_HOST_VDSO_IMAGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace vdsolab::host {

struct ElfSection {
  std::string name;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t addr = 0;    // Link address (in `loaded` coordinates).
  uint64_t offset = 0;  // In the file.
  uint64_t size = 0;
};

struct ElfSymbol {
  std::string name;  // Without the @version suffix.
  uint64_t value = 0;
  uint64_t size = 0;
  uint8_t type = 0;  // STT_*
  uint16_t shndx = 0;
};

struct VdsoImage {
  std::vector<uint8_t> file;  // The ELF file as read.
  // PT_LOAD segments at their addresses. The vDSO is linked at 0 and its
  // file offsets are its addresses (ParseVdsoImage checks), so an address
  // here is also an offset into a mapping of the image.
  std::vector<uint8_t> loaded;
  std::vector<ElfSection> sections;
  std::vector<ElfSymbol> symbols;  // .dynsym, then .symtab.
  // The "Linux" note of type 0: LINUX_VERSION_CODE (major << 16 |
  // minor << 8 | min(sublevel, 255)).
  std::optional<uint32_t> linux_version_code;

  const ElfSection* Section(const std::string& name) const;
  // The first symbol of that name (dynamic symbols first).
  const ElfSymbol* Symbol(const std::string& name) const;
  // "6.18.44" from the version note; "" without one.
  std::string Version() const;
  int major() const;
  int minor() const;
};

// Parses an ELF64 x86-64 shared object; `what` names it in messages
// ("/tmp/vdso64.so", "the running kernel's [vdso]").
absl::StatusOr<VdsoImage> ParseVdsoImage(std::vector<uint8_t> file,
                                         const std::string& what);

// Reads and parses a file.
absl::StatusOr<VdsoImage> ReadVdsoImageFile(const std::string& path);

// The running kernel's [vdso] mapping, copied and parsed (NotFound where
// the process has none).
absl::StatusOr<VdsoImage> ReadRunningVdsoImage();

}  // namespace vdsolab::host

#endif  // VDSOLAB_HOST_VDSO_IMAGE_H_
