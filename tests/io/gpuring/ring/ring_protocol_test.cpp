// The ring protocol step by step on host memory, with the test playing the NIC by hand: tail
// batching (count and timeout), re-arming, the slot pool running dry, tx write-back versus
// head-register completion, and the tx ring never overrun.
#include <gtest/gtest.h>

#include "io/gpuring/ring/ring_set.h"
#include "io/gpuring/ring/rx_ring.h"
#include "io/gpuring/ring/tx_ring.h"
#include "nf/router/router_logic.h"

namespace gpunfv::gpuring {
namespace {

RingParams params(uint32_t ring_size, uint32_t batch, uint64_t timeout_ns, uint32_t slots = 0,
                  bool writeback = true) {
  RingParams p;
  p.rings = 1;
  p.ring_size = ring_size;
  p.slot_bytes = 128;
  p.slots_per_ring = slots;
  p.tail_batch = batch;
  p.tail_timeout_ns = timeout_ns;
  p.tx_writeback = writeback;
  return p;
}

// What the NIC does when a frame of `len` bytes lands in descriptor i.
void nic_writes_back(const RingSetView& v, uint32_t i, uint16_t len) {
  v.rx_desc[i].qword[0] = 0;
  v.rx_desc[i].qword[1] = rx_upper(kRxStatusDD | kRxStatusEOP, len, 0);
}

TEST(GpuRingProtocol, RegistersAtTheir82599Offsets) {
  RingSet rs(params(16, 4, 1'000'000'000), Placement::host);
  const QueueRegisters q3 = queue_registers(rs.view().bar, 3);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(q3.rdt) - rs.view().bar, 0x010D8);  // RDT[3]
  EXPECT_EQ(reinterpret_cast<uint8_t*>(q3.tdh) - rs.view().bar, 0x060D0);  // TDH[3]
  EXPECT_EQ(*rs.host_regs(0).rdt, 15u);
}

// The flags after the BAR each start a 64-byte line: a misaligned RunFlags is undefined
// behaviour and would share its line with the last registers.
TEST(GpuRingProtocol, RunFlagsAndDoneFlagsOn64ByteLines) {
  for (uint32_t rings : {1u, 3u, 128u}) {
    const MappedLayout m = mapped_layout(rings);
    EXPECT_EQ(m.flags % 64, 0u) << rings;
    EXPECT_EQ(m.done % 64, 0u) << rings;
    EXPECT_GE(m.flags, kBarBytes);
    EXPECT_GE(m.done, m.flags + sizeof(RunFlags));
    EXPECT_EQ(m.total, m.done + sizeof(RingDone) * rings);
  }
  RingParams p = params(16, 4, 1'000'000'000);
  p.rings = 3;
  RingSet rs(p, Placement::host);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(rs.host_flags()) % 64, 0u);
  for (uint32_t r = 0; r < 3; ++r) EXPECT_EQ(reinterpret_cast<uintptr_t>(rs.host_done() + r) % 64, 0u);
  EXPECT_EQ(rs.view().flags, rs.host_flags());
  EXPECT_EQ(rs.view().done, rs.host_done());
}

TEST(GpuRingProtocol, InitialStateArmsEveryDescriptor) {
  RingSet rs(params(16, 4, 1'000'000'000), Placement::host);
  const RingSetView& v = rs.view();
  EXPECT_EQ(*rs.host_regs(0).rdt, 15u);  // one descriptor held back: RDT == RDH means none
  for (uint32_t i = 0; i < 16; ++i) {
    EXPECT_EQ(v.rx_desc[i].read.pkt_addr, v.slot_bus(i));
    EXPECT_EQ(v.rx_desc[i].read.hdr_addr, 0u);
  }
  const SlotAudit a = rs.audit();
  EXPECT_TRUE(a.ok()) << a.describe();
  EXPECT_EQ(a.armed, 16u);
  EXPECT_EQ(a.free, 48u - 16u);
}

TEST(GpuRingProtocol, RxTailWrittenAfterBatchOfPackets) {
  RingSet rs(params(16, 4, 1'000'000'000), Placement::host);
  const RingSetView& v = rs.view();
  RxRing rx(v, 0);
  RxPacket pkt;
  EXPECT_EQ(rx.poll(pkt), RxRing::Poll::empty);
  for (uint32_t i = 0; i < 6; ++i) nic_writes_back(v, i, 60 + i);
  for (uint32_t i = 0; i < 3; ++i) {
    ASSERT_EQ(rx.poll(pkt), RxRing::Poll::packet);
    EXPECT_EQ(pkt.slot, i);
    EXPECT_EQ(pkt.length, 60 + i);
    EXPECT_EQ(*rs.host_regs(0).rdt, 15u) << "tail written before the batch was full";
  }
  ASSERT_EQ(rx.poll(pkt), RxRing::Poll::packet);
  EXPECT_EQ(*rs.host_regs(0).rdt, 3u);  // next_to_clean 4, minus the held-back one
  // Re-armed with fresh slots from the pool, DD cleared.
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(v.rx_desc[i].read.hdr_addr, 0u);
    EXPECT_GE(v.slot_of_bus(v.rx_desc[i].read.pkt_addr), 16u);
  }
  // Two more: below the batch, no tail write until the timeout (1 s) or a forced flush.
  ASSERT_EQ(rx.poll(pkt), RxRing::Poll::packet);
  ASSERT_EQ(rx.poll(pkt), RxRing::Poll::packet);
  rx.flush_tail(false);
  EXPECT_EQ(*rs.host_regs(0).rdt, 3u);
  rx.flush_tail(true);
  EXPECT_EQ(*rs.host_regs(0).rdt, 5u);
  EXPECT_EQ(v.rx_counters[0].tail_writes, 2u);
}

TEST(GpuRingProtocol, RxTailWrittenOnTimeout) {
  RingSet rs(params(16, 8, 0), Placement::host);  // timeout 0: any wait flushes
  const RingSetView& v = rs.view();
  RxRing rx(v, 0);
  RxPacket pkt;
  nic_writes_back(v, 0, 64);
  ASSERT_EQ(rx.poll(pkt), RxRing::Poll::packet);
  EXPECT_EQ(*rs.host_regs(0).rdt, 15u);
  rx.flush_tail(false);
  EXPECT_EQ(*rs.host_regs(0).rdt, 0u);
}

TEST(GpuRingProtocol, RxWaitsForASlotWhenThePoolIsEmpty) {
  RingSet rs(params(8, 1, 0, /*slots=*/9), Placement::host);  // one spare slot
  const RingSetView& v = rs.view();
  RxRing rx(v, 0);
  RxPacket first{}, second{};
  nic_writes_back(v, 0, 64);
  nic_writes_back(v, 1, 64);
  ASSERT_EQ(rx.poll(first), RxRing::Poll::packet);
  EXPECT_EQ(rx.poll(second), RxRing::Poll::no_slot);
  EXPECT_EQ(v.rx_counters[0].alloc_waits, 1u);
  // The NF drops the first packet: its slot is free again, and the second can be taken.
  rx.drop(first, drop_reason(RouterDrop::no_route));
  ASSERT_EQ(rx.poll(second), RxRing::Poll::packet);
  EXPECT_EQ(second.slot, 1u);
  EXPECT_EQ(v.rx_counters[0].drops[static_cast<int>(drop_reason(RouterDrop::no_route))], 1u);
  EXPECT_EQ(v.queues[0].freed_by_drop, 1u);
  EXPECT_EQ(v.queues[0].allocated, 2u);
}

void queue_packets(const RingSetView& v, uint32_t first_slot, uint32_t n, uint32_t len) {
  auto q = to_tx_queue(v, 0);
  for (uint32_t i = 0; i < n; ++i) ASSERT_TRUE(q.push(uint64_t(first_slot + i) | (uint64_t(len) << 32)));
}

TEST(GpuRingProtocol, TxWriteBackModeReusesDescriptorsOnlyAfterDD) {
  RingSet rs(params(8, 2, 1'000'000'000, 0, /*writeback=*/true), Placement::host);
  const RingSetView& v = rs.view();
  TxRing tx(v, 0);
  queue_packets(v, 8, 3, 100);
  EXPECT_EQ(tx.post(), 3u);
  EXPECT_EQ(*rs.host_regs(0).tdt, 2u);  // batch of 2 announced, the third waits
  EXPECT_EQ(v.tx_desc[0].read.cmd_type_len, tx_cmd_type_len(100, true));
  EXPECT_EQ(v.tx_desc[0].read.olinfo_status, 100u << kTxPaylenShift);
  EXPECT_EQ(v.slot_of_bus(v.tx_desc[2].read.buffer_addr), 10u);
  *rs.host_regs(0).tdh = 2;  // the head alone does not complete anything in this mode
  EXPECT_EQ(tx.reclaim(), 0u);
  v.tx_desc[0].wb.status = kTxStatusDD;
  EXPECT_EQ(tx.reclaim(), 1u);
  EXPECT_EQ(v.queues[0].freed_by_tx, 1u);
  EXPECT_EQ(tx.outstanding(), 2u);
}

TEST(GpuRingProtocol, TxHeadModeReadsTheHeadRegister) {
  RingSet rs(params(8, 1, 0, 0, /*writeback=*/false), Placement::host);
  const RingSetView& v = rs.view();
  TxRing tx(v, 0);
  queue_packets(v, 8, 3, 100);
  EXPECT_EQ(tx.post(), 3u);
  EXPECT_EQ(v.tx_desc[0].read.cmd_type_len & kTxDcmdRS, 0u);  // no write-back asked
  EXPECT_EQ(*rs.host_regs(0).tdt, 3u);
  v.tx_desc[0].wb.status = kTxStatusDD;  // ignored in this mode
  EXPECT_EQ(tx.reclaim(), 0u);
  *rs.host_regs(0).tdh = 2;
  EXPECT_EQ(tx.reclaim(), 2u);
  EXPECT_EQ(v.tx_counters[0].head_reads, 2u);
}

TEST(GpuRingProtocol, TxNeverOverrunsTheRing) {
  RingSet rs(params(8, 1, 0), Placement::host);
  const RingSetView& v = rs.view();
  TxRing tx(v, 0);
  queue_packets(v, 8, 12, 64);
  EXPECT_EQ(tx.post(), 7u);  // ring_size - 1 outstanding at most
  EXPECT_EQ(tx.post(), 0u);
  for (uint32_t i = 0; i < 3; ++i) v.tx_desc[i].wb.status = kTxStatusDD;
  EXPECT_EQ(tx.reclaim(), 3u);
  EXPECT_EQ(tx.post(), 3u);
  EXPECT_EQ(*rs.host_regs(0).tdt, 2u);  // wrapped: descriptors 7, 0, 1 posted
}

TEST(GpuRingProtocol, AuditFindsALostSlot) {
  RingSet rs(params(8, 1, 0), Placement::host);
  const RingSetView& v = rs.view();
  v.rx_slot[3] = v.rx_slot[2];  // a bug: two descriptors hold the same slot, slot 3 is lost
  const SlotAudit a = rs.audit();
  EXPECT_FALSE(a.ok());
  EXPECT_EQ(a.duplicates, 1u);
  EXPECT_EQ(a.missing, 1u);
}

}  // namespace
}  // namespace gpunfv::gpuring
