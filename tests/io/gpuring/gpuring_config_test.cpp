// `type: gpuring` configuration: defaults, every key, and bad values as ConfigErrors naming
// file:line.
#include "io/gpuring/gpuring_config.h"

#include <gtest/gtest.h>

#include "../port_test_util.h"
#include "gpuring_config_test_util.h"
#include "core/error.h"
#include "io/gpuring/gpuring_port.h"
#include "io/port_factory.h"

namespace gpunfv::gpuring {
namespace {

using test::yaml_node;

TEST(GpuRingConfig, DefaultsAndInlineSource) {
  auto port = make_port(yaml_node("name: gr\ntype: gpuring\nsource: {type: generator, count: 10}"), 2, {});
  ASSERT_EQ(port->type(), "gpuring");
  const auto& c = static_cast<GpuRingPort&>(*port).config();
  EXPECT_EQ(c.rings.rings, 1u);
  EXPECT_EQ(c.rings.ring_size, 512u);
  EXPECT_EQ(c.rings.slot_bytes, 2048u);
  EXPECT_EQ(c.rings.slots_per_ring, 1536u);
  EXPECT_EQ(c.rings.queue_capacity, 2048u);
  EXPECT_EQ(c.rings.tail_batch, 32u);
  EXPECT_EQ(c.rings.tail_timeout_ns, 1000u);
  EXPECT_TRUE(c.rings.tx_writeback);
  EXPECT_EQ(c.placement, Placement::device);
  ASSERT_NE(static_cast<GpuRingPort&>(*port).inline_source(), nullptr);
  EXPECT_EQ(static_cast<GpuRingPort&>(*port).inline_source()->type(), "generator");
  EXPECT_EQ(port->max_frame_bytes(), 2048u);
  // Not wired into the executor yet: says so instead of pretending to have no packets.
  Batch b(4, 2048, MemoryKind::host);
  EXPECT_THROW(port->rx_burst(b, 4), std::runtime_error);
}

TEST(GpuRingConfig, EveryKey) {
  const GpuRingConfig c = GpuRingConfig::parse(yaml_node(
      "name: gr\ntype: gpuring\nrings: 8\nring_size: 1024\nslot_bytes: 1536\nslots_per_ring: 4000\n"
      "tail_batch: 16\ntail_timeout_ns: 0\ntx_writeback: false\nsource: gen\nsink: out\n"
      "rate: 2Mpps\nplacement: host\ndma: single\nburst: 64\nflow_control: on"));
  EXPECT_EQ(c.rings.rings, 8u);
  EXPECT_EQ(c.rings.ring_size, 1024u);
  EXPECT_EQ(c.rings.slot_bytes, 1536u);
  EXPECT_EQ(c.rings.slots_per_ring, 4000u);
  EXPECT_EQ(c.rings.queue_capacity, 4096u);
  EXPECT_EQ(c.rings.tail_batch, 16u);
  EXPECT_EQ(c.rings.tail_timeout_ns, 0u);
  EXPECT_FALSE(c.rings.tx_writeback);
  EXPECT_EQ(c.source_name, "gen");
  EXPECT_EQ(c.sink_name, "out");
  EXPECT_DOUBLE_EQ(c.rate_pps, 2e6);
  EXPECT_EQ(c.placement, Placement::host);
  EXPECT_EQ(c.dma, NicDma::single);
  EXPECT_EQ(c.burst, 64u);
  EXPECT_TRUE(c.flow_control);
}

TEST(GpuRingConfig, DmaKinds) {
  const std::string head = "name: gr\ntype: gpuring\nsource: gen\n";
  EXPECT_EQ(GpuRingConfig::parse(yaml_node(head)).dma, NicDma::batch);
  EXPECT_EQ(GpuRingConfig::parse(yaml_node(head + "dma: batch")).dma, NicDma::batch);
  EXPECT_EQ(GpuRingConfig::parse(yaml_node(head + "dma: sm")).dma, NicDma::sm);
  EXPECT_STREQ(nic_dma_name(NicDma::sm), "sm");
}

TEST(GpuRingConfig, PlacementAutoIsDecidedByTheFeed) {
  const GpuRingConfig c = GpuRingConfig::parse(
      yaml_node("name: gr\ntype: gpuring\nplacement: auto\nsource: {type: generator, count: 1}"));
  EXPECT_TRUE(c.placement_auto);
  EXPECT_NE(c.placement_where.find(":3"), std::string::npos) << c.placement_where;
  const GpuRingConfig d = GpuRingConfig::parse(
      yaml_node("name: gr\ntype: gpuring\nplacement: host\nsource: {type: generator, count: 1}"));
  EXPECT_FALSE(d.placement_auto);
}

const auto expect_error = test_util::expect_config_error;

TEST(GpuRingConfig, BadValuesNameFileAndLine) {
  const std::string head = "name: gr\ntype: gpuring\nsource: gen\n";  // lines 1-3
  expect_error(head + "ring_size: 100", "power of two", 4);
  expect_error(head + "ring_size: 4", "out of range", 4);
  expect_error(head + "rings: 0", "out of range", 4);
  expect_error(head + "rings: 65", "at most 64 with the NIC emulator", 4);
  expect_error(head + "rings: 129", "out of range", 4);
  expect_error(head + "slot_bytes: 1000", "multiple of 64", 4);
  expect_error(head + "ring_size: 64\ntail_batch: 64", "out of range", 5);
  expect_error(head + "tail_batch: 0", "out of range", 4);
  expect_error(head + "ring_size: 64\nslots_per_ring: 64", "out of range", 5);
  expect_error(head + "tx_writeback: maybe", "boolean", 4);
  expect_error(head + "rate: 10Gbps", "packets per second", 4);
  expect_error(head + "placement: fpga", "placement", 4);
  expect_error(head + "dma: fast", "dma", 4);
  expect_error(head + "ringz: 2", "ringz", 4);
  expect_error(head + "sink: [a, b]", "sink", 4);
  expect_error(head + "sink: {name: x}", "type:", 4);
}

TEST(GpuRingConfig, InlineSinkMustTransmit) {
  EXPECT_THROW(make_port(yaml_node("name: gr\ntype: gpuring\nsource: {type: generator, count: 1}\n"
                                   "sink: {type: generator, count: 1}"),
                         0, {}),
               ConfigError);
}

}  // namespace
}  // namespace gpunfv::gpuring
