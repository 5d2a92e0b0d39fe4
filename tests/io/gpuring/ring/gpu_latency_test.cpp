// The GPU side's latency histogram (io/gpuring/ring/gpu_latency.h): buckets, merging rings,
// percentiles as bucket upper edges never above the maximum, the open last bucket.
#include "io/gpuring/ring/gpu_latency.h"

#include <gtest/gtest.h>

#include <cstring>

namespace gpunfv::gpuring {
namespace {

GpuLatencyHistogram empty_histogram() {
  GpuLatencyHistogram h;
  std::memset(&h, 0, sizeof h);
  return h;
}

TEST(GpuLatency, EmptyHasNoSamples) {
  const GpuLatencySummary s = summarize_gpu_latency({empty_histogram()});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.p99_ns, 0u);
}

TEST(GpuLatency, PercentilesAreBucketUpperEdges) {
  GpuLatencyHistogram h = empty_histogram();
  for (int i = 0; i < 98; ++i) h.add(1'100);  // bucket 4: [1000, 1250)
  h.add(9'900);                               // bucket 39: [9750, 10000)
  h.add(30'000);
  EXPECT_EQ(h.count, 100u);
  EXPECT_EQ(h.max_ns, 30'000u);
  const GpuLatencySummary s = summarize_gpu_latency({h});
  EXPECT_EQ(s.p50_ns, 1'250u);
  EXPECT_EQ(s.p99_ns, 10'000u);  // the 99th of 100 samples
  EXPECT_EQ(s.p999_ns, 30'000u);  // capped at the maximum, not the bucket's edge
  EXPECT_DOUBLE_EQ(s.mean_ns, (98 * 1'100.0 + 9'900 + 30'000) / 100);
}

TEST(GpuLatency, RingsMergeAndTheLastBucketIsOpen) {
  GpuLatencyHistogram a = empty_histogram(), b = empty_histogram();
  a.add(100);
  b.add(50'000'000);  // 50 ms: beyond the last bucket's start
  EXPECT_EQ(b.bucket[kLatencyBuckets - 1], 1u);
  const GpuLatencySummary s = summarize_gpu_latency({a, b});
  EXPECT_EQ(s.count, 2u);
  EXPECT_EQ(s.p50_ns, 250u);  // the first bucket's upper edge
  EXPECT_EQ(s.p99_ns, 50'000'000u);
}

TEST(GpuLatency, CoarseBucketsReachMilliseconds) {
  EXPECT_EQ(GpuLatencyHistogram::bucket_of(127'999), kLatencyFineBuckets - 1);
  EXPECT_EQ(GpuLatencyHistogram::bucket_of(128'000), kLatencyFineBuckets);
  EXPECT_EQ(GpuLatencyHistogram::bucket_end_ns(kLatencyFineBuckets - 1), 128'000u);
  EXPECT_EQ(GpuLatencyHistogram::bucket_end_ns(kLatencyFineBuckets), 144'000u);
  GpuLatencyHistogram h = empty_histogram();
  for (int i = 0; i < 10; ++i) h.add(3'000'000 + 1'000 * i);  // 3 ms, a chain's batch
  h.add(9'000'000);
  const GpuLatencySummary s = summarize_gpu_latency({h});
  EXPECT_EQ(s.p50_ns, 3'008'000u);  // the 16 us bucket [2.992, 3.008) ms
  EXPECT_EQ(s.p99_ns, 9'000'000u);  // open last bucket: the maximum
}

}  // namespace
}  // namespace gpunfv::gpuring
