// ChainFlow's time sums when callers' clock readings reach the lock out of order: a reading
// taken before the lock can be older than one another thread already recorded.
#include <gtest/gtest.h>

#include "chain/chain_flow.h"

namespace gpunfv {
namespace {

TEST(ChainFlow, SlowedTimeNeverWrapsOnAnEarlierReading) {
  ChainFlow flow(2, /*threshold_packets=*/1, /*queue_batches=*/0);
  Batch b(4, 64, MemoryKind::host);
  b.batch_seq = 0;
  ASSERT_TRUE(flow.push(1, &b, 4, 2'000));  // stage 1 over threshold: stage 0 slowed at 2 us
  EXPECT_TRUE(flow.ingress_paused());
  ASSERT_EQ(flow.pop(1, 1'000), &b);  // a reading from before the push ends the slow-down
  EXPECT_FALSE(flow.ingress_paused());
  const std::vector<StageMetrics> m = flow.metrics(3'000);
  EXPECT_EQ(m[0].slowed_ns, 0u);
  EXPECT_EQ(m[0].slow_down_signals, 1u);
  EXPECT_GE(m[1].queued_packet_seconds, 0.0);
  EXPECT_LT(m[1].queued_packet_seconds, 1e-6);
}

TEST(ChainFlow, SlowedTimeStillOpenIsNeverNegative) {
  ChainFlow flow(2, 1, 0);
  Batch b(4, 64, MemoryKind::host);
  ASSERT_TRUE(flow.push(1, &b, 4, 5'000));
  const std::vector<StageMetrics> m = flow.metrics(4'000);  // read before the push's time
  EXPECT_EQ(m[0].slowed_ns, 0u);
  EXPECT_EQ(flow.metrics(7'000)[0].slowed_ns, 2'000u);
}

// Ingress keeps filling a batch past its deadline while some stage has a batch waiting.
TEST(ChainFlow, BackloggedWhileAnyStageHasABatchWaiting) {
  ChainFlow flow(3, 0, 0);
  Batch a(4, 64, MemoryKind::host), b(4, 64, MemoryKind::host);
  a.batch_seq = 0, b.batch_seq = 1;
  EXPECT_FALSE(flow.backlogged());
  ASSERT_TRUE(flow.push(0, &a, 4, 1'000));
  EXPECT_TRUE(flow.backlogged());
  ASSERT_EQ(flow.pop(0, 2'000), &a);  // taken by the stage: running, not waiting
  EXPECT_FALSE(flow.backlogged());
  ASSERT_TRUE(flow.push(2, &b, 4, 3'000));  // out of order at the last stage: it waits for a
  EXPECT_TRUE(flow.backlogged());
  EXPECT_EQ(flow.pop(2, 4'000), nullptr);
  ASSERT_TRUE(flow.push(2, &a, 4, 5'000));
  ASSERT_EQ(flow.pop(2, 6'000), &a);
  ASSERT_EQ(flow.pop(2, 7'000), &b);
  EXPECT_FALSE(flow.backlogged());
}

// The fused pipeline's issuing threads: backlogged while every one of them issues a batch, not
// while one of them is free; without set_issuers (staged, CPU) issuing is not counted.
TEST(ChainFlow, BackloggedWhileEveryIssuingThreadIsBusy) {
  ChainFlow flow(3, 0, 0);
  flow.begin_issue();
  EXPECT_FALSE(flow.backlogged());
  flow.end_issue();
  flow.set_issuers(2);
  flow.begin_issue();
  EXPECT_FALSE(flow.backlogged());  // one of two busy
  flow.begin_issue();
  EXPECT_TRUE(flow.backlogged());
  flow.end_issue();
  EXPECT_FALSE(flow.backlogged());
  flow.end_issue();
  EXPECT_FALSE(flow.backlogged());
}

// The GPU's fused pipeline hands a batch through its NF stages at once: each stage counts the
// batch, the packets sent to its NF and a launch where there were any, and queues nothing.
TEST(ChainFlow, PassCountsAStageWithoutQueueing) {
  ChainFlow flow(4, 1, 1);
  Batch a(8, 64, MemoryKind::host), b(8, 64, MemoryKind::host);
  a.batch_seq = 0, b.batch_seq = 1;
  flow.pass(1, &a, 8, 1'000);
  flow.pass(2, &a, 0, 1'000);
  flow.pass(1, &b, 3, 2'000);
  flow.pass(2, &b, 3, 2'000);
  EXPECT_FALSE(flow.backlogged());
  EXPECT_FALSE(flow.ingress_paused());
  EXPECT_EQ(flow.packets_seen(1), 11u);
  EXPECT_EQ(flow.packets_seen(2), 3u);
  const std::vector<StageMetrics> m = flow.metrics(3'000);
  EXPECT_EQ(m[1].batches, 2u);
  EXPECT_EQ(m[1].launches, 2u);
  EXPECT_EQ(m[2].batches, 2u);
  EXPECT_EQ(m[2].launches, 1u);
  EXPECT_EQ(m[2].queued_packet_seconds, 0.0);
  EXPECT_EQ(m[1].max_queued_packets, 0u);
}

}  // namespace
}  // namespace gpunfv
