// IsoSpan accesses out of bounds (core/iso_fault.h): inside an NF's fault scope they are refused
// and noted, never reaching memory outside the span; outside any scope (framework code) they
// abort.
#include "core/iso_fault.h"

#include <gtest/gtest.h>

#include <array>

#include "core/iso_span.h"

namespace gpunfv {
namespace {

TEST(IsoFault, RefusedInsideAScopeAndNotedOnce) {
  std::array<uint8_t, 12> memory{};
  IsoSpan<uint8_t> s(memory.data() + 2, 8);  // guard bytes on both sides
  IsoFaultScope scope;
  EXPECT_FALSE(scope.faulted());
  s[3] = 7;
  EXPECT_FALSE(scope.faulted());
  s[8] = 0xEE;  // one past the end: refused
  s[1000] = 0xEE;
  EXPECT_TRUE(scope.faulted());
  EXPECT_FALSE(scope.faulted());  // taken
  for (size_t i = 0; i < memory.size(); ++i) EXPECT_EQ(memory[i], i == 5 ? 7 : 0) << i;

  const uint8_t read = s[9];  // a read gets scratch, and is noted too
  (void)read;
  EXPECT_TRUE(scope.faulted());
}

TEST(IsoFault, RefusedSubspanViewsScratch) {
  std::array<uint32_t, 8> memory{};
  IsoSpan<uint32_t> s(memory.data(), 8);
  IsoFaultScope scope;
  IsoSpan<uint32_t> inside = s.subspan(2, 6);
  EXPECT_EQ(inside.size(), 6u);
  EXPECT_FALSE(scope.faulted());
  IsoSpan<uint32_t> past = s.subspan(4, 5);  // its count kept: it fits the scratch
  EXPECT_EQ(past.size(), 5u);
  EXPECT_TRUE(scope.faulted());
  for (uint32_t k = 0; k < past.size(); ++k) past[k] = 1;  // lands in scratch
  EXPECT_FALSE(scope.faulted());
  past[5] = 1;  // past the view: refused
  EXPECT_TRUE(scope.faulted());
  for (uint32_t v : memory) EXPECT_EQ(v, 0u);
  IsoSpan<uint32_t> huge = s.subspan(1, kIsoScratchBytes);  // more than the scratch holds
  EXPECT_TRUE(huge.empty());
  EXPECT_TRUE(scope.faulted());
}

TEST(IsoFault, ARunIsReadWholeOrRefused) {
  const std::array<uint32_t, 4> a = {10, 20, 30, 40};
  const IsoSpan<const uint32_t> s(a.data(), a.size());
  IsoFaultScope scope;
  const auto two = s.read<2>(2);
  EXPECT_EQ(two[0], 30u);
  EXPECT_EQ(two[1], 40u);
  EXPECT_FALSE(scope.faulted());
  s.read<2>(3);  // its second element is past the end
  EXPECT_TRUE(scope.faulted());
}

TEST(IsoFault, AViewOfMoreThan32BitsOfElementsViewsFewer) {
  std::array<uint8_t, 1> memory{};
  const IsoSpan<uint8_t> s(memory.data(), size_t(1) << 33);  // only ever read at 0 below
  EXPECT_EQ(s.size(), size_t(UINT32_MAX));
  IsoFaultScope scope;
  s[0] = 1;
  EXPECT_FALSE(scope.faulted());
  s[size_t(1) << 32] = 2;  // an index past 32 bits is refused, not cut to 0
  s[UINT32_MAX] = 2;
  EXPECT_TRUE(scope.faulted());
  EXPECT_EQ(memory[0], 1);
}

TEST(IsoFault, NestedScopesShareTheThreadsNote) {
  std::array<uint8_t, 4> memory{};
  IsoSpan<uint8_t> s(memory.data(), 4);
  IsoFaultScope outer;
  {
    IsoFaultScope inner;
    s[4] = 1;
  }
  EXPECT_TRUE(outer.faulted());
}

TEST(IsoFault, AScopeStartsWithoutANoteLeftBehind) {
  std::array<uint8_t, 4> memory{};
  IsoSpan<uint8_t> s(memory.data(), 4);
  {
    IsoFaultScope closed_without_taking_it;
    s[4] = 1;
  }
  IsoFaultScope scope;
  EXPECT_FALSE(scope.faulted());
}

TEST(IsoFaultDeathTest, OutsideAnyScopeAborts) {
  std::array<uint8_t, 4> memory{};
  IsoSpan<uint8_t> s(memory.data(), 4);
  EXPECT_DEATH(s[4] = 1, "out of bounds");
  EXPECT_DEATH(
      {
        { IsoFaultScope closed; }
        s[5] = 1;
      },
      "out of bounds");
}

}  // namespace
}  // namespace gpunfv
