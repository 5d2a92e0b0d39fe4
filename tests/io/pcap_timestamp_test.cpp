// A pcap record's seconds are unsigned 32-bit: a timestamp from 2038 on (seconds >= 2^31) is
// read as that time, not as a negative one wrapped around, and a replayed round never goes
// back in time (found by fuzz_pcap; fuzz/corpus/fuzz_pcap/regression-seconds-after-2038.pcap).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/config_node.h"
#include "io/pcap_port.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

void put32(std::string& s, uint32_t v) {
  for (int k = 0; k < 4; ++k) s += char(v >> (8 * k));
}

TEST(PcapPort, SecondsFrom2038AreUnsigned) {
  auto dir = testing::temp_dir("pcap-2038");
  std::string p;
  for (uint32_t v : {0xa1b2c3d4u, 0x00040002u, 0u, 0u, 65535u, 1u}) put32(p, v);
  const uint32_t secs[] = {1700000000u, 0x80000000u + 5u};  // the second one is in 2038
  for (uint32_t s : secs) {
    for (uint32_t v : {s, 7u, 60u, 60u}) put32(p, v);
    p += std::string(60, '\0');
  }
  std::string path = testing::write_file(dir / "t.pcap", p);
  PcapPort port(ConfigNode(YAML::Load("{name: in, type: pcap, rx: '" + path + "', repeat: 2}"),
                           (dir / "c.yaml").string()),
                0);
  Batch b(8, 128, MemoryKind::host);
  while (!port.rx_done()) port.rx_burst(b, 8 - b.count());
  ASSERT_EQ(b.count(), 4u);
  const BatchView v = b.view();
  EXPECT_EQ(v.wire_ns[0], 1700000000ull * 1000000000ull + 7000);
  EXPECT_EQ(v.wire_ns[1], (0x80000000ull + 5) * 1000000000ull + 7000);
  EXPECT_GE(v.wire_ns[2], v.wire_ns[1]);  // the second round comes after the first
}

}  // namespace
}  // namespace gpunfv
