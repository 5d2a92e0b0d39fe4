// The table of drop reasons: the framework's own first, an NF type's added after them in order,
// the same owner's again at the same codes, a name taken twice refused, more codes than
// counters hold refused, and in an NF process the codes the Manager's table gives.
#include "core/drop_reason.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace gpunfv {
namespace {

TEST(DropReasons, FrameworkReasonsComeFirst) {
  EXPECT_EQ(drop_reason_name(DropReason::none), "none");
  EXPECT_EQ(drop_reason_name(DropReason::truncated_l2), "truncated_l2");
  EXPECT_EQ(drop_reason_name(DropReason::integrity_mismatch), "integrity_mismatch");
  EXPECT_EQ(int(DropReason::integrity_mismatch), kFrameworkDropReasons - 1);
  EXPECT_GE(drop_reason_count(), kFrameworkDropReasons);
  EXPECT_EQ(drop_reason_name(DropReason(kMaxDropReasons - 1)), "unknown");
}

TEST(DropReasons, AddedReasonsTakeTheNextCodesInOrder) {
  const DropReasonDecl decls[] = {{"test_first", "first test reason"},
                                  {"test_second", "second test reason"}};
  const int before = drop_reason_count();
  const uint8_t first = add_drop_reasons("test", decls);
  EXPECT_EQ(first, before);
  EXPECT_EQ(drop_reason_count(), before + 2);
  EXPECT_EQ(drop_reason_name(DropReason(first)), "test_first");
  EXPECT_EQ(drop_reason_name(DropReason(first + 1)), "test_second");
  EXPECT_EQ(drop_reason_description(DropReason(first + 1)), "second test reason");
}

TEST(DropReasons, ATakenNameIsRefusedWithNothingAdded) {
  const int before = drop_reason_count();
  const DropReasonDecl framework[] = {{"fresh_name", ""}, {"oversize", ""}};
  try {
    add_drop_reasons("clash", framework);
    FAIL() << "a framework reason's name was taken again";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("'oversize' is already declared"), std::string::npos);
  }
  const DropReasonDecl own[] = {{"test_twice", ""}};
  add_drop_reasons("first owner", own);
  EXPECT_THROW(add_drop_reasons("second owner", own), std::logic_error);
  EXPECT_EQ(drop_reason_count(), before + 1);
  EXPECT_EQ(drop_reason_name(DropReason(before)), "test_twice");
}

TEST(DropReasons, TheSameOwnerAgainGetsTheSameCodes) {
  const DropReasonDecl decls[] = {{"test_again", ""}};
  const uint8_t first = add_drop_reasons("again", decls);
  const int count = drop_reason_count();
  EXPECT_EQ(add_drop_reasons("again", decls), first);
  EXPECT_EQ(drop_reason_count(), count);
  const DropReasonDecl other[] = {{"test_again_other", ""}};
  EXPECT_THROW(add_drop_reasons("again", other), std::logic_error);  // not the same reasons
}

uint8_t g_given = 0;
uint8_t given_code(std::string_view, std::span<const DropReasonDecl>) { return g_given; }

TEST(DropReasons, ARegistrarGivesTheCodes) {
  // As in an NF process: the Manager's table already holds two codes this process never used.
  const int before = drop_reason_count();
  g_given = uint8_t(before + 2);
  set_drop_reason_registrar(&given_code);
  const DropReasonDecl decls[] = {{"test_given", "from the Manager"}};
  const uint8_t first = add_drop_reasons("given", decls);
  set_drop_reason_registrar(nullptr);
  EXPECT_EQ(first, before + 2);
  EXPECT_EQ(drop_reason_count(), before + 3);
  EXPECT_EQ(drop_reason_name(DropReason(first)), "test_given");
  EXPECT_EQ(drop_reason_name(DropReason(before)), "unknown");  // another process's
}

TEST(DropReasons, MoreCodesThanCountersHoldAreRefused) {
  std::vector<std::string> names;
  std::vector<DropReasonDecl> decls;
  const int room = kMaxDropReasons - drop_reason_count();
  names.reserve(size_t(room) + 1);
  for (int i = 0; i <= room; ++i) names.push_back("test_many_" + std::to_string(i));
  for (const std::string& n : names) decls.push_back({n.c_str(), ""});
  EXPECT_THROW(add_drop_reasons("many", decls), std::logic_error);
  EXPECT_LE(drop_reason_count(), kMaxDropReasons);
}

}  // namespace
}  // namespace gpunfv
