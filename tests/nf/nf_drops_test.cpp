// Drop reasons an NF declares (nf/nf_drops.h): an NF function's own reason becomes its code in
// the verdict, framework reasons pass through unchanged, and the names reach the reason table.
#include "nf/nf_drops.h"

#include <gtest/gtest.h>

namespace gpunfv {
namespace {

#define SAMPLE_DROPS(X)                     \
  X(sample_first, "the sample NF's first") \
  X(sample_second, "the sample NF's second")
GPUNFV_NF_DROP_REASONS(SampleDrop, "sample", SAMPLE_DROPS);

struct SampleLogic {
  using Drops = SampleDrop;
};
struct FrameworkOnlyLogic {};

TEST(NfDrops, OwnReasonsGetConsecutiveCodesOnce) {
  const uint8_t first = first_drop_code<SampleDrop>();
  EXPECT_GE(first, kFrameworkDropReasons);
  EXPECT_EQ(first_drop_code<SampleDrop>(), first);  // registered once
  EXPECT_EQ(drop_reason(SampleDrop::sample_first), DropReason(first));
  EXPECT_EQ(drop_reason(SampleDrop::sample_second), DropReason(first + 1));
  EXPECT_EQ(drop_reason_name(drop_reason(SampleDrop::sample_second)), "sample_second");
  EXPECT_EQ(drop_reason_description(drop_reason(SampleDrop::sample_first)), "the sample NF's first");
  EXPECT_EQ(first_drop_code_of<SampleLogic>(), first);
  EXPECT_EQ(first_drop_code_of<FrameworkOnlyLogic>(), 0);
}

TEST(NfDrops, VerdictCodes) {
  const uint8_t first = first_drop_code<SampleDrop>();
  EXPECT_TRUE(NfVerdict(DropReason::none).passes());
  EXPECT_FALSE(NfVerdict(SampleDrop::sample_first).passes());  // its local index is 0
  EXPECT_EQ(NfVerdict(SampleDrop::sample_first).code(first), first);
  EXPECT_EQ(NfVerdict(SampleDrop::sample_second).code(first), first + 1);
  EXPECT_EQ(NfVerdict(DropReason::not_ipv4).code(first), uint8_t(DropReason::not_ipv4));
  // A code already global (as tests' fake NFs return) is kept as it is.
  EXPECT_EQ(NfVerdict(drop_reason(SampleDrop::sample_second)).code(0), first + 1);
  EXPECT_EQ(NfVerdict(SampleDrop::sample_second), NfVerdict(SampleDrop::sample_second));
  EXPECT_NE(NfVerdict(SampleDrop::sample_first), NfVerdict(DropReason::none));
}

}  // namespace
}  // namespace gpunfv
