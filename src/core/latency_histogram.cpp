#include "core/latency_histogram.h"

#include <algorithm>
#include <cmath>

#include "core/counters.h"

namespace gpunfv {

int LatencyHistogram::bucket_of(uint64_t ns) {
  if (ns < kSub) return static_cast<int>(ns);
  int msb = 63 - __builtin_clzll(ns);  // >= kSubBits
  int shift = msb - kSubBits;
  int sub = static_cast<int>((ns >> shift) & (kSub - 1));
  return (shift + 1) * kSub + sub;
}

uint64_t LatencyHistogram::bucket_upper(int b) {
  if (b < kSub) return static_cast<uint64_t>(b);
  int shift = b / kSub - 1;
  uint64_t sub = static_cast<uint64_t>(b % kSub);
  uint64_t lower = (uint64_t(kSub) | sub) << shift;
  return lower + ((uint64_t(1) << shift) - 1);
}

void LatencyHistogram::record(uint64_t ns, uint64_t n) {
  add_relaxed(buckets_[bucket_of(ns)], n);
  add_relaxed(sum_, ns * n);
  add_relaxed(count_, n);
  if (ns > max_) std::atomic_ref<uint64_t>(max_).store(ns, std::memory_order_relaxed);
  if (ns < min_) std::atomic_ref<uint64_t>(min_).store(ns, std::memory_order_relaxed);
}

uint64_t LatencyHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  uint64_t rank = static_cast<uint64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * count_));
  rank = std::max<uint64_t>(rank, 1);
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += buckets_[b];
    if (seen >= rank) return std::min(bucket_upper(b), max_);
  }
  return max_;
}

void LatencyHistogram::merge(const LatencyHistogram& o) {
  for (int b = 0; b < kBuckets; ++b) buckets_[b] += o.buckets_[b];
  count_ += o.count_;
  sum_ += o.sum_;
  max_ = std::max(max_, o.max_);
  min_ = std::min(min_, o.min_);
}

void LatencyHistogram::merge_relaxed(const LatencyHistogram& o) {
  uint64_t n = 0;
  for (int b = 0; b < kBuckets; ++b) {
    const uint64_t v = load_relaxed(o.buckets_[b]);
    buckets_[b] += v;
    n += v;
  }
  count_ += n;
  sum_ += load_relaxed(o.sum_);
  max_ = std::max(max_, load_relaxed(o.max_));
  min_ = std::min(min_, load_relaxed(o.min_));
}

}  // namespace gpunfv
