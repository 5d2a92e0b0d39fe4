#include "io/gpuring/ring/gpu_latency.h"

#include <algorithm>

namespace gpunfv::gpuring {

GpuLatencySummary summarize_gpu_latency(const std::vector<GpuLatencyHistogram>& rings) {
  GpuLatencySummary s;
  std::vector<uint64_t> merged(kLatencyBuckets, 0);
  uint64_t sum = 0;
  for (const GpuLatencyHistogram& h : rings) {
    s.count += h.count;
    sum += h.sum_ns;
    s.max_ns = std::max(s.max_ns, h.max_ns);
    for (uint32_t b = 0; b < kLatencyBuckets; ++b) merged[b] += h.bucket[b];
  }
  if (s.count == 0) return s;
  s.mean_ns = double(sum) / double(s.count);
  auto percentile = [&](double q) {
    // The smallest bucket whose cumulative count reaches q of the total.
    const uint64_t want = std::max<uint64_t>(1, uint64_t(q * double(s.count) + 0.999999));
    uint64_t seen = 0;
    for (uint32_t b = 0; b < kLatencyBuckets; ++b) {
      seen += merged[b];
      if (seen >= want)
        return b + 1 == kLatencyBuckets ? s.max_ns
                                        : std::min<uint64_t>(GpuLatencyHistogram::bucket_end_ns(b), s.max_ns);
    }
    return s.max_ns;
  };
  s.p50_ns = percentile(0.50);
  s.p99_ns = percentile(0.99);
  s.p999_ns = percentile(0.999);
  return s;
}

}  // namespace gpunfv::gpuring
