// Chain graphs as parsed from YAML, and the per-packet switch that walks them.
#include "chain/chain_graph.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "chain/chain_switch.h"
#include "core/config_node.h"
#include "core/error.h"

namespace gpunfv {
namespace {

const std::map<std::string, uint16_t> kNfs = {{"a", 0}, {"b", 1}, {"c", 2}, {"d", 3}, {"e", 4}};

ChainGraph parse(const std::string& yaml) {
  return parse_chain_graph(ConfigNode(YAML::Load(yaml), "chain.yaml"), kNfs);
}

std::string error_of(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ChainGraph, StraightPath) {
  ChainGraph g = parse("{path: [c, a, e]}");
  EXPECT_EQ(g.nf, (std::vector<uint16_t>{2, 0, 4}));
  ASSERT_EQ(g.next.size(), 3u);
  EXPECT_EQ(g.next[0], (std::vector<uint8_t>{1}));
  EXPECT_EQ(g.next[1], (std::vector<uint8_t>{2}));
  EXPECT_TRUE(g.next[2].empty());
  EXPECT_EQ(g.parents()[2], (std::vector<uint8_t>{1}));
}

TEST(ChainGraph, BranchesAndRoutes) {
  ChainGraph g = parse(R"({path: [a, {nf: b, next: [c, d]}, {nf: c, next: [e]}, d, e],
    routes: [{dst: 198.19.0.0/16, at: ingress, next: b},
             {dst: 198.18.128.0/17, at: a, next: done},
             {dst: 198.18.0.0/15, at: b, next: e}]})");
  EXPECT_EQ(g.next[1], (std::vector<uint8_t>{2, 3}));
  EXPECT_EQ(g.next[2], (std::vector<uint8_t>{4}));
  EXPECT_EQ(g.next[3], (std::vector<uint8_t>{4}));
  ASSERT_EQ(g.routes.size(), 3u);
  EXPECT_EQ(g.routes[0].len, 17);  // longest prefix first
  EXPECT_EQ(g.routes[0].next, kChainDone);
  EXPECT_EQ(g.routes[2].len, 15);
  EXPECT_EQ(g.routes[1].at, kAtIngress);
  auto parents = g.parents();
  EXPECT_EQ(parents[4], (std::vector<uint8_t>{1, 2, 3}));
}

TEST(ChainGraph, Errors) {
  EXPECT_NE(error_of("{path: [a, x]}").find("unknown NF 'x'"), std::string::npos);
  EXPECT_NE(error_of("{path: [a, a]}").find("appears twice"), std::string::npos);
  EXPECT_NE(error_of("{path: [a, {nf: b, next: [a]}]}").find("targets must come later"),
            std::string::npos);
  EXPECT_NE(error_of("{path: [a, {nf: b, next: [z]}]}").find("not an NF of this chain"),
            std::string::npos);
  EXPECT_NE(error_of("{path: [a, {nf: b, next: []}]}").find("at least one target"),
            std::string::npos);
  EXPECT_NE(error_of("{path: [a, {nf: b, next: [c, c]}, c]}").find("listed twice"),
            std::string::npos);
  EXPECT_NE(error_of("{path: [a, {nf: b, when: 1}]}").find("when"), std::string::npos);
  EXPECT_NE(error_of("{path: [a, b], routes: [{dst: 10.0.0.1/8, next: b}]}").find("host bits"),
            std::string::npos);
  EXPECT_NE(error_of("{path: [a, b], routes: [{dst: 10.0.0.0/8, at: b, next: a}]}").find("later"),
            std::string::npos);
  EXPECT_NE(error_of("{path: [a, b], routes: [{dst: 10.0.0.0/8, at: q, next: b}]}").find("ingress"),
            std::string::npos);
  EXPECT_EQ(error_of("{path: [a, {nf: b, next: done}, c]}"), "");
}

// A batch of one IPv4 packet to `dst` with flow hash `hash`, parsed as classify leaves it.
struct OnePacket {
  std::vector<uint8_t> mem;
  BatchView v;
  OnePacket(uint32_t dst, uint32_t hash) {
    BatchLayout l = BatchLayout::make(1, 64);
    mem.assign(l.bytes, 0);
    v = l.view(mem.data(), 1);
    uint8_t* f = v.data.framework_data();
    f[12] = 0x08, f[13] = 0x00, f[14] = 0x45;
    f[30] = uint8_t(dst >> 24), f[31] = uint8_t(dst >> 16), f[32] = uint8_t(dst >> 8), f[33] = uint8_t(dst);
    v.headers[0] = PacketHeaders{14, 34, 4, 17};
    v.flow_hash[0] = hash;
    v.len[0] = 60;
  }
};

// The path a packet takes: every node it is sent to, NFs passing everything.
std::vector<uint8_t> walk(const ChainView& c, uint32_t dst, uint32_t hash) {
  OnePacket p(dst, hash);
  std::vector<uint8_t> path;
  uint8_t at = enter_chain(c, p.v, 0);
  while (at != kChainDone) {
    path.push_back(at);
    p.v.next_nf[0] = uint8_t(at + 1);  // what an NF does when it passes a packet
    at = switch_after_node(c, p.v, 0, at);
  }
  EXPECT_EQ(p.v.next_nf[0], kChainDone);
  uint32_t bits = 0;
  for (uint8_t k : path) bits |= 1u << k;
  EXPECT_EQ(p.v.visited[0], bits);
  return path;
}

TEST(ChainSwitch, FollowsBranchesAndRoutes) {
  ChainView c = parse(R"({path: [a, {nf: b, next: [c, d]}, {nf: c, next: [e]}, d, e],
    routes: [{dst: 198.19.0.0/16, at: ingress, next: b},
             {dst: 198.18.128.0/17, at: a, next: done}]})").view();
  using P = std::vector<uint8_t>;
  EXPECT_EQ(walk(c, 0xC6120001, 0), (P{0, 1, 2, 4}));  // 198.18.0.1, even hash: via c
  EXPECT_EQ(walk(c, 0xC6120001, 1), (P{0, 1, 3, 4}));  // odd hash: via d
  EXPECT_EQ(walk(c, 0xC6130001, 0), (P{1, 2, 4}));     // 198.19/16 skips a
  EXPECT_EQ(walk(c, 0xC6128001, 0), (P{0}));           // 198.18.128/17 leaves after a
}

TEST(ChainSwitch, PacketWaitingAtTheNextNodeIsNotMovedOn) {
  // Node 0 routes 10/8 straight to node 2; after node 1 runs, such a packet (next_nf == 2, its
  // visited bit set) is still waiting for node 2 and must stay.
  ChainView c = parse(R"({path: [a, b, c], routes: [{dst: 10.0.0.0/8, at: a, next: c}]})").view();
  OnePacket p(0x0A000001, 0);
  ASSERT_EQ(enter_chain(c, p.v, 0), 0);
  p.v.next_nf[0] = 1;  // node 0 passes it
  ASSERT_EQ(switch_after_node(c, p.v, 0, 0), 2);
  EXPECT_EQ(switch_after_node(c, p.v, 0, 1), kChainDone);  // not node 1's
  EXPECT_EQ(p.v.next_nf[0], 2);
  EXPECT_EQ(p.v.visited[0], 0b101u);
}

TEST(ChainSwitch, DroppedPacketsStay) {
  ChainView c = parse("{path: [a, b]}").view();
  OnePacket p(0x0A000001, 0);
  enter_chain(c, p.v, 0);
  p.v.verdict[0] = uint8_t(DropReason::firewall_rule);
  EXPECT_EQ(switch_after_node(c, p.v, 0, 0), kChainDone);
  EXPECT_EQ(p.v.next_nf[0], 0);
  EXPECT_TRUE(dropped_at_node(p.v, 0, 0));
  drop_at_node(p.v, 0, 0);  // already dropped: the first reason stays
  EXPECT_EQ(p.v.verdict[0], uint8_t(DropReason::firewall_rule));
}

}  // namespace
}  // namespace gpunfv
