// main() for vdsolab's property tests: GoogleTest, with rapidcheck defaulting
// to 10,000 cases per property. RC_PARAMS from the environment still wins
// (e.g. RC_PARAMS="seed=42" or "max_success=100000"); see docs/testing.md.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  std::string params;
  if (const char* env = std::getenv("RC_PARAMS")) params = env;
  if (params.find("max_success") == std::string::npos) {
    params += (params.empty() ? "" : " ") + std::string("max_success=10000");
    setenv("RC_PARAMS", params.c_str(), 1);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
