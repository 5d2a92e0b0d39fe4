// IsoWalk (core/iso_walk.h): a table walked by row numbers it holds itself stays inside the
// table; a row past it is read as the last row and refused once, when the walk ends.
#include "core/iso_walk.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpunfv {
namespace {

// Rows of 4 elements: row r holds r*10 + column.
std::vector<uint32_t> table_of(uint32_t rows) {
  std::vector<uint32_t> t;
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < 4; ++c) t.push_back(r * 10 + c);
  return t;
}

TEST(IsoWalk, RowsInsideTheTableAreReadAsTheyAre) {
  const std::vector<uint32_t> t = table_of(3);
  IsoFaultScope scope;
  {
    IsoWalk<const uint32_t, 2> walk(IsoSpan<const uint32_t>(t.data(), t.size()));
    EXPECT_EQ(walk.rows(), 3u);
    EXPECT_EQ(walk.at(0, 0), 0u);
    EXPECT_EQ(walk.at(2, 3), 23u);
    EXPECT_EQ(walk.at(1, 6), 12u);  // the column is taken modulo the row's width
  }
  EXPECT_FALSE(scope.faulted());
}

#if GPUNFV_CHECKED
TEST(IsoWalk, ARowPastTheTableReadsTheLastRowAndIsRefusedWhenTheWalkEnds) {
  std::vector<uint32_t> t = table_of(3);
  t.push_back(99);  // a partial row is not reached
  IsoFaultScope scope;
  {
    IsoWalk<const uint32_t, 2> walk(IsoSpan<const uint32_t>(t.data(), t.size()));
    EXPECT_EQ(walk.rows(), 3u);
    EXPECT_EQ(walk.at(3, 0), 20u);
    EXPECT_EQ(walk.at(0xFFFFFFFFu, 1), 21u);
    EXPECT_EQ(walk.at(1, 1), 11u);
    EXPECT_FALSE(scope.faulted());  // noted when the walk ends
  }
  EXPECT_TRUE(scope.faulted());
  EXPECT_FALSE(scope.faulted());
}

TEST(IsoWalk, ATableWithoutAWholeRowIsRefusedWhenTheWalkStarts) {
  const std::vector<uint32_t> t = {1, 2, 3};
  IsoFaultScope scope;
  {
    IsoWalk<const uint32_t, 2> walk(IsoSpan<const uint32_t>(t.data(), t.size()));
    EXPECT_EQ(walk.rows(), 0u);
    EXPECT_TRUE(scope.faulted());
    (void)walk.at(0, 1);  // reads scratch, never the three elements or their neighbours
  }
  EXPECT_FALSE(scope.faulted());  // row 0 is the scratch's
}

TEST(IsoWalk, AnEmptyTableInSharedMemoryIsWalkedOverItsSpareRow) {
  const std::vector<uint32_t> t;
  uint32_t spare[1] = {42};
  IsoFaultScope scope;
  {
    IsoWalk<uint32_t, 0> walk(IsoSpan<uint32_t>(nullptr, 0), spare);
    EXPECT_EQ(walk.at(0), 42u);
    walk.at(0) = 7;
    EXPECT_FALSE(scope.faulted());
    (void)walk.at(1);  // past the spare row too: refused when the walk ends
  }
  EXPECT_EQ(spare[0], 7u);
  EXPECT_TRUE(scope.faulted());
}

// A walk outside an NF's fault scope is framework code: a row past the table aborts.
void walk_past_the_table(const std::vector<uint32_t>& t) {
  IsoWalk<const uint32_t, 2> walk(IsoSpan<const uint32_t>(t.data(), t.size()));
  (void)walk.at(1, 0);
}

TEST(IsoWalkDeathTest, OutsideAnyScopeAborts) {
  const std::vector<uint32_t> t = table_of(1);
  EXPECT_DEATH(walk_past_the_table(t), "out of bounds");
}
#endif

}  // namespace
}  // namespace gpunfv
