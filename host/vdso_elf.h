// File: host/vdso_elf.h
//
// Finds a symbol of this process's vDSO image (the ELF at
// getauxval(AT_SYSINFO_EHDR)) through its mapped section headers, as a
// mapped address (host/vdso_image.h parses the copy).

#ifndef VDSOLAB_HOST_VDSO_ELF_H_
#define VDSOLAB_HOST_VDSO_ELF_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace vdsolab::host {

struct VdsoSymbol {
  uintptr_t address = 0;  // In this process's mapped vDSO.
  uint64_t size = 0;
};

// `name` (e.g. "__vdso_clock_gettime") in the mapped vDSO; `image_size`
// bounds every read of the image.
absl::StatusOr<VdsoSymbol> FindVdsoSymbol(const std::string& name,
                                          uint64_t image_size);

// The mapped vDSO's .text section: [start, start + size).
absl::StatusOr<VdsoSymbol> FindVdsoText(uint64_t image_size);

}  // namespace vdsolab::host

#endif  // VDSOLAB_HOST_VDSO_ELF_H_
