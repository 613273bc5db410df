// File: hostvdso/testing/test_images.h
//
// What the host variant's tests share: the running kernel's image as a
// variant, failing where this machine should have a usable vDSO (x86-64
// Linux whose vDSO layout vdsolab knows) and skipping, with the reason,
// where it cannot; and that image written to a file for --vdso-image.

#ifndef VDSOLAB_HOSTVDSO_TESTING_TEST_IMAGES_H_
#define VDSOLAB_HOSTVDSO_TESTING_TEST_IMAGES_H_

#include <gtest/gtest.h>

#include <string>

#include "absl/status/statusor.h"
#include "variants/variant.h"

namespace vdsolab::hostvdso::testing {

// The "host" variant. On an error, *skip is the reason to skip (not
// x86-64, or a kernel whose vDSO layout vdsolab has no variant for), or
// empty when the test must fail.
absl::StatusOr<const variants::Variant*> LoadRunning(std::string* skip);

// The running kernel's [vdso] bytes written to $TEST_TMPDIR/<name>.
absl::StatusOr<std::string> WriteRunningImage(const std::string& name);

// $TEST_TMPDIR (or /tmp).
std::string TestTmp();

}  // namespace vdsolab::hostvdso::testing

// Declares `const variants::Variant* var`: the host variant, or the test
// fails (this machine should have one) or is skipped (with the reason).
#define VDSOLAB_HOST_VARIANT_OR_SKIP(var)                            \
  const ::vdsolab::variants::Variant* var = nullptr;                 \
  do {                                                               \
    std::string vdsolab_skip_;                                       \
    absl::StatusOr<const ::vdsolab::variants::Variant*> vdsolab_v_ = \
        ::vdsolab::hostvdso::testing::LoadRunning(&vdsolab_skip_);   \
    if (!vdsolab_v_.ok()) {                                          \
      if (vdsolab_skip_.empty()) FAIL() << vdsolab_v_.status();      \
      GTEST_SKIP() << vdsolab_skip_;                                 \
    }                                                                \
    var = *vdsolab_v_;                                               \
  } while (0)

#endif  // VDSOLAB_HOSTVDSO_TESTING_TEST_IMAGES_H_
