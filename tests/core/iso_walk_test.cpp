// IsoWalk (core/iso_walk.h): a table walked by row numbers it holds itself stays inside the
// table; a row past it is refused and read as the last row. IsoDfa: a
// transition table is checked once when handed out, and a walk over it follows its entries.
// IsoAutomaton: the same with each row's range of outputs, checked once too.
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

// A DFA of 3 rows of 4 entries: entry (r, c) names row (r + c) % 3, with a flag bit above.
std::vector<uint32_t> dfa_of() {
  std::vector<uint32_t> t;
  for (uint32_t r = 0; r < 3; ++r)
    for (uint32_t c = 0; c < 4; ++c) t.push_back(((r + c) % 3) | (c == 3 ? 0x100u : 0u));
  return t;
}

TEST(IsoDfa, AWalkFollowsTheRowsItsEntriesName) {
  const std::vector<uint32_t> t = dfa_of();
  const IsoDfa<2, 0xFF> dfa(IsoSpan<const uint32_t>(t.data(), t.size()), t);
  EXPECT_EQ(dfa.rows(), 3u);
  IsoFaultScope scope;
  IsoDfaWalk<2, 0xFF> walk(dfa);
  EXPECT_EQ(walk.row(), 0u);
  EXPECT_EQ(walk.step(1), 1u);
  EXPECT_EQ(walk.row(), 1u);
  EXPECT_EQ(walk.step(3), 0x100u | 1u);  // the flag comes with the entry, the row without it
  EXPECT_EQ(walk.row(), 1u);
  EXPECT_EQ(walk.step(6), 0u);  // the column is taken modulo the row's width: (1 + 2) % 3
  EXPECT_EQ(walk.row(), 0u);
  EXPECT_FALSE(scope.faulted());
}

TEST(IsoDfa, ATableNamingARowPastItIsRefusedWhenHandedOut) {
  std::vector<uint32_t> t = dfa_of();
  t[5] = 3;  // row 1 names row 3 of 3
  EXPECT_THROW((IsoDfa<2, 0xFF>(IsoSpan<const uint32_t>(t.data(), t.size()), t)), std::invalid_argument);
  t[5] = 0x102;  // bits outside the mask are not the row
  EXPECT_NO_THROW((IsoDfa<2, 0xFF>(IsoSpan<const uint32_t>(t.data(), t.size()), t)));
  const std::vector<uint32_t> host(t.begin(), t.end() - 4);  // contents of another size
  EXPECT_THROW((IsoDfa<2, 0xFF>(IsoSpan<const uint32_t>(t.data(), t.size()), host)), std::invalid_argument);
  const std::vector<uint32_t> partial = {0, 0, 0};
  EXPECT_THROW((IsoDfa<2, 0xFF>(IsoSpan<const uint32_t>(partial.data(), partial.size()), partial)),
               std::invalid_argument);
  const std::vector<uint32_t> none;
  EXPECT_THROW((IsoDfa<2, 0xFF>(IsoSpan<const uint32_t>(none.data(), 0), none)), std::invalid_argument);
}

// Outputs for dfa_of()'s 3 rows: row 0 has none, row 1 the outputs (7, 70) and (8, 80), row 2
// the output (9, 90).
std::vector<uint32_t> outputs_of() { return {3, 3, 3, 5, 5, 6, 7, 70, 8, 80, 9, 90}; }

TEST(IsoAutomaton, AWalkReadsTheOutputsOfItsRow) {
  const std::vector<uint32_t> t = dfa_of(), o = outputs_of();
  const IsoAutomaton<2, 0xFF> a(IsoDfa<2, 0xFF>(IsoSpan<const uint32_t>(t.data(), t.size()), t),
                                IsoSpan<const uint32_t>(o.data(), o.size()), o);
  EXPECT_EQ(a.rows(), 3u);
  IsoFaultScope scope;
  IsoAutomatonWalk<2, 0xFF> walk(a);
  auto outputs = [&] {
    std::vector<uint32_t> got;
    walk.for_each_output([&](uint32_t x, uint32_t y) { got.push_back(x * 1000 + y); });
    return got;
  };
  EXPECT_TRUE(outputs().empty());
  EXPECT_EQ(walk.step(1), 1u);
  EXPECT_EQ(outputs(), (std::vector<uint32_t>{7070, 8080}));
  (void)walk.step(1);
  EXPECT_EQ(walk.row(), 2u);
  EXPECT_EQ(outputs(), (std::vector<uint32_t>{9090}));
  EXPECT_FALSE(scope.faulted());
}

TEST(IsoAutomaton, ARangeOutsideTheOutputsIsRefusedWhenHandedOut) {
  const std::vector<uint32_t> t = dfa_of();
  const IsoDfa<2, 0xFF> dfa(IsoSpan<const uint32_t>(t.data(), t.size()), t);
  auto make = [&](const std::vector<uint32_t>& o) {
    return IsoAutomaton<2, 0xFF>(dfa, IsoSpan<const uint32_t>(o.data(), o.size()), o);
  };
  EXPECT_NO_THROW(make(outputs_of()));
  std::vector<uint32_t> o = outputs_of();
  o[3] = 7;  // row 1's range ends past the table's 6 rows
  EXPECT_THROW(make(o), std::invalid_argument);
  o = outputs_of();
  o[2] = 2;  // row 1's range starts among the rows' own ranges
  EXPECT_THROW(make(o), std::invalid_argument);
  o = outputs_of();
  o[4] = 6, o[5] = 5;  // row 2's range is reversed
  EXPECT_THROW(make(o), std::invalid_argument);
  o = {3, 3, 3, 3};  // fewer rows than the DFA's
  EXPECT_THROW(make(o), std::invalid_argument);
  o = outputs_of();
  o.pop_back();  // not whole rows
  EXPECT_THROW(make(o), std::invalid_argument);
  const std::vector<uint32_t> good = outputs_of(), host(good.begin(), good.end() - 2);
  EXPECT_THROW((IsoAutomaton<2, 0xFF>(dfa, IsoSpan<const uint32_t>(good.data(), good.size()), host)),
               std::invalid_argument);  // contents of another size
}

#if GPUNFV_CHECKED
// A walk over a default-made IsoAutomaton is refused and has no outputs, whatever scratch holds.
TEST(IsoAutomaton, AWalkOverNoTableIsRefusedAndHasNoOutputs) {
  const IsoAutomaton<2, 0xFF> none;
  IsoFaultScope scope;
  IsoAutomatonWalk<2, 0xFF> walk(none);
  EXPECT_TRUE(scope.faulted());
  uint32_t seen = 0;
  for (uint32_t c = 0; c < 8; ++c) {
    (void)walk.step(c);
    walk.for_each_output([&](uint32_t, uint32_t) { ++seen; });
  }
  EXPECT_EQ(seen, 0u);
}

TEST(IsoWalk, ARowPastTheTableIsRefusedAndReadsTheLastRow) {
  std::vector<uint32_t> t = table_of(3);
  t.push_back(99);  // a partial row is not reached
  IsoFaultScope scope;
  IsoWalk<const uint32_t, 2> walk(IsoSpan<const uint32_t>(t.data(), t.size()));
  EXPECT_EQ(walk.rows(), 3u);
  EXPECT_EQ(walk.at(1, 1), 11u);
  EXPECT_FALSE(scope.faulted());
  EXPECT_EQ(walk.at(3, 0), 20u);
  EXPECT_TRUE(scope.faulted());
  EXPECT_EQ(walk.at(0xFFFFFFFFu, 1), 21u);
  EXPECT_TRUE(scope.faulted());
  EXPECT_EQ(walk.at(2, 3), 23u);
  EXPECT_FALSE(scope.faulted());
}

TEST(IsoWalk, ARowOrAPairIsReadWithOneCheck) {
  const std::vector<uint32_t> t = table_of(3);
  const std::vector<uint32_t> ends = {5, 6, 7};
  IsoFaultScope scope;
  IsoWalk<const uint32_t, 2> walk(IsoSpan<const uint32_t>(t.data(), t.size()));
  const auto r = walk.row(2);
  EXPECT_EQ(r[0], 20u);
  EXPECT_EQ(r[3], 23u);
  EXPECT_FALSE(scope.faulted());
  EXPECT_EQ(walk.row(3)[1], 21u);  // past the table: the last row
  EXPECT_TRUE(scope.faulted());

  IsoWalk<const uint32_t, 0> csr(IsoSpan<const uint32_t>(ends.data(), ends.size()));
  EXPECT_EQ(csr.pair(0)[0], 5u);
  EXPECT_EQ(csr.pair(1)[1], 7u);
  EXPECT_FALSE(scope.faulted());
  const auto at_end = csr.pair(2);  // its second row is past the table
  EXPECT_EQ(at_end[0], 7u);
  EXPECT_EQ(at_end[1], 7u);
  EXPECT_TRUE(scope.faulted());
  const auto wrapped = csr.pair(0xFFFFFFFFu);
  EXPECT_EQ(wrapped[0], 7u);
  EXPECT_EQ(wrapped[1], 7u);
  EXPECT_TRUE(scope.faulted());
}

TEST(IsoWalk, ATableWithoutAWholeRowIsRefusedWhenTheWalkStarts) {
  const std::vector<uint32_t> t = {1, 2, 3};
  IsoFaultScope scope;
  IsoWalk<const uint32_t, 2> walk(IsoSpan<const uint32_t>(t.data(), t.size()));
  EXPECT_EQ(walk.rows(), 0u);
  EXPECT_TRUE(scope.faulted());
  (void)walk.at(0, 1);  // reads scratch, never the three elements or their neighbours
  EXPECT_FALSE(scope.faulted());  // row 0 is the scratch's
}

TEST(IsoWalk, ADefaultMadeTableIsRefusedWhenTheWalkStarts) {
  const IsoRows<const uint32_t, 2> none;
  IsoFaultScope scope;
  IsoWalk<const uint32_t, 2> walk(none);
  EXPECT_TRUE(scope.faulted());
  (void)walk.at(5, 0);  // scratch's row 0, not a null table
  EXPECT_TRUE(scope.faulted());
}

TEST(IsoWalk, AnEmptyTableInSharedMemoryIsWalkedOverItsSpareRow) {
  uint32_t spare[1] = {42};
  IsoFaultScope scope;
  IsoWalk<uint32_t, 0> walk(IsoSpan<uint32_t>(nullptr, 0), spare);
  EXPECT_EQ(walk.at(0), 42u);
  walk.at(0) = 7;
  EXPECT_FALSE(scope.faulted());
  EXPECT_EQ(walk.at(1), 7u);  // past the spare row too: refused, and reads it
  EXPECT_TRUE(scope.faulted());
  EXPECT_EQ(spare[0], 7u);
}

// A walk over a default-made IsoDfa (no table) is refused and reads scratch's first row only.
TEST(IsoDfa, AWalkOverNoTableIsRefusedAndStaysOnScratch) {
  const IsoDfa<2, 0xFF> none;
  IsoFaultScope scope;
  IsoDfaWalk<2, 0xFF> walk(none);
  EXPECT_TRUE(scope.faulted());
  for (uint32_t c = 0; c < 8; ++c) {
    (void)walk.step(c);
    EXPECT_EQ(walk.row(), 0u);
  }
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
