// SHA-256 against the FIPS 180-4 / NIST example vectors, with the portable
// and the SHA-extension block functions, and split updates.

#include "common/sha256.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace vdsolab {
namespace {

struct Vector {
  std::string message;
  const char* digest;
};

std::vector<Vector> Vectors() {
  return {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc",
       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmn"
       "opjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
      {std::string(1000000, 'a'),
       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
}

std::string Digest(const std::string& m, bool accelerated, size_t chunk) {
  Sha256 h;
  h.UseAcceleration(accelerated);
  for (size_t i = 0; i < m.size(); i += chunk) {
    h.Update(m.data() + i, std::min(chunk, m.size() - i));
  }
  return Sha256::Hex(h.Finish());
}

TEST(Sha256, FipsVectorsPortable) {
  for (const Vector& v : Vectors()) {
    EXPECT_EQ(Digest(v.message, false, 1 << 20), v.digest) << v.message.size();
    EXPECT_EQ(Digest(v.message, false, 7), v.digest) << v.message.size();
  }
}

TEST(Sha256, FipsVectorsAccelerated) {
  std::printf("SHA extensions on this CPU: %s\n",
              Sha256::HasAcceleration() ? "yes" : "no (portable path twice)");
  for (const Vector& v : Vectors()) {
    EXPECT_EQ(Digest(v.message, true, 1 << 20), v.digest) << v.message.size();
    EXPECT_EQ(Digest(v.message, true, 63), v.digest) << v.message.size();
  }
}

TEST(Sha256, BothPathsAgreeOnEveryLengthAroundTheBlockSize) {
  std::string m;
  for (int n = 0; n < 300; ++n) {
    EXPECT_EQ(Digest(m, true, 13), Digest(m, false, 64)) << n;
    m.push_back(static_cast<char>(n * 37 + 11));
  }
  EXPECT_EQ(Sha256::Of("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, FileErrorsNameTheFile) {
  absl::StatusOr<std::string> r = Sha256File("/nonexistent/file");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/nonexistent/file"), std::string::npos);
}

}  // namespace
}  // namespace vdsolab
