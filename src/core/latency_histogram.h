// Log-linear latency histogram (HdrHistogram-like, 16 sub-buckets per power of two, so a
// quantile is within 1/16 of the true value); fixed memory, no allocation when recording.
// One thread records; another may read it meanwhile through merge_relaxed() (the metrics
// endpoint), since record() updates every field with relaxed single-writer stores.
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
  // Sum of every recorded value (ns), for a mean and Prometheus's _sum.
  uint64_t sum() const { return sum_; }
  uint64_t bucket(int b) const { return buckets_[b]; }
  // Upper bound of the bucket holding quantile q in [0,1] (never above max()).
  uint64_t quantile(double q) const;
  void merge(const LatencyHistogram& o);
  // merge() of a histogram another thread is recording into. Its count is the sum of the
  // buckets read, so the copy is consistent in itself even if a record() lands meanwhile.
  void merge_relaxed(const LatencyHistogram& o);

  static int bucket_of(uint64_t ns);
  static uint64_t bucket_upper(int b);

 private:
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0, max_ = 0, min_ = UINT64_MAX, sum_ = 0;
};

}  // namespace gpunfv
