// The 82599 register plan for GPU rings (nic_82599_plan.h): register offsets against the
// datasheet's map, the values written, and the order the datasheet asks for (ring addresses
// before a queue is enabled, the transmit DMA before tx queues, receive last), for 1 to 100
// rings; the GPU side's tail/head registers at the same offsets; teardown in reverse.
#include "io/gpuring/nic/internal/nic_82599_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <vector>

#include "io/gpuring/ring/descriptors.h"
#include "io/gpuring/ring/ring_set_view.h"

namespace gpunfv::gpuring::ixgbe {
namespace {

constexpr uint32_t kAll = ~0u;

TEST(Nic82599Registers, OffsetsMatchTheDatasheet) {
  // Spot values written out by hand from the 82599 datasheet's register summary.
  EXPECT_EQ(rdbal(0), 0x01000u);
  EXPECT_EQ(rdbah(1), 0x01044u);
  EXPECT_EQ(rdlen(63), 0x01FC8u);
  EXPECT_EQ(rdbal(64), 0x0D000u);
  EXPECT_EQ(rdt(99), 0x0D8D8u);
  EXPECT_EQ(rxdctl(127), 0x0DFE8u);
  EXPECT_EQ(srrctl(0), 0x02100u);
  EXPECT_EQ(srrctl(15), 0x0213Cu);
  EXPECT_EQ(srrctl(16), 0x01414u);
  EXPECT_EQ(srrctl(64), 0x0D014u);
  EXPECT_EQ(tdbal(0), 0x06000u);
  EXPECT_EQ(tdbal(99), 0x078C0u);
  EXPECT_EQ(txdctl(127), 0x07FE8u);
  EXPECT_EQ(tdwbal(2), 0x060B8u);
  EXPECT_EQ(kRxctrl, 0x03000u);
  EXPECT_EQ(kDmatxctl, 0x04A80u);
}

TEST(Nic82599Registers, GpuSideWritesTheRealTailAndHeadRegisters) {
  // The ring loops reach RDT/TDT/TDH through queue_registers (ring_set_view.h); on a real NIC
  // `bar` is BAR0, so each must land on the register the plan programs.
  // A BAR-sized buffer, not a null base: an offset added to a null pointer is undefined
  // (UBSan's pointer-overflow check).
  std::vector<uint8_t> bytes(kBarBytes);
  uint8_t* bar = bytes.data();
  auto offset = [&](const uint32_t* reg) { return uintptr_t(reinterpret_cast<const uint8_t*>(reg) - bar); };
  for (uint32_t n = 0; n < kMaxQueues; ++n) {
    const QueueRegisters q = queue_registers(bar, n);
    EXPECT_EQ(offset(q.rdh), rdh(n)) << n;
    EXPECT_EQ(offset(q.rdt), rdt(n)) << n;
    EXPECT_EQ(offset(q.tdh), tdh(n)) << n;
    EXPECT_EQ(offset(q.tdt), tdt(n)) << n;
    EXPECT_LE(rdt(n) + 4, kBarBytes);
    EXPECT_LE(tdt(n) + 4, kBarBytes);
  }
}

NicRingLayout layout(uint32_t rings, bool writeback = true) {
  NicRingLayout l;
  l.rings = rings;
  l.ring_size = 512;
  l.slot_bytes = 2048;
  l.rx_desc_bus = 0x1'2345'6000ull;
  l.tx_desc_bus = 0x1'2349'6000ull;
  l.tx_writeback = writeback;
  return l;
}

// Index of the first op at `offset` matching (mask, value) from `from`, or -1.
long find(const std::vector<RegOp>& ops, uint32_t offset, uint32_t mask, uint32_t value, size_t from = 0) {
  for (size_t i = from; i < ops.size(); ++i)
    if (ops[i].offset == offset && ops[i].mask == mask && ops[i].value == value) return long(i);
  return -1;
}

class Nic82599Plan : public ::testing::TestWithParam<uint32_t> {};

TEST_P(Nic82599Plan, ProgramsEveryRingThenEnablesInOrder) {
  const uint32_t rings = GetParam();
  const NicRingLayout l = layout(rings);
  const std::vector<RegOp> ops = plan_82599_rings(l);
  const uint32_t ring_bytes = l.ring_size * sizeof(RxDesc);
  EXPECT_EQ(ring_bytes, 8192u);
  const long te = find(ops, kDmatxctl, kDmatxctlTe, kDmatxctlTe);
  ASSERT_GE(te, 0);
  // Receive enable is the very last operation.
  ASSERT_FALSE(ops.empty());
  EXPECT_EQ(ops.back().offset, kRxctrl);
  EXPECT_EQ(ops.back().mask, kRxctrlRxen);
  EXPECT_EQ(ops.back().value, kRxctrlRxen);
  for (uint32_t n = 0; n < rings; ++n) {
    SCOPED_TRACE(n);
    const uint64_t rx_bus = l.rx_desc_bus + uint64_t(n) * ring_bytes;
    const uint64_t tx_bus = l.tx_desc_bus + uint64_t(n) * ring_bytes;
    const long bal = find(ops, rdbal(n), kAll, uint32_t(rx_bus));
    const long bah = find(ops, rdbah(n), kAll, uint32_t(rx_bus >> 32));
    const long len = find(ops, rdlen(n), kAll, ring_bytes);
    const long head = find(ops, rdh(n), kAll, 0);
    const long srr = find(ops, srrctl(n), 0x1F | (7u << 25) | (1u << 28), 2 | (1u << 25) | (1u << 28));
    const long en = find(ops, rxdctl(n), kQueueEnable, kQueueEnable);
    const long tail = find(ops, rdt(n), kAll, l.ring_size - 1);
    for (long i : {bal, bah, len, head, srr, en, tail}) ASSERT_GE(i, 0);
    EXPECT_TRUE(ops[size_t(en)].wait);
    for (long i : {bal, bah, len, head, srr}) EXPECT_LT(i, en);
    EXPECT_LT(en, tail);
    const long tbal = find(ops, tdbal(n), kAll, uint32_t(tx_bus));
    const long tbah = find(ops, tdbah(n), kAll, uint32_t(tx_bus >> 32));
    const long tlen = find(ops, tdlen(n), kAll, ring_bytes);
    const long thead = find(ops, tdh(n), kAll, 0);
    const long ttail = find(ops, tdt(n), kAll, 0);
    const long wb = find(ops, tdwbal(n), kAll, 0);
    const long ten = find(ops, txdctl(n), 0x7F7F7F | kQueueEnable, 32 | kQueueEnable);
    for (long i : {tbal, tbah, tlen, thead, ttail, wb, ten}) ASSERT_GE(i, 0);
    for (long i : {tbal, tbah, tlen, thead, ttail, wb}) EXPECT_LT(i, te);
    EXPECT_LT(te, ten);
    EXPECT_TRUE(ops[size_t(ten)].wait);
  }
  // Nothing else: rx 6 + 2 per ring, tx 7 + 1 per ring, TE and RXEN.
  EXPECT_EQ(ops.size(), size_t(rings) * 16 + 2);
  // Only the registers of the configured queues are touched.
  for (const RegOp& op : ops) EXPECT_FALSE(op.why.empty());
  EXPECT_EQ(find(ops, rdbal(rings), kAll, 0), -1);
}

TEST_P(Nic82599Plan, TeardownReversesIt) {
  const uint32_t rings = GetParam();
  const std::vector<RegOp> ops = plan_82599_teardown(layout(rings));
  ASSERT_FALSE(ops.empty());
  EXPECT_EQ(ops.front().offset, kRxctrl);
  EXPECT_EQ(ops.front().value, 0u);
  EXPECT_EQ(ops.back().offset, kDmatxctl);
  EXPECT_EQ(ops.back().value, 0u);
  long last = 0;
  for (uint32_t k = rings; k-- > 0;) {
    const long tx = find(ops, txdctl(k), kQueueEnable, 0);
    const long rx = find(ops, rxdctl(k), kQueueEnable, 0);
    ASSERT_GE(tx, 0);
    ASSERT_GE(rx, 0);
    EXPECT_GT(tx, last) << "ring " << k << " torn down before a higher one";
    EXPECT_TRUE(ops[size_t(rx)].wait);
    EXPECT_LT(rx, find(ops, rdbal(k), kAll, 0));
    last = rx;
  }
}

INSTANTIATE_TEST_SUITE_P(Rings, Nic82599Plan, ::testing::Values(1u, 2u, 8u, 64u, 100u));

TEST(Nic82599Plan, HighQueuesUseTheSecondRxBank) {
  const std::vector<RegOp> ops = plan_82599_rings(layout(100));
  std::map<uint32_t, int> writes;
  for (const RegOp& op : ops) ++writes[op.offset];
  EXPECT_EQ(writes[0x0D000], 1);  // RDBAL(64)
  EXPECT_EQ(writes[0x0D8C0], 1);  // RDBAL(99)
  EXPECT_EQ(writes[0x0D8D8], 2);  // RDT(99): 0, then ring_size - 1
  EXPECT_EQ(writes[0x0D8D4], 1);  // SRRCTL(99)
  EXPECT_EQ(writes[0x0D900], 0);  // RDBAL(100): not configured
  EXPECT_EQ(writes[0x078C0], 1);  // TDBAL(99)
  EXPECT_EQ(plan_extent(ops), 0x0D8E8u + 4);  // RXDCTL(99)
}

TEST(Nic82599Plan, TxCompletionModes) {
  const TxCompletionMode wb = tx_completion_82599(true);
  EXPECT_TRUE(wb.gpu_polls_dd);
  EXPECT_FALSE(wb.gpu_reads_tdh);
  EXPECT_EQ((wb.txdctl_thresholds >> kTxdctlWthreshShift) & 0x7F, 0u) << "DD must be written back at once";
  EXPECT_EQ(wb.tdwbal & kTdwbalHeadWbEnable, 0u);
  const TxCompletionMode head = tx_completion_82599(false);
  EXPECT_TRUE(head.gpu_reads_tdh);
  EXPECT_FALSE(head.gpu_polls_dd);
  EXPECT_EQ(head.tdwbal, 0u);
  // What the GPU side's descriptors ask for agrees: RS (report status) only with write-back.
  EXPECT_NE(tx_cmd_type_len(64, true) & kTxDcmdRS, 0u);
  EXPECT_EQ(tx_cmd_type_len(64, false) & kTxDcmdRS, 0u);
  EXPECT_NE(head.describe().find("TDH"), std::string::npos);
  const std::vector<RegOp> ops = plan_82599_rings(layout(2, false));
  EXPECT_GE(find(ops, txdctl(1), 0x7F7F7F | kQueueEnable, head.txdctl_thresholds | kQueueEnable), 0);
}

TEST(Nic82599Plan, RefusesWhatTheNicCannotTake) {
  NicRingLayout l = layout(1);
  l.rings = 0;
  EXPECT_THROW(plan_82599_rings(l), std::invalid_argument);
  l.rings = 129;
  EXPECT_THROW(plan_82599_rings(l), std::invalid_argument);
  l = layout(1);
  l.slot_bytes = 1536;
  EXPECT_THROW(plan_82599_rings(l), std::invalid_argument);
  l.slot_bytes = 32768;
  EXPECT_THROW(plan_82599_rings(l), std::invalid_argument);
  l = layout(1);
  l.rx_desc_bus += 64;
  EXPECT_THROW(plan_82599_rings(l), std::invalid_argument);
  l = layout(1);
  l.ring_size = 12;
  EXPECT_THROW(plan_82599_teardown(l), std::invalid_argument);
  l.ring_size = 65536;
  EXPECT_THROW(plan_82599_rings(l), std::invalid_argument);
}

}  // namespace
}  // namespace gpunfv::gpuring::ixgbe
