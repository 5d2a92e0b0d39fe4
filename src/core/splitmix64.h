// splitmix64: a small, fast generator that gives the same numbers on every platform and
// standard library (std distributions do not), so a seed reproduces traffic and test data.
#pragma once

#include <cstdint>

namespace gpunfv {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) (multiply-shift; the bias is negligible for our ranges).
  uint32_t below(uint32_t n) { return uint32_t((uint64_t(uint32_t(next())) * n) >> 32); }
  // Uniform in [lo, hi] (hi - lo < 2^32).
  uint32_t in(uint32_t lo, uint32_t hi) { return lo + uint32_t(next() % (uint64_t(hi) - lo + 1)); }
  uint64_t state() const { return s_; }

 private:
  uint64_t s_;
};

}  // namespace gpunfv
