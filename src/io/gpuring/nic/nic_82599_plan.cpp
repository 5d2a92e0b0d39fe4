#include "io/gpuring/nic/internal/nic_82599_plan.h"

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

namespace gpunfv::gpuring::ixgbe {

namespace {

constexpr uint32_t kAll = ~0u;
constexpr uint32_t kDescBytes = 16;

// TXDCTL.PTHRESH: prefetch when fewer than this many descriptors are cached on chip (DPDK's
// ixgbe default, 32); HTHRESH 0: prefetch as soon as any descriptor is there.
constexpr uint32_t kTxPthresh = 32;

void check(const NicRingLayout& l) {
  if (l.rings == 0 || l.rings > kMaxQueues)
    throw std::invalid_argument(fmt::format("82599: {} rings; the NIC has 1..{} queues", l.rings, kMaxQueues));
  // RDLEN/TDLEN count bytes in multiples of 128 (8 descriptors), in 20 bits.
  if (l.ring_size == 0 || l.ring_size % 8 != 0 || uint64_t(l.ring_size) * kDescBytes >= (1u << 20))
    throw std::invalid_argument(
        fmt::format("82599: ring_size {} must be a multiple of 8 below 65536", l.ring_size));
  if (l.rx_desc_bus % 128 != 0 || l.tx_desc_bus % 128 != 0)
    throw std::invalid_argument(fmt::format("82599: descriptor rings must be 128-byte aligned (rx {:#x}, tx {:#x})",
                                            l.rx_desc_bus, l.tx_desc_bus));
  if (l.slot_bytes == 0 || l.slot_bytes % 1024 != 0 || l.slot_bytes > 16384)
    throw std::invalid_argument(fmt::format(
        "82599: slot_bytes {} must be a multiple of 1024 up to 16384 (SRRCTL.BSIZEPKT)", l.slot_bytes));
}

RegOp write(uint32_t offset, uint32_t value, std::string why) { return {offset, kAll, value, false, std::move(why)}; }
RegOp set_bits(uint32_t offset, uint32_t mask, uint32_t value, bool wait, std::string why) {
  return {offset, mask, value, wait, std::move(why)};
}

}  // namespace

std::string TxCompletionMode::describe() const {
  return fmt::format("TXDCTL thresholds {:#x}, TDWBAL {:#x}: the GPU {}", txdctl_thresholds, tdwbal,
                     gpu_polls_dd ? "sets RS and polls DD in the descriptors"
                                  : "reads the TDH register (no RS, no write-back)");
}

TxCompletionMode tx_completion_82599(bool tx_writeback) {
  TxCompletionMode m{};
  // WTHRESH 0 in both modes: with write-back every RS descriptor is written back as soon as it
  // is sent; without, nothing is written back (no descriptor has RS).
  m.txdctl_thresholds = kTxPthresh << kTxdctlPthreshShift;
  m.tdwbal = 0;
  m.gpu_polls_dd = tx_writeback;
  m.gpu_reads_tdh = !tx_writeback;
  return m;
}

std::vector<RegOp> plan_82599_rings(const NicRingLayout& l) {
  check(l);
  const uint32_t ring_bytes = l.ring_size * kDescBytes;
  const TxCompletionMode tx = tx_completion_82599(l.tx_writeback);
  std::vector<RegOp> ops;
  for (uint32_t n = 0; n < l.rings; ++n) {
    const uint64_t bus = l.rx_desc_bus + uint64_t(n) * ring_bytes;
    ops.push_back(write(rdbal(n), uint32_t(bus), fmt::format("rx {}: descriptor ring bus address, low", n)));
    ops.push_back(write(rdbah(n), uint32_t(bus >> 32), fmt::format("rx {}: descriptor ring bus address, high", n)));
    ops.push_back(write(rdlen(n), ring_bytes, fmt::format("rx {}: ring length in bytes", n)));
    ops.push_back(write(rdh(n), 0, fmt::format("rx {}: head 0", n)));
    ops.push_back(write(rdt(n), 0, fmt::format("rx {}: tail 0 until the queue is enabled", n)));
    ops.push_back(set_bits(srrctl(n), kSrrctlBsizePktMask | kSrrctlDescTypeMask | kSrrctlDropEn,
                           (l.slot_bytes / 1024) | kSrrctlDescAdvOneBuf | kSrrctlDropEn, false,
                           fmt::format("rx {}: advanced one-buffer descriptors, {} KiB buffers, drop when full", n,
                                       l.slot_bytes / 1024)));
  }
  for (uint32_t n = 0; n < l.rings; ++n) {
    ops.push_back(set_bits(rxdctl(n), kQueueEnable, kQueueEnable, true, fmt::format("rx {}: enable, wait for it", n)));
    ops.push_back(write(rdt(n), l.ring_size - 1,
                        fmt::format("rx {}: arm all descriptors but one (RingSet's initial RDT)", n)));
  }
  for (uint32_t n = 0; n < l.rings; ++n) {
    const uint64_t bus = l.tx_desc_bus + uint64_t(n) * ring_bytes;
    ops.push_back(write(tdbal(n), uint32_t(bus), fmt::format("tx {}: descriptor ring bus address, low", n)));
    ops.push_back(write(tdbah(n), uint32_t(bus >> 32), fmt::format("tx {}: descriptor ring bus address, high", n)));
    ops.push_back(write(tdlen(n), ring_bytes, fmt::format("tx {}: ring length in bytes", n)));
    ops.push_back(write(tdh(n), 0, fmt::format("tx {}: head 0", n)));
    ops.push_back(write(tdt(n), 0, fmt::format("tx {}: tail 0 (nothing posted)", n)));
    ops.push_back(write(tdwbal(n), tx.tdwbal, fmt::format("tx {}: head write-back off", n)));
    ops.push_back(write(tdwbah(n), 0, fmt::format("tx {}: head write-back address, high", n)));
  }
  ops.push_back(set_bits(kDmatxctl, kDmatxctlTe, kDmatxctlTe, false, "transmit DMA on, before any tx queue is enabled"));
  for (uint32_t n = 0; n < l.rings; ++n)
    ops.push_back(set_bits(txdctl(n), kTxdctlThreshMask | kQueueEnable, tx.txdctl_thresholds | kQueueEnable, true,
                           fmt::format("tx {}: thresholds ({}) and enable, wait for it", n,
                                       l.tx_writeback ? "DD write-back at once" : "no write-back, GPU reads TDH")));
  ops.push_back(set_bits(kRxctrl, kRxctrlRxen, kRxctrlRxen, false, "receive on, last: every queue is live"));
  return ops;
}

std::vector<RegOp> plan_82599_teardown(const NicRingLayout& l) {
  check(l);
  std::vector<RegOp> ops;
  ops.push_back(set_bits(kRxctrl, kRxctrlRxen, 0, false, "receive off first: no frame lands in a ring being taken away"));
  for (uint32_t k = l.rings; k-- > 0;) {
    ops.push_back(set_bits(txdctl(k), kQueueEnable, 0, true, fmt::format("tx {}: disable, wait for it", k)));
    ops.push_back(set_bits(rxdctl(k), kQueueEnable, 0, true, fmt::format("rx {}: disable, wait for it", k)));
    ops.push_back(write(tdbal(k), 0, fmt::format("tx {}: forget the GPU ring, low", k)));
    ops.push_back(write(tdbah(k), 0, fmt::format("tx {}: forget the GPU ring, high", k)));
    ops.push_back(write(rdbal(k), 0, fmt::format("rx {}: forget the GPU ring, low", k)));
    ops.push_back(write(rdbah(k), 0, fmt::format("rx {}: forget the GPU ring, high", k)));
  }
  ops.push_back(set_bits(kDmatxctl, kDmatxctlTe, 0, false, "transmit DMA off, last"));
  return ops;
}

uint32_t plan_extent(const std::vector<RegOp>& plan) {
  uint32_t end = 0;
  for (const RegOp& op : plan) end = std::max(end, op.offset + 4);
  return end;
}

}  // namespace gpunfv::gpuring::ixgbe
