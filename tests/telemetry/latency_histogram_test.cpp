#include "core/latency_histogram.h"

#include <gtest/gtest.h>

namespace gpunfv {
namespace {

TEST(LatencyHistogram, KeepsTheSumOfItsValues) {
  LatencyHistogram h;
  h.record(100, 3);
  h.record(2000);
  EXPECT_EQ(h.count(), 4u);
  EXPECT_EQ(h.sum(), 2300u);
  LatencyHistogram m;
  m.merge(h);
  m.merge(h);
  EXPECT_EQ(m.sum(), 4600u);
}

TEST(LatencyHistogram, RelaxedMergeEqualsMerge) {
  LatencyHistogram h;
  for (uint64_t ns : {5u, 900u, 1'000'000u, 77u}) h.record(ns, ns % 7 + 1);
  LatencyHistogram a, b;
  a.merge(h);
  b.merge_relaxed(h);
  EXPECT_EQ(a.count(), b.count());
  EXPECT_EQ(a.sum(), b.sum());
  EXPECT_EQ(a.max(), b.max());
  EXPECT_EQ(a.min(), b.min());
  for (int k = 0; k < LatencyHistogram::kBuckets; ++k) ASSERT_EQ(a.bucket(k), b.bucket(k)) << k;
}

}  // namespace
}  // namespace gpunfv
