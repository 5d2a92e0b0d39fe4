// NIDS collect()'s first pass (nids_alerting_packets): the packets of a range that reached the
// NIDS node and for which a rule fired, in packet order, from the `fired` word alone.
#include <gtest/gtest.h>

#include <vector>

#include "nf/nids/nids.h"
#include "nf/firewall/firewall_logic.h"
#include "nf/nids/nids_logic.h"

namespace gpunfv {
namespace {

constexpr uint32_t kOffset = 8, kStride = 44;  // NIDS's slice after another NF's 8 bytes
constexpr uint8_t kNode = 1;

class AlertBatch {
 public:
  explicit AlertBatch(uint32_t count) : b_(count ? count : 1, 64, MemoryKind::host, kStride) {
    b_.set_count(count);
    const BatchView v = b_.view();
    for (uint32_t i = 0; i < count; ++i) {
      v.visited[i] = 0b11;  // nodes 0 and 1
      v.verdict[i] = uint8_t(DropReason::none);
      v.next_nf[i] = kChainDone;
      // The other NF's bytes: never read as NIDS's.
      for (uint32_t k = 0; k < kOffset; ++k) v.results[size_t(i) * kStride + k] = 0xFF;
      set_fired(i, 0);
    }
  }
  void set_fired(uint32_t i, uint32_t fired, uint32_t rule = 3) {
    NidsResult r;
    for (uint32_t k = 0; k < fired; ++k) r.add(rule + k);
    const BatchView v = b_.view();
    r.store(v.results.subspan(size_t(i) * kStride + kOffset, kNidsResultBytes));
  }
  // Reached node 0 only (an earlier NF dropped it, or a branch took it elsewhere).
  void not_reaching(uint32_t i) {
    b_.view().visited[i] = 0b01;
    b_.view().verdict[i] = uint8_t(drop_reason(FirewallDrop::firewall_rule));
    b_.view().next_nf[i] = 0;
  }
  // Dropped by the NIDS itself (action drop): it reached the node, its record is valid.
  void dropped_here(uint32_t i) {
    b_.view().verdict[i] = uint8_t(drop_reason(NidsDrop::nids_match));
    b_.view().next_nf[i] = kNode;
  }
  std::vector<uint32_t> alerting(uint32_t begin = 0, uint32_t end = ~0u) const {
    const BatchView v = b_.view();
    if (end == ~0u) end = v.count;
    std::vector<uint32_t> out(end - begin + 1, 0xDEAD);
    out.resize(nids_alerting_packets(v, kNode, kOffset, begin, end, out.data()));
    return out;
  }

 private:
  Batch b_;
};

TEST(NidsAlertingPackets, NoAlert) {
  AlertBatch b(100);
  EXPECT_TRUE(b.alerting().empty());
  EXPECT_TRUE(AlertBatch(0).alerting().empty());
}

TEST(NidsAlertingPackets, AllAlerting) {
  AlertBatch b(100);
  std::vector<uint32_t> want;
  for (uint32_t i = 0; i < 100; ++i) b.set_fired(i, 1 + i % 9), want.push_back(i);
  EXPECT_EQ(b.alerting(), want);
}

TEST(NidsAlertingPackets, FirstAndLastPacket) {
  AlertBatch b(100);
  b.set_fired(0, 1);
  b.set_fired(99, 8);
  EXPECT_EQ(b.alerting(), (std::vector<uint32_t>{0, 99}));
  AlertBatch one(1);
  one.set_fired(0, 2);
  EXPECT_EQ(one.alerting(), (std::vector<uint32_t>{0}));
}

TEST(NidsAlertingPackets, OnlyPacketsThatReachedTheNode) {
  AlertBatch b(10);
  for (uint32_t i = 0; i < 10; ++i) b.set_fired(i, 1);
  b.not_reaching(0);  // a stale record (from an earlier batch) must not count
  b.not_reaching(5);
  b.not_reaching(9);
  EXPECT_EQ(b.alerting(), (std::vector<uint32_t>{1, 2, 3, 4, 6, 7, 8}));
}

TEST(NidsAlertingPackets, PacketsTheNidsDroppedStillAlert) {
  AlertBatch b(6);
  b.set_fired(2, 1);
  b.dropped_here(2);
  b.set_fired(4, 3);
  b.dropped_here(4);
  b.dropped_here(5);  // dropped with no rule fired cannot happen, but would not alert
  EXPECT_EQ(b.alerting(), (std::vector<uint32_t>{2, 4}));
}

TEST(NidsAlertingPackets, ARangeOfTheBatch) {
  AlertBatch b(20);
  for (uint32_t i : {0u, 4u, 5u, 10u, 19u}) b.set_fired(i, 1);
  EXPECT_EQ(b.alerting(0, 5), (std::vector<uint32_t>{0, 4}));
  EXPECT_EQ(b.alerting(5, 20), (std::vector<uint32_t>{5, 10, 19}));
  EXPECT_TRUE(b.alerting(11, 11).empty());
}

}  // namespace
}  // namespace gpunfv
