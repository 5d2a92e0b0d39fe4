// A chain's nodes as the per-packet switch reads them (ChainView, built by chain/chain_graph.h
// from a chain's `path:` and `routes:`), and the switch between NFs (G-NET's zero-copy switch):
// it moves no packet bytes, only decides each packet's next chain node. A packet enters its
// chain at node 0 unless the chain's routing table says otherwise; after node k it goes to one
// of k's targets: the routing table's entry for (destination, k) if one matches, else the only
// target, else one chosen by flow hash (so a flow stays on one branch and keeps its order).
//
// NFs mark a packet they pass by advancing next_nf to their node + 1 and one they drop by
// setting verdict; the switch recognises node k's survivors as next_nf == k + 1 without the
// `visited` bit of node k + 1 (a packet the switch sent to k + 1 always has it).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/batch.h"
#include "core/compat.h"

namespace gpunfv {

inline constexpr uint32_t kMaxBranches = 8;      // targets of one branch node
inline constexpr uint32_t kMaxChainRoutes = 64;  // routing-table entries per chain
inline constexpr uint8_t kAtIngress = 0xFE;      // route "at": before the first NF

struct ChainNodeView {
  uint8_t n_next = 0;  // 0: the packet leaves the chain after this node
  uint8_t next[kMaxBranches] = {};
};

struct ChainRoute {
  uint32_t prefix = 0;  // host byte order, masked
  uint8_t len = 0;
  uint8_t at = 0;       // node index or kAtIngress
  uint8_t next = 0;     // node index or kChainDone
};

struct ChainView {
  uint8_t n_nodes = 0;
  uint8_t n_routes = 0;
  ChainNodeView nodes[kMaxChainNodes];
  ChainRoute routes[kMaxChainRoutes];  // longest prefix first
};
static_assert(std::is_trivially_copyable_v<ChainView>);

GPUNFV_HD inline uint8_t choose_next_node(const ChainView& c, uint8_t at, const BatchView& b,
                                          uint32_t i) {
  if (c.n_routes > 0) {
    const PacketHeaders& h = b.headers[i];
    if (h.ip_version == 4) {
      IsoSpan<const uint8_t> ip = b.data.subspan(slot_offset(b, i) + h.l3_off + 16, 4);
      const uint32_t dst = (uint32_t(ip[0]) << 24) | (uint32_t(ip[1]) << 16) |
                           (uint32_t(ip[2]) << 8) | ip[3];
      for (uint8_t r = 0; r < c.n_routes; ++r) {
        const ChainRoute& e = c.routes[r];
        const uint32_t mask = e.len == 0 ? 0u : ~0u << (32 - e.len);
        if (e.at == at && (dst & mask) == e.prefix) return e.next;
      }
    }
  }
  if (at == kAtIngress) return c.n_nodes > 0 ? 0 : kChainDone;
  const ChainNodeView& node = c.nodes[at];
  if (node.n_next == 0) return kChainDone;
  if (node.n_next == 1) return node.next[0];
  return node.next[b.flow_hash[i] % node.n_next];
}

// Sends packet i to node `to` (or out of the chain); returns `to`.
GPUNFV_HD inline uint8_t send_to_node(const BatchView& b, uint32_t i, uint8_t to) {
  b.next_nf[i] = to;
  if (to != kChainDone) b.visited[i] |= 1u << to;
  return to;
}

// After classify_packet: a live packet enters its chain. Returns the node it was sent to, or
// kChainDone (classify dropped it, or the chain has no NF).
GPUNFV_HD inline uint8_t enter_chain(const ChainView& c, const BatchView& b, uint32_t i) {
  b.visited[i] = 0;
  if (b.verdict[i] != static_cast<uint8_t>(DropReason::none)) return kChainDone;
  return send_to_node(b, i, choose_next_node(c, kAtIngress, b, i));
}

// After node k ran: sends k's survivors on. Returns the node packet i was sent to, or
// kChainDone when it was not k's survivor or left the chain.
GPUNFV_HD inline uint8_t switch_after_node(const ChainView& c, const BatchView& b, uint32_t i,
                                           uint8_t k) {
  if (b.verdict[i] != static_cast<uint8_t>(DropReason::none)) return kChainDone;
  const uint8_t at = b.next_nf[i];
  const uint8_t after = static_cast<uint8_t>(k + 1);
  if (at != after) return kChainDone;
  if (after < c.n_nodes && ((b.visited[i] >> after) & 1u)) return kChainDone;  // waiting at k + 1
  return send_to_node(b, i, choose_next_node(c, k, b, i));
}

// A packet waiting for node k is dropped there for `reason` (k's queue had no room; its NF is
// quarantined).
GPUNFV_HD inline void drop_at_node(const BatchView& b, uint32_t i, uint8_t k,
                                   DropReason reason = DropReason::nf_queue_full) {
  if (b.verdict[i] == static_cast<uint8_t>(DropReason::none) && b.next_nf[i] == k)
    b.verdict[i] = static_cast<uint8_t>(reason);
}

// The switch after one node of one chain, as the pipeline offers it to the node's NF
// (GpuStream::node_switch; nf/node_exit.h).
struct NodeSwitch {
  ChainView chain;
  uint8_t node = 0;
};
static_assert(std::is_trivially_copyable_v<NodeSwitch>);

}  // namespace gpunfv
