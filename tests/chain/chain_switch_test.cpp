// The per-packet switch walking a chain graph: branches, the routing table, dropped packets.
#include "core/chain_switch.h"

#include <gtest/gtest.h>

#include <vector>

#include "chain/chain_graph.h"

namespace gpunfv {
namespace {

// A graph of one node per NF (node k runs NF k) with these targets and routes (longest prefix
// first), as config/ parses it.
ChainGraph graph(std::vector<std::vector<uint8_t>> next, std::vector<ChainRoute> routes) {
  ChainGraph g;
  for (size_t k = 0; k < next.size(); ++k) {
    g.nf.push_back(uint16_t(k));
    g.name.push_back("nf" + std::to_string(k));
  }
  g.next = std::move(next);
  g.routes = std::move(routes);
  return g;
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
  // path: [a, {nf: b, next: [c, d]}, {nf: c, next: [e]}, d, e]
  // routes: 198.19.0.0/16 at ingress -> b, 198.18.128.0/17 at a -> done
  ChainView c = graph({{1}, {2, 3}, {4}, {4}, {}},
                      {{0xC6128000, 17, 0, kChainDone}, {0xC6130000, 16, kAtIngress, 1}}).view();
  using P = std::vector<uint8_t>;
  EXPECT_EQ(walk(c, 0xC6120001, 0), (P{0, 1, 2, 4}));  // 198.18.0.1, even hash: via c
  EXPECT_EQ(walk(c, 0xC6120001, 1), (P{0, 1, 3, 4}));  // odd hash: via d
  EXPECT_EQ(walk(c, 0xC6130001, 0), (P{1, 2, 4}));     // 198.19/16 skips a
  EXPECT_EQ(walk(c, 0xC6128001, 0), (P{0}));           // 198.18.128/17 leaves after a
}

TEST(ChainSwitch, PacketWaitingAtTheNextNodeIsNotMovedOn) {
  // Node 0 routes 10/8 straight to node 2; after node 1 runs, such a packet (next_nf == 2, its
  // visited bit set) is still waiting for node 2 and must stay.
  // path: [a, b, c], routes: 10.0.0.0/8 at a -> c
  ChainView c = graph({{1}, {2}, {}}, {{0x0A000000, 8, 0, 2}}).view();
  OnePacket p(0x0A000001, 0);
  ASSERT_EQ(enter_chain(c, p.v, 0), 0);
  p.v.next_nf[0] = 1;  // node 0 passes it
  ASSERT_EQ(switch_after_node(c, p.v, 0, 0), 2);
  EXPECT_EQ(switch_after_node(c, p.v, 0, 1), kChainDone);  // not node 1's
  EXPECT_EQ(p.v.next_nf[0], 2);
  EXPECT_EQ(p.v.visited[0], 0b101u);
}

TEST(ChainSwitch, DroppedPacketsStay) {
  ChainView c = linear_chain_graph({0, 1}).view();
  OnePacket p(0x0A000001, 0);
  enter_chain(c, p.v, 0);
  p.v.verdict[0] = uint8_t(DropReason::not_ipv4);
  EXPECT_EQ(switch_after_node(c, p.v, 0, 0), kChainDone);
  EXPECT_EQ(p.v.next_nf[0], 0);
  EXPECT_TRUE(dropped_at_node(p.v, 0, 0));
  drop_at_node(p.v, 0, 0);  // already dropped: the first reason stays
  EXPECT_EQ(p.v.verdict[0], uint8_t(DropReason::not_ipv4));
}

}  // namespace
}  // namespace gpunfv
