// File: testing/runfile.h
//
// Where a test's data dependency is: under Bazel's TEST_SRCDIR, in this
// workspace; relative to the working directory when run by hand.

#ifndef VDSOLAB_TESTING_RUNFILE_H_
#define VDSOLAB_TESTING_RUNFILE_H_

#include <cstdlib>
#include <string>

namespace vdsolab::testing {

inline std::string Runfile(const std::string& path) {
  const char* dir = std::getenv("TEST_SRCDIR");
  return std::string(dir != nullptr ? dir : ".") + "/vdsolab/" + path;
}

}  // namespace vdsolab::testing

#endif  // VDSOLAB_TESTING_RUNFILE_H_
