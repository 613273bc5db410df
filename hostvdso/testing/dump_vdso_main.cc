// Writes the running kernel's [vdso] to a file, as --vdso-image reads it,
// optionally broken for containment tests:
//   dump_vdso OUT                     the image as mapped
//   dump_vdso OUT ud2                 ud2 right after clock_gettime's first
//                                     counter read (hres clocks crash)
//   dump_vdso OUT spin                jmp . there (hres clocks never return)
//   dump_vdso OUT version=6.13.0      the version note says 6.13.0

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "host/vdso_image.h"
#include "host/vdso_sites.h"

namespace vdsolab::hostvdso {
namespace {

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dump_vdso OUT [ud2|spin|version=X.Y.Z]\n");
    return 2;
  }
  absl::StatusOr<host::VdsoImage> img = host::ReadRunningVdsoImage();
  if (!img.ok()) {
    std::fprintf(stderr, "%s\n", std::string(img.status().message()).c_str());
    return 1;
  }
  std::vector<uint8_t> bytes = img->file;
  const std::string how = argc > 2 ? argv[2] : "";
  if (how == "ud2" || how == "spin") {
    const host::ElfSymbol* fn = img->Symbol("__vdso_clock_gettime");
    absl::StatusOr<host::CodeScan> scan = host::ScanVdsoCode(*img);
    if (fn == nullptr || !scan.ok()) return 1;
    for (const host::Site& s : scan->sites) {
      if (!s.counter || s.addr < fn->value || s.addr >= fn->value + fn->size) {
        continue;
      }
      // File offsets are addresses in a vDSO (vdso_image.h).
      const uint64_t at = s.addr + s.length;
      bytes[at] = how == "ud2" ? 0x0f : 0xeb;
      bytes[at + 1] = how == "ud2" ? 0x0b : 0xfe;
      break;
    }
  } else if (how.rfind("version=", 0) == 0) {
    int a = 0, b = 0, c = 0;
    std::sscanf(how.c_str() + 8, "%d.%d.%d", &a, &b, &c);
    const uint32_t code = static_cast<uint32_t>(a << 16 | b << 8 | c);
    const uint32_t old = *img->linux_version_code;
    for (size_t i = 0; i + 4 <= bytes.size(); ++i) {
      if (std::memcmp(bytes.data() + i, &old, 4) == 0 && i >= 12 &&
          std::memcmp(bytes.data() + i - 8, "Linux", 5) == 0) {
        std::memcpy(bytes.data() + i, &code, 4);
        break;
      }
    }
  }
  std::ofstream out(argv[1], std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return out ? 0 : 1;
}

}  // namespace
}  // namespace vdsolab::hostvdso

int main(int argc, char** argv) { return vdsolab::hostvdso::Main(argc, argv); }
