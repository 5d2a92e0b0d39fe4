// IngressOrder (nf/ipsec/ingress_order.h) for an NF that starts mid-run: a port first seen at
// batch N starts there instead of waiting for batches 0..N-1, which it will never see.
#include "nf/ipsec/ingress_order.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/fixtures/frame_batch.h"
#include "tests/fixtures/frames.h"

namespace gpunfv::esp {
namespace {

using fixtures::FrameBatch;

FrameBatch numbered_from(uint64_t first_seq) {
  return FrameBatch(std::vector<std::vector<uint8_t>>(4, fixtures::ipv4_frame({})),
                    {.first_seq = first_seq});
}

TEST(IngressOrder, MidRunStartsAtTheFirstBatchSeen) {
  IngressOrder order("test");
  order.resume_mid_run();
  std::vector<uint64_t> ran;
  FrameBatch later = numbered_from(5000), next = numbered_from(5004);
  order.run(later.view(), 0, 4, 0, [&] { ran.push_back(5000); });  // would wait for 0..4999
  order.run(next.view(), 0, 4, 0, [&] { ran.push_back(5004); });
  EXPECT_EQ(ran, (std::vector<uint64_t>{5000, 5004}));
}

TEST(IngressOrder, InOrderBatchesRunAtOnce) {
  IngressOrder order("test");
  std::vector<uint64_t> ran;
  FrameBatch first = numbered_from(0), second = numbered_from(4);
  order.run(first.view(), 0, 4, 0, [&] { ran.push_back(0); });
  order.run(second.view(), 0, 4, 0, [&] { ran.push_back(4); });
  EXPECT_EQ(ran, (std::vector<uint64_t>{0, 4}));
}

}  // namespace
}  // namespace gpunfv::esp
