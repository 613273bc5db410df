#include "hostvdso/testing/test_images.h"

#include <sys/utsname.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_format.h"
#include "host/vdso_image.h"
#include "hostvdso/host_variant.h"

namespace vdsolab::hostvdso::testing {

std::string TestTmp() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

absl::StatusOr<const variants::Variant*> LoadRunning(std::string* skip) {
  skip->clear();
  struct utsname u;
  if (uname(&u) != 0 || std::string(u.machine) != "x86_64") {
    *skip = absl::StrFormat("not x86-64 (%s): no host vDSO vdsolab runs",
                            uname(&u) == 0 ? u.machine : "?");
    return absl::UnavailableError(*skip);
  }
  absl::StatusOr<host::VdsoImage> img = host::ReadRunningVdsoImage();
  if (!img.ok()) return img.status();  // x86-64 Linux has a vDSO: fail.
  const int v = img->major() * 100 + img->minor();
  if (v < 503 || (v >= 613 && v < 615)) {
    *skip = absl::StrFormat(
        "the running kernel is Linux %s, whose vDSO page layout vdsolab has "
        "no variant for",
        img->Version());
    return absl::UnavailableError(*skip);
  }
  return LoadHostVariant("");
}

absl::StatusOr<std::string> WriteRunningImage(const std::string& name) {
  absl::StatusOr<host::VdsoImage> img = host::ReadRunningVdsoImage();
  if (!img.ok()) return img.status();
  const std::string path = TestTmp() + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(img->file.data()),
            static_cast<std::streamsize>(img->file.size()));
  if (!out) return absl::InternalError("cannot write " + path);
  return path;
}

}  // namespace vdsolab::hostvdso::testing
