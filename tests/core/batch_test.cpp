#include "core/batch.h"

#include <gtest/gtest.h>

#include <set>

#include "core/batch_pool.h"
#include "core/iso_span.h"

namespace gpunfv {
namespace {

TEST(BatchLayout, ArraysAreAlignedDisjointAndDevicePrefixIsContiguous) {
  BatchLayout l = BatchLayout::make(1000, 128);
  std::vector<std::pair<size_t, size_t>> regions = {
      {l.off_len, 2000},       {l.off_port, 2000},      {l.off_out_port, 2000},
      {l.off_next_nf, 1000},   {l.off_visited, 4000},   {l.off_node_packets, kMaxChainNodes * 4},
      {l.off_verdict, 1000},   {l.off_headers, 4000},
      {l.off_flow_hash, 4000}, {l.off_data, 128000},    {l.off_seq, 8000},
      {l.off_rx_ns, 8000},     {l.off_wire_ns, 8000}};
  std::sort(regions.begin(), regions.end());
  for (size_t i = 0; i < regions.size(); ++i) {
    EXPECT_EQ(regions[i].first % 256, 0u);
    if (i + 1 < regions.size()) {
      EXPECT_LE(regions[i].first + regions[i].second, regions[i + 1].first);
    }
  }
  EXPECT_LE(regions.back().first + regions.back().second, l.bytes);
  // Everything the device touches lies below the device prefix of a full batch.
  for (size_t off : {l.off_len, l.off_port, l.off_out_port, l.off_next_nf, l.off_verdict,
                     l.off_headers, l.off_flow_hash})
    EXPECT_LT(off, l.off_data);
  EXPECT_EQ(l.device_prefix_bytes(10), l.off_data + 10 * 128);
  EXPECT_LT(l.device_prefix_bytes(1000), l.off_seq + 1);
}

TEST(BatchLayout, RejectsBadShapes) {
  EXPECT_THROW(BatchLayout::make(0, 128), std::invalid_argument);
  EXPECT_THROW(BatchLayout::make(16, 100), std::invalid_argument);
}

TEST(Batch, ViewSpansCoverCapacity) {
  Batch b(64, 256, MemoryKind::host);
  b.set_count(3);
  BatchView v = b.view();
  EXPECT_EQ(v.count, 3u);
  EXPECT_EQ(v.data.size(), 64u * 256u);
  EXPECT_EQ(v.len.size(), 64u);
  PacketRef p(v, 2);
  v.len[2] = 100;
  EXPECT_EQ(p.frame().size(), 100u);
  EXPECT_EQ(p.slot().size(), 256u);
  EXPECT_EQ(p.frame().framework_data(), v.data.framework_data() + 512);
}

TEST(Batch, PinnedFallsBackToHostMemoryWithoutDevice) {
  Batch b(8, 64, MemoryKind::host_pinned);  // on a machine without a GPU: ordinary memory
  b.view().data[0] = 1;
  EXPECT_EQ(b.view().data[0], 1);
}

TEST(BatchPool, AllocatesOnceAndRecycles) {
  BatchPool pool(4, 32, 128, MemoryKind::host);
  EXPECT_EQ(pool.size(), 4u);
  std::set<Batch*> seen;
  std::vector<Batch*> held;
  for (int i = 0; i < 4; ++i) {
    auto b = pool.acquire(std::chrono::microseconds(1000));
    ASSERT_TRUE(b);
    (*b)->set_count(5);
    seen.insert(*b);
    held.push_back(*b);
  }
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_FALSE(pool.acquire(std::chrono::microseconds(100)));  // empty: caller waits
  pool.release(held[0]);
  auto again = pool.acquire(std::chrono::microseconds(1000));
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, held[0]);          // the same memory comes back
  EXPECT_EQ((*again)->count(), 0u);    // reset for the next fill
}

#if GPUNFV_CHECKED
TEST(IsoSpanDeathTest, OutOfBoundsAccessAborts) {
  uint8_t buf[8] = {};
  IsoSpan<uint8_t> s(buf, 8);
  EXPECT_DEATH(s[8] = 1, "out of bounds");
  EXPECT_DEATH(s.subspan(4, 5), "out of bounds");
}
#endif

}  // namespace
}  // namespace gpunfv
