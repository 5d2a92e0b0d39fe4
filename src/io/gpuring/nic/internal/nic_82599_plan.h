// The register programming a real Intel 82599 (X520, ixgbe) needs so that its rx/tx queues run
// on the GPU's descriptor rings (io/gpuring/ring/ring_set.h), as pure functions: the plan is a list
// of register operations with the reason for each, applied in order by dpdk_nic.cpp to the
// NIC's BAR0 and checked by tests without a NIC. Offsets and bits are the 82599 datasheet's
// (sections 8.2.3.8 receive, 8.2.3.9 transmit), cross-checked against DPDK's ixgbe_type.h.
//
// What the plan assumes was done before (DPDK's ixgbe device setup, dpdk_nic.h): reset, link,
// MAC address and filters, RSS (MRQC, RETA), CRC stripping and the maximum frame size, with
// the queues configured but not started. The plan then points each queue at the GPU ring,
// enables it and the transmit and receive paths; teardown disables them in reverse.
//
// Errors: plan_82599_rings and plan_82599_teardown throw std::invalid_argument for a layout
// the 82599 cannot take (rings 0 or over 128, ring size not a multiple of 8 or over 65536
// descriptors, a descriptor ring not 128-byte aligned, a slot size not a multiple of 1 KiB or
// over 16 KiB).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpunfv::gpuring::ixgbe {

inline constexpr uint32_t kMaxQueues = 128;  // rx and tx queues of an 82599

// Per-queue register banks: queues 0..63 at 0x01000 + 0x40 n, rx queues 64..127 in a second
// bank at 0x0D000 + 0x40 (n - 64); tx queues are one bank of 128.
constexpr uint32_t rx_queue_base(uint32_t n) { return n < 64 ? 0x01000 + 0x40 * n : 0x0D000 + 0x40 * (n - 64); }
constexpr uint32_t rdbal(uint32_t n) { return rx_queue_base(n) + 0x00; }
constexpr uint32_t rdbah(uint32_t n) { return rx_queue_base(n) + 0x04; }
constexpr uint32_t rdlen(uint32_t n) { return rx_queue_base(n) + 0x08; }
constexpr uint32_t rdh(uint32_t n) { return rx_queue_base(n) + 0x10; }
constexpr uint32_t rdt(uint32_t n) { return rx_queue_base(n) + 0x18; }
constexpr uint32_t rxdctl(uint32_t n) { return rx_queue_base(n) + 0x28; }
// SRRCTL of queues 0..15 is addressed at 0x02100 + 4 n (an alias kept from the 82598, the
// address DPDK's IXGBE_SRRCTL uses for them), the others in their queue's bank.
constexpr uint32_t srrctl(uint32_t n) { return n <= 15 ? 0x02100 + 4 * n : rx_queue_base(n) + 0x14; }
constexpr uint32_t tx_queue_base(uint32_t n) { return 0x06000 + 0x40 * n; }
constexpr uint32_t tdbal(uint32_t n) { return tx_queue_base(n) + 0x00; }
constexpr uint32_t tdbah(uint32_t n) { return tx_queue_base(n) + 0x04; }
constexpr uint32_t tdlen(uint32_t n) { return tx_queue_base(n) + 0x08; }
constexpr uint32_t tdh(uint32_t n) { return tx_queue_base(n) + 0x10; }
constexpr uint32_t tdt(uint32_t n) { return tx_queue_base(n) + 0x18; }
constexpr uint32_t txdctl(uint32_t n) { return tx_queue_base(n) + 0x28; }
constexpr uint32_t tdwbal(uint32_t n) { return tx_queue_base(n) + 0x38; }
constexpr uint32_t tdwbah(uint32_t n) { return tx_queue_base(n) + 0x3C; }
inline constexpr uint32_t kRxctrl = 0x03000;
inline constexpr uint32_t kDmatxctl = 0x04A80;

inline constexpr uint32_t kRxctrlRxen = 1u << 0;
inline constexpr uint32_t kDmatxctlTe = 1u << 0;
inline constexpr uint32_t kQueueEnable = 1u << 25;  // RXDCTL.ENABLE and TXDCTL.ENABLE
inline constexpr uint32_t kSrrctlBsizePktMask = 0x1F;  // BSIZEPKT, in 1 KiB units
inline constexpr uint32_t kSrrctlDescAdvOneBuf = 1u << 25;  // DESCTYPE = 001
inline constexpr uint32_t kSrrctlDescTypeMask = 7u << 25;
inline constexpr uint32_t kSrrctlDropEn = 1u << 28;  // drop when the queue has no descriptor
inline constexpr uint32_t kTxdctlPthreshShift = 0, kTxdctlHthreshShift = 8, kTxdctlWthreshShift = 16;
inline constexpr uint32_t kTxdctlThreshMask = 0x7F7F7F;
inline constexpr uint32_t kTdwbalHeadWbEnable = 1u << 0;

// Where the GPU's rings lie for the NIC: bus addresses (IOVAs) of ring 0's descriptors; ring r
// follows at r * ring_size * 16 bytes.
struct NicRingLayout {
  uint32_t rings = 1;
  uint32_t ring_size = 512;
  uint32_t slot_bytes = 2048;
  uint64_t rx_desc_bus = 0;
  uint64_t tx_desc_bus = 0;
  bool tx_writeback = true;  // RingParams::tx_writeback
};

// One register operation: BAR0[offset] = (BAR0[offset] & ~mask) | value (mask ~0: a plain
// write, no read); then, when wait is set, poll until (BAR0[offset] & mask) == value (the
// datasheet's "poll until the enable bit reads back"), giving up after a deadline.
struct RegOp {
  uint32_t offset;
  uint32_t mask;
  uint32_t value;
  bool wait;
  std::string why;
};

// How tx completion reaches the GPU, per RingParams::tx_writeback, and the TXDCTL/TDWBAL values
// that give it. Write-back: the GPU sets RS on each descriptor and polls its DD bit, so the NIC
// must write each one back at once (WTHRESH 0; a larger WTHRESH batches write-backs and
// delays frees). No write-back: the GPU reads TDH across PCIe (tx_ring.h), no RS, no DD; head
// write-back to memory (TDWBAL) stays off in both, as the GPU side never reads it.
struct TxCompletionMode {
  uint32_t txdctl_thresholds;  // PTHRESH | HTHRESH | WTHRESH fields of TXDCTL
  uint32_t tdwbal;             // 0: head write-back off
  bool gpu_reads_tdh;          // the GPU polls the TDH register
  bool gpu_polls_dd;           // the GPU polls DD in the descriptors
  std::string describe() const;
};
TxCompletionMode tx_completion_82599(bool tx_writeback);

// Bring-up: per ring, rx base/length/head/tail and SRRCTL, then RXDCTL.ENABLE (polled), then
// RDT = ring_size - 1 (every descriptor but one armed, as RingSet's initial state has it); per
// ring, tx base/length/head/tail, head write-back off; DMATXCTL.TE; per ring TXDCTL with the
// completion mode's thresholds and ENABLE (polled); RXCTRL.RXEN last, once every queue is live.
std::vector<RegOp> plan_82599_rings(const NicRingLayout& l);
// Teardown, the reverse: RXCTRL.RXEN off first, then per ring (last first) TXDCTL and RXDCTL
// ENABLE off (polled) and the ring addresses cleared, DMATXCTL.TE off last.
std::vector<RegOp> plan_82599_teardown(const NicRingLayout& l);

// The highest register offset a plan touches, plus 4: how much of BAR0 must be mapped.
uint32_t plan_extent(const std::vector<RegOp>& plan);

}  // namespace gpunfv::gpuring::ixgbe
