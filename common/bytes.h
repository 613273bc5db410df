// File: common/bytes.h
//
// Reading a little-endian value out of a byte buffer (a copied page, or
// the simulated page), with no alignment or aliasing assumptions.

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

// The 1-, 2-, 4- or 8-byte little-endian value at `p`, zero-extended. A
// fixed-size copy per case: a memcpy of run-time size is a library call,
// and the simulation makes one for every load a reader does.
inline uint64_t LoadSized(const uint8_t* p, uint32_t size) {
  switch (size) {
    case 1:
      return *p;
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case 8: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    default: {
      uint64_t v = 0;
      std::memcpy(&v, p, size < 8 ? size : 8);
      return v;
    }
  }
}

}  // namespace vdsolab

#endif  // VDSOLAB_COMMON_BYTES_H_
