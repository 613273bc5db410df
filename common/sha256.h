// File: common/sha256.h
//
// SHA-256 (FIPS 180-4), for cache keys that must be the same in every
// process and on every run (Abseil's hash is seeded per process). Uses the
// x86 SHA extensions when the CPU has them (a 150 MB kernel tarball hashes
// in about 0.1 s instead of 0.6 s), the portable rounds otherwise; both give
// the same digest.

#ifndef VDSOLAB_COMMON_SHA256_H_
#define VDSOLAB_COMMON_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vdsolab {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void Update(const void* data, size_t n);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  // The digest of everything updated so far; the object must not be
  // updated afterwards.
  Digest Finish();

  // Lowercase hex of a digest (64 characters).
  static std::string Hex(const Digest& d);
  // Hex digest of `s`.
  static std::string Of(std::string_view s);

  // Which block function Update uses (for tests): the SHA-extension one
  // when `accelerated` and the CPU has them, the portable one otherwise.
  static bool HasAcceleration();
  void UseAcceleration(bool accelerated);

 private:
  void Blocks(const uint8_t* p, size_t nblocks);

  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buffered_ = 0;
  uint64_t total_ = 0;
  bool accelerated_;
};

// Hex SHA-256 of a file's content; an error names the file.
absl::StatusOr<std::string> Sha256File(const std::string& path);

}  // namespace vdsolab

#endif  // VDSOLAB_COMMON_SHA256_H_
