// main() for vdsolab's property tests: GoogleTest, with rapidcheck
// defaulting to 10,000 cases per property and a fixed seed, printed, so
// that `bazel test //...` runs the same cases every time and a failure
// comes back. RC_PARAMS from the environment still wins (e.g.
// RC_PARAMS="seed=42" or "max_success=100000"); the soak configuration
// (--config=soak sets VDSOLAB_SOAK=1) draws a fresh seed and runs ten
// times the cases, printing the seed to pin. See docs/testing.md.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

// The seed `bazel test //...` uses unless told otherwise.
constexpr uint64_t kFixedSeed = 20261130;

uint64_t FreshSeed() {
  uint64_t seed = 0;
  std::ifstream random("/dev/urandom", std::ios::binary);
  random.read(reinterpret_cast<char*>(&seed), sizeof seed);
  return seed;
}

}  // namespace

int main(int argc, char** argv) {
  std::string params;
  if (const char* env = std::getenv("RC_PARAMS")) params = env;
  const bool soak = std::getenv("VDSOLAB_SOAK") != nullptr;
  if (params.find("max_success") == std::string::npos) {
    params += (params.empty() ? "" : " ") + std::string("max_success=10000");
  }
  if (soak) {
    // Ten times the cases the test asks for.
    const size_t at = params.find("max_success=") + 12;
    const uint64_t n = std::strtoull(params.c_str() + at, nullptr, 10);
    params.replace(at, params.find(' ', at) - at, std::to_string(n * 10));
  }
  if (params.find("seed") == std::string::npos) {
    const uint64_t seed = soak ? FreshSeed() : kFixedSeed;
    params += " seed=" + std::to_string(seed);
  }
  setenv("RC_PARAMS", params.c_str(), 1);
  std::printf("rapidcheck: RC_PARAMS=\"%s\"%s\n", params.c_str(),
              soak ? " (soak: pin a failing seed with RC_PARAMS=seed=N)" : "");
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
