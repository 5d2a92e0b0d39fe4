// `nic:` on a gpuring port (a real 82599 instead of the emulator): the PCI address, what it
// excludes, and the limits the NIC's registers put on the rings, as ConfigErrors naming
// file:line.
#include <gtest/gtest.h>

#include "../port_test_util.h"
#include "gpuring_config_test_util.h"
#include "core/error.h"
#include "io/gpuring/gpuring_config.h"
#include "io/gpuring/nic/nic_precheck.h"

namespace gpunfv::gpuring {
namespace {

using test::yaml_node;

const auto expect_error = test_util::expect_config_error;

TEST(GpuRingNicConfig, PciAddressForms) {
  EXPECT_EQ(canonical_pci_address("0000:03:00.0"), "0000:03:00.0");
  EXPECT_EQ(canonical_pci_address("03:00.1"), "0000:03:00.1");
  EXPECT_EQ(canonical_pci_address("0001:AF:1f.7"), "0001:af:1f.7");
  for (const char* bad : {"", "03:00", "3:00.0", "0000:03:00.8", "0000:03:20.0", "0000:03:00.0x", "00000:03:00.0",
                          "0000-03-00.0", "eth0", "0000:0g:00.0", "0000:03:00."})
    EXPECT_EQ(canonical_pci_address(bad), std::nullopt) << bad;
}

TEST(GpuRingNicConfig, NicReplacesTheEmulator) {
  const GpuRingConfig c = GpuRingConfig::parse(
      yaml_node("name: gr\ntype: gpuring\nnic: 03:00.0\nrings: 100\nslot_bytes: 4096\neal: [-l, '0-1']"));
  EXPECT_TRUE(c.real_nic());
  EXPECT_EQ(c.nic, "0000:03:00.0");
  EXPECT_NE(c.nic_where.find("/tmp/cfg.yaml:3"), std::string::npos) << c.nic_where;
  EXPECT_EQ(c.rings.rings, 100u);
  EXPECT_FALSE(c.has_source());
  ASSERT_TRUE(c.port_node.has_value());
  EXPECT_TRUE(c.port_node->has("eal"));
  EXPECT_FALSE(GpuRingConfig::parse(yaml_node("name: gr\ntype: gpuring\nsource: g")).real_nic());
}

TEST(GpuRingNicConfig, BadValuesNameFileAndLine) {
  const std::string head = "name: gr\ntype: gpuring\nnic: 0000:03:00.0\n";  // lines 1-3
  expect_error("name: gr\ntype: gpuring\nnic: 0000:03:00", "not a PCI address", 3);
  expect_error("name: gr\ntype: gpuring\nnic: eth0", "not a PCI address", 3);
  expect_error(head + "source: gen", "NIC emulator setting", 4);
  expect_error(head + "sink: {type: discard}", "NIC emulator setting", 4);
  expect_error(head + "rate: 1Mpps", "NIC emulator setting", 4);
  expect_error(head + "dma: single", "NIC emulator setting", 4);
  expect_error(head + "flow_control: true", "NIC emulator setting", 4);
  expect_error(head + "burst: 8", "NIC emulator setting", 4);
  expect_error(head + "rings: 129", "out of range", 4);
  expect_error(head + "slot_bytes: 1536", "multiple of 1024", 4);
  expect_error(head + "slot_bytes: 1024", "at least 2048", 4);
  expect_error(head + "placement: host", "GPU memory", 4);
  expect_error("name: gr\ntype: gpuring\nsource: gen\neal: [-l, '0']", "needs nic:", 4);
}

TEST(GpuRingNicConfig, DefaultSlotSizeFitsTheNic) {
  const GpuRingConfig c = GpuRingConfig::parse(yaml_node("name: gr\ntype: gpuring\nnic: 0000:03:00.0"));
  EXPECT_EQ(c.rings.slot_bytes, 2048u);
  EXPECT_EQ(c.placement, Placement::device);
}

}  // namespace
}  // namespace gpunfv::gpuring
