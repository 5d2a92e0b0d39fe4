// The batch pool's size against the machine's memory (settings.max_pool_memory_percent).
#include "chain/batch_shape.h"

#include <gtest/gtest.h>

#include "core/batch.h"

namespace gpunfv {
namespace {

TEST(BatchShape, PoolBytesAreTheBatchesLayouts) {
  const BatchShape shape{2048, 1536, 32};
  EXPECT_EQ(pool_bytes(shape, 64), 64 * BatchLayout::make(2048, 1536, 32).bytes);
}

TEST(BatchShape, PoolAboveTheShareOfMemoryIsRefused) {
  const BatchShape shape{2048, 2048, 0};
  Settings s;
  s.batches = 64;
  const uint64_t pool = pool_bytes(shape, s.batches);
  EXPECT_EQ(pool_too_large(shape, s, 2 * pool + 200), std::nullopt);  // 50% of it: just above
  const auto why = pool_too_large(shape, s, 2 * pool - 200);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("64 batches of 2048 packets, 2048-byte slots"), std::string::npos) << *why;
  EXPECT_NE(why->find("more than max_pool_memory_percent (50%)"), std::string::npos) << *why;
  s.max_pool_memory_percent = 100;
  EXPECT_EQ(pool_too_large(shape, s, 2 * pool - 200), std::nullopt);
  EXPECT_EQ(pool_too_large(shape, s, 0), std::nullopt);  // memory unknown: not checked
}

TEST(BatchShape, PhysicalMemoryIsKnown) { EXPECT_GT(physical_memory_bytes(), 0u); }

}  // namespace
}  // namespace gpunfv
