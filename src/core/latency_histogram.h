// Log-linear latency histogram (HdrHistogram-like, 16 sub-buckets per power of two, so a
// quantile is within 1/16 of the true value); fixed memory, no allocation when recording.
#pragma once

#include <array>
#include <cstdint>

namespace gpunfv {

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 4;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = 64 * kSub;

  void record(uint64_t ns, uint64_t n = 1);
  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  // Upper bound of the bucket holding quantile q in [0,1] (never above max()).
  uint64_t quantile(double q) const;
  void merge(const LatencyHistogram& o);

  static int bucket_of(uint64_t ns);
  static uint64_t bucket_upper(int b);

 private:
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0, max_ = 0, min_ = UINT64_MAX;
};

}  // namespace gpunfv
