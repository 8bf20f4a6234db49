// rng.hpp: the one random-number generator of poolsim.
//
// xoshiro256** (Blackman and Vigna, "Scrambled linear pseudorandom number
// generators", 2018), seeded through splitmix64. We do not use <random>'s
// distributions: their output is implementation-defined, and the workload
// generator promises the same task list, bit for bit, for the same seed on
// every standard library. Streams are derived explicitly (derive()) so that,
// e.g., client 17 of a closed workload draws the same tasks whatever order the
// clients are served in. Nothing in poolsim uses a global RNG.
#pragma once

#include <cstdint>

namespace poolsim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) { reseed(seed); }

  void reseed(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& s : s_) s = splitmix64(x);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in (0, 1]: safe for log().
  double uniform_open0() { return 1.0 - uniform(); }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift, unbiased enough
  // for n far below 2^64; exact determinism is what matters here).
  std::uint64_t below(std::uint64_t n) {
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64);
  }

  // An independent stream for a sub-object (class, client, node...).
  static Rng derive(std::uint64_t seed, std::uint64_t stream) {
    std::uint64_t x = seed ^ (0x9e3779b97f4a7c15ULL * (stream + 1));
    return Rng(splitmix64(x));
  }

  static std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4]{};
};

}  // namespace poolsim
