// RingSet::bind_nic on a GPU: what a real NIC's attach (dpdk_nic.h) does to device rings once
// their memory is DMA-mapped: rx descriptors re-armed with the slots' bus addresses, the view's
// BAR swapped for the NIC's, and unbind_nic going back. A fake "BAR" stands in for the NIC's
// (no NIC here). Skipped where no CUDA device is present; host rings refuse to bind.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gpu/device.h"
#include "io/gpuring/ring/ring_set.h"

namespace gpunfv::gpuring {
namespace {

TEST(RingSetNicBindOnDevice, RearmsDescriptorsWithBusAddresses) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  RingParams p;
  p.rings = 2;
  p.ring_size = 64;
  p.slot_bytes = 2048;
  RingSet rs(p, Placement::device);
  const RingParams& q = rs.params();
  uint8_t* emulated_bar = rs.view().bar;
  std::vector<uint8_t> fake_bar(kBarBytes, 0);
  const uint64_t bus = 0x12'0000'0000ull;  // where an IOMMU would have put the ring memory
  rs.bind_nic(bus, fake_bar.data(), fake_bar.data());
  const uint64_t slots_off = uint64_t(rs.view().slots - rs.memory());
  EXPECT_EQ(rs.view().bus_base, bus + slots_off);
  EXPECT_EQ(rs.view().bar, fake_bar.data());
  EXPECT_EQ(reinterpret_cast<uint8_t*>(rs.host_regs(1).rdt), fake_bar.data() + 0x01018 + 0x40);

  const std::vector<uint8_t> meta = rs.copy_metadata();
  const auto* rx = reinterpret_cast<const RxDesc*>(meta.data() + rs.metadata_offset(rs.view().rx_desc));
  for (uint32_t r = 0; r < q.rings; ++r)
    for (uint32_t i = 0; i < q.ring_size; ++i) {
      const uint32_t slot = r * q.slots_per_ring + i;
      ASSERT_EQ(rx[r * q.ring_size + i].read.pkt_addr, bus + slots_off + uint64_t(slot) * q.slot_bytes)
          << "ring " << r << " descriptor " << i;
      ASSERT_EQ(rx[r * q.ring_size + i].read.hdr_addr, 0u);
    }
  // The slot pool is untouched by the re-arm: every slot still accounted for.
  EXPECT_TRUE(rs.audit().ok()) << rs.audit().describe();

  rs.unbind_nic();
  EXPECT_EQ(rs.view().bar, emulated_bar);
  EXPECT_EQ(rs.view().bus_base, reinterpret_cast<uint64_t>(rs.view().slots));
  EXPECT_NE(reinterpret_cast<uint8_t*>(rs.host_regs(0).rdt), fake_bar.data() + 0x01018);
}

}  // namespace
}  // namespace gpunfv::gpuring
