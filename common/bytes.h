// File: common/bytes.h
//
// Reading a little-endian value out of a byte buffer (a copied page), with
// no alignment or aliasing assumptions.

#ifndef VDSOLAB_COMMON_BYTES_H_
#define VDSOLAB_COMMON_BYTES_H_

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace vdsolab {

// The T at `offset` in `bytes`; the caller keeps offset + sizeof(T) in range.
template <typename T>
requires std::is_trivially_copyable_v<T> T
LoadAt(const std::vector<uint8_t>& bytes, uint32_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));  // x86: LE.
  return value;
}

inline uint64_t Load64(const std::vector<uint8_t>& b, uint32_t offset) {
  return LoadAt<uint64_t>(b, offset);
}
inline uint32_t Load32(const std::vector<uint8_t>& b, uint32_t offset) {
  return LoadAt<uint32_t>(b, offset);
}

}  // namespace vdsolab

#endif  // VDSOLAB_COMMON_BYTES_H_
