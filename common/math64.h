// File: common/math64.h
//
// The kernel's fixed-width time arithmetic helpers (include/vdso/math64.h,
// include/linux/math64.h), shared by the timekeeper model and the vDSO
// readers as in the kernel. Every helper keeps the kernel's integer widths,
// including where they truncate.

#ifndef VDSOLAB_COMMON_MATH64_H_
#define VDSOLAB_COMMON_MATH64_H_

#include <cstdint>

namespace vdsolab {

inline constexpr uint64_t kNsecPerSec = 1000000000ull;      // NSEC_PER_SEC
inline constexpr uint64_t kNsecPerUsec = 1000ull;           // NSEC_PER_USEC
inline constexpr uint64_t kUsecPerSec = 1000000ull;         // USEC_PER_SEC
inline constexpr uint64_t kS64Max = 0x7fffffffffffffffull;  // S64_MAX
inline constexpr uint64_t kU64Max = ~0ull;                  // U64_MAX

// __iter_div_u64_rem(): quotient and remainder of dividend / divisor.
// The kernel subtracts in a loop (fast for the small quotients it expects)
// and counts in a u32, so the quotient wraps modulo 2^32. This gives the
// same two values: by subtraction for quotients 0 and 1 (every sane read;
// no multiply for a fenced counter read in the next call to wait on, as
// in the kernel, whose loop has an asm() so the compiler cannot turn it
// into a division), by division beyond (O(1) for any input, where the
// kernel's loop would iterate).
constexpr uint32_t IterDivU64Rem(uint64_t dividend, uint32_t divisor,
                                 uint64_t* remainder) {
  if (dividend < divisor) {
    *remainder = dividend;
    return 0;
  }
  if (dividend - divisor < divisor) {
    *remainder = dividend - divisor;
    return 1;
  }
  *remainder = dividend % divisor;
  return static_cast<uint32_t>(dividend / divisor);
}

// The kernel's normalisation of a shifted-nanosecond time,
//   while (nsec >= NSEC_PER_SEC << shift) { nsec -= NSEC_PER_SEC << shift;
//   sec++; }
// (update_vsyscall() and its x86 predecessors), by division: the same sec
// and nsec for every input, without a loop as long as the quotient (a
// garbled or overflowed sum can make it ~2^64 >> (30 + shift)).
constexpr void NormaliseShiftedNsec(uint64_t* sec, uint64_t* nsec,
                                    uint32_t shift) {
  const uint64_t unit = kNsecPerSec << shift;
  *sec += *nsec / unit;
  *nsec %= unit;
}

// x86-64 shr/shl of a u64: the CPU takes the count mod 64. The kernel's C
// shifts by a page field (vc->shift, pvti->tsc_shift) compile to these;
// in C and C++ a count of 64 or more is undefined, so the readers model
// the instruction. The kernel publishes shifts of at most 32.
constexpr uint64_t ShrX86(uint64_t v, uint32_t count) {
  return v >> (count & 63);
}
constexpr uint64_t ShlX86(uint64_t v, uint32_t count) {
  return v << (count & 63);
}

// mul_u64_u32_add_u64_shr(): ((u128)a * mul + b) >> shift, truncated to u64.
// This is the x86-64 (CONFIG_ARCH_SUPPORTS_INT128) body. Compiled, the
// 128-bit shift is shrd/shr by the count mod 64 with bit 6 picking the
// high word: the count is taken mod 128 (see ShrX86).
constexpr uint64_t MulU64U32AddU64Shr(uint64_t a, uint32_t mul, uint64_t b,
                                      uint32_t shift) {
  unsigned __int128 product = static_cast<unsigned __int128>(a) * mul + b;
  return static_cast<uint64_t>(product >> (shift & 127));
}

// mul_u64_u32_add_u64_shr() without 128-bit arithmetic, as the kernel builds
// it on 32-bit architectures. Kept to prove the two bodies agree.
constexpr uint64_t MulU64U32AddU64ShrNoInt128(uint64_t a, uint32_t mul,
                                              uint64_t b, uint32_t shift) {
  uint32_t ah = static_cast<uint32_t>(a >> 32);
  uint32_t al = static_cast<uint32_t>(a);
  uint64_t low = static_cast<uint64_t>(al) * mul;
  uint64_t ret = low + b;
  bool overflow = ret < low;
  ret >>= shift;
  if (overflow && shift != 0) ret += 1ull << (64 - shift);
  if (ah != 0) ret += (static_cast<uint64_t>(ah) * mul) << (32 - shift);
  return ret;
}

// x / d for an unsigned 128-bit x and a nonzero 64-bit d, the remainder in
// *rem: schoolbook division in two 64-bit divides, as libgcc's __udivti3
// does for a 64-bit divisor, without the call (the simulation's counters
// divide on every counter read). Not a kernel function.
inline unsigned __int128 DivModU128U64(unsigned __int128 x, uint64_t d,
                                       uint64_t* rem) {
  const uint64_t hi = static_cast<uint64_t>(x >> 64);
  const uint64_t q_hi = hi / d;
  uint64_t r = hi % d;
  uint64_t q_lo;
#if defined(__x86_64__)
  // (r:lo) / d with r < d: the quotient fits in 64 bits, so divq cannot
  // fault.
  asm("divq %[d]"
      : "=a"(q_lo), "=d"(r)
      : "a"(static_cast<uint64_t>(x)), "d"(r), [d] "rm"(d));
#else
  const unsigned __int128 low =
      (static_cast<unsigned __int128>(r) << 64) | static_cast<uint64_t>(x);
  q_lo = static_cast<uint64_t>(low / d);
  r = static_cast<uint64_t>(low % d);
#endif
  *rem = r;
  return (static_cast<unsigned __int128>(q_hi) << 64) | q_lo;
}

}  // namespace vdsolab

#endif  // VDSOLAB_COMMON_MATH64_H_
