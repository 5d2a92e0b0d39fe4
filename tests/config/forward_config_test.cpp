// `variant:` of a forward (P2PNIC's wr | rd | bn): only between two gpuring ports, and only
// those three values; anything else is a ConfigError naming file:line.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "config/config.h"
#include "config/internal/forward_config.h"
#include "core/error.h"
#include "io/port_factory.h"
#include "tests/chain/chain_test_util.h"
#include "tests/io/port_test_util.h"

namespace gpunfv {
namespace {

std::vector<std::unique_ptr<Port>> two_gpuring_and_a_generator() {
  std::vector<std::unique_ptr<Port>> ports;
  ports.push_back(make_port(test::yaml_node("name: a\ntype: gpuring\nplacement: host\nsource: {type: generator, count: 1}"), 0, {}));
  ports.push_back(make_port(test::yaml_node("name: b\ntype: gpuring\nplacement: host\nsource: {type: generator, count: 1}"), 1, {}));
  ports.push_back(make_port(test::yaml_node("name: g\ntype: generator\ncount: 1"), 2, {}));
  return ports;
}

PortIdOf ids() {
  return [](const std::string& n) -> std::optional<uint16_t> {
    if (n == "a") return 0;
    if (n == "b") return 1;
    if (n == "g") return 2;
    return std::nullopt;
  };
}

TEST(ForwardVariant, ParsedBetweenTwoGpuringPorts) {
  auto ports = two_gpuring_and_a_generator();
  auto specs = parse_forwards(test::yaml_node("- {from: a, to: b, variant: wr, integrity: on}"), ids(), ports);
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].gpu_variant, "wr");
  EXPECT_TRUE(specs[0].integrity);
  EXPECT_EQ(parse_forwards(test::yaml_node("- {from: a, to: b}"), ids(), ports)[0].gpu_variant, "");
}

TEST(ForwardVariant, RefusedOffGpuringPortsAndForUnknownValues) {
  auto ports = two_gpuring_and_a_generator();
  try {
    parse_forwards(test::yaml_node("- {from: g, to: b,\n   variant: rd}", "/tmp/f.yaml"), ids(), ports);
    ADD_FAILURE() << "a variant between a generator and a gpuring port was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("two gpuring ports"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f.yaml:2"), std::string::npos) << e.what();
  }
  try {
    parse_forwards(test::yaml_node("- {from: a, to: b, variant: rw}", "/tmp/f.yaml"), ids(), ports);
    ADD_FAILURE() << "variant rw was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("expected wr, rd or bn"), std::string::npos) << e.what();
  }
}

TEST(ForwardVariant, APcapForwardWithAVariantFailsAtLoad) {
  auto dir = testing::temp_dir("fwd-variant");
  const std::string cfg = testing::write_file(
      dir / "c.yaml", "ports:\n  - {name: in, type: pcap, rx: " + testing::source_dir() +
                          "/data/traces/SIP_CALL_RTP_G711.pcap}\n  - {name: out, type: pcap, tx: out.pcap}\n"
                          "forward:\n  - from: in\n    to: out\n    variant: wr\n");
  try {
    load_runtime_config(cfg);
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("two gpuring ports"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("c.yaml:7"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpunfv
