// A chain as a graph of NF nodes: nodes keep the order they are listed in (a topological
// order), each node sends a packet on to one of its `next` targets, and an optional routing
// table of (destination prefix, current node) -> next node overrides that choice per packet
// (Simmer's dynamic chains, section 4.5). Targets always lie later in the list, so a batch
// crosses the nodes in list order and every node sees every batch once, whatever path its
// packets take.
//
// ChainView is the trivially copyable form the per-packet switch reads on both backends.
// config/ builds it from a chain's `path:` and `routes:` (config/internal/chain_graph_config.h).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

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

// Host description, as parsed.
struct ChainGraph {
  std::vector<uint16_t> nf;                 // node -> NF index in RuntimeConfig::nfs
  std::vector<std::string> name;            // node -> NF name
  std::vector<std::vector<uint8_t>> next;   // node -> targets (kChainDone = leave)
  std::vector<ChainRoute> routes;
  ChainView view() const;
  // Parents of each node (nodes that may send packets to it), for the scheduler.
  std::vector<std::vector<uint8_t>> parents() const;
};

// A straight path through `nfs` (node k sends to k + 1; the last leaves the chain).
ChainGraph linear_chain_graph(const std::vector<uint16_t>& nfs);

}  // namespace gpunfv
