#include "io/port_factory.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "port_test_util.h"

namespace gpunfv {
namespace {

using test::trace_path;
using test::yaml_node;

TEST(PortFactory, BuildsPcapPort) {
  auto port = make_port(yaml_node("name: trace\ntype: pcap\nrx: " + trace_path("dns.cap")), 2, {});
  EXPECT_EQ(port->type(), "pcap");
  EXPECT_EQ(port->name(), "trace");
  EXPECT_EQ(port->id(), 2);
  EXPECT_TRUE(port->has_rx());
}

TEST(PortFactory, BuildsGeneratorPort) {
  auto port = make_port(yaml_node("name: gen\ntype: generator\ncount: 10"), 4, {});
  EXPECT_EQ(port->type(), "generator");
  EXPECT_EQ(port->id(), 4);
}

TEST(PortFactory, BuildsNullPort) {
  auto port = make_port(yaml_node("name: sink\ntype: discard"), 1, {});
  EXPECT_EQ(port->type(), "discard");
  EXPECT_TRUE(port->has_tx());
}

TEST(PortFactory, UnknownTypeNamesFileLineAndKnownTypes) {
  try {
    make_port(yaml_node("name: nic\n\ntype: rdma\n"), 0, {});
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("/tmp/cfg.yaml:3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rdma"), std::string::npos) << msg;
    EXPECT_NE(msg.find("pcap, generator, discard"), std::string::npos) << msg;
  }
}

TEST(PortFactory, MissingTypeOrNameIsConfigError) {
  EXPECT_THROW(make_port(yaml_node("name: p\nrx: a.pcap\n"), 0, {}), ConfigError);
  EXPECT_THROW(make_port(yaml_node("type: generator\ncount: 1\n"), 0, {}), ConfigError);
  EXPECT_THROW(make_port(yaml_node("- just a list\n"), 0, {}), ConfigError);
}

TEST(PortFactory, PortsRejectUnknownKeys) {
  EXPECT_THROW(make_port(yaml_node("name: g\ntype: generator\ncount: 1\nrotes: r\n"), 0, {}),
               ConfigError);
  EXPECT_THROW(make_port(yaml_node("name: p\ntype: pcap\ntx: /tmp/x.pcap\nrate: 1Mpps\n"), 0, {}),
               ConfigError);
}

}  // namespace
}  // namespace gpunfv
