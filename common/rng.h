// File: common/rng.h
//
// vdsolab's only source of randomness (the simulation, the generators,
// conform): xoshiro256** seeded through SplitMix64. Written out here (not
// <random>'s engines and distributions) so that a seed means the same run
// on every compiler and library version.

#ifndef VDSOLAB_COMMON_RNG_H_
#define VDSOLAB_COMMON_RNG_H_

#include <cstdint>

namespace vdsolab {

namespace rng_internal {
// SplitMix64's finaliser.
inline uint64_t Fmix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace rng_internal

// MixHash()'s first three words, for the many hashes that share them (a
// reader's per-call generators differ in the call number only): each word
// is one more link of a chain of dependent multiplies, which the CPU
// cannot overlap.
inline uint64_t MixHashPrefix(uint64_t a, uint64_t b, uint64_t c = 0) {
  using rng_internal::Fmix;
  uint64_t h = Fmix(a + 0x9e3779b97f4a7c15ull);
  h = Fmix(h ^ (b + 0x9e3779b97f4a7c15ull));
  return Fmix(h ^ (c + 0x632be59bd9b4e019ull));
}
// MixHash(a, b, c, d) from MixHashPrefix(a, b, c).
inline uint64_t MixHashFinish(uint64_t prefix, uint64_t d) {
  return rng_internal::Fmix(prefix ^ (d + 0x85ebca77c2b2ae63ull));
}

// A stateless 64-bit mix of several words (SplitMix64 finaliser chain):
// the simulation's per-event randomness, so that removing one event or
// reader never changes the random draws of the others.
inline uint64_t MixHash(uint64_t a, uint64_t b, uint64_t c = 0,
                        uint64_t d = 0) {
  return MixHashFinish(MixHashPrefix(a, b, c), d);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) { Seed(seed); }

  // Seeded with MixHash(a, b, c, d) at the first draw, to the same
  // sequence: most per-call generators of a run without injection are
  // never drawn from, and hashing and seeding them was a sixth of the run.
  static Rng Deferred(uint64_t a, uint64_t b, uint64_t c = 0, uint64_t d = 0) {
    return DeferredFromPrefix(MixHashPrefix(a, b, c), d);
  }
  // The same from MixHashPrefix(a, b, c), which a caller making many such
  // generators computes once: seeding at the first draw is then one link
  // of the hash chain, not four (the per-call seeding was a seventh of a
  // run with injection, most of it waiting on those multiplies).
  static Rng DeferredFromPrefix(uint64_t prefix, uint64_t d) {
    Rng r;
    r.deferred_ = true;
    r.state_[0] = prefix;
    r.state_[1] = d;
    return r;
  }

  uint64_t Next() {
    if (deferred_) [[unlikely]] {
      SeedDeferred();
    }
    const uint64_t result = Rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = Rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, bound); bound > 0. Rejection keeps it unbiased.
  uint64_t Below(uint64_t bound) {
    const uint64_t limit = ~0ull - (~0ull % bound);
    uint64_t x;
    do {
      x = Next();
    } while (x >= limit);
    return x % bound;
  }

  // Uniform in [lo, hi]; lo <= hi.
  uint64_t InRange(uint64_t lo, uint64_t hi) {
    if (hi - lo == ~0ull) return Next();
    return lo + Below(hi - lo + 1);
  }

 private:
  Rng() = default;
  // Out of line: once per generator, and it kept Next() from inlining into
  // the simulation's per-step draws.
  [[gnu::noinline]] void SeedDeferred() {
    deferred_ = false;
    Seed(MixHashFinish(state_[0], state_[1]));
  }
  void Seed(uint64_t seed) {
    uint64_t x = seed;
    for (uint64_t& word : state_) word = SplitMix64(x);
  }
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t SplitMix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  uint64_t state_[4] = {};  // MixHashFinish()'s inputs while deferred_.
  bool deferred_ = false;
};

}  // namespace vdsolab

#endif  // VDSOLAB_COMMON_RNG_H_
