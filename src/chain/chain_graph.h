// A chain as a graph of NF nodes: nodes keep the order they are listed in (a topological
// order), each node sends a packet on to one of its `next` targets, and an optional routing
// table of (destination prefix, current node) -> next node overrides that choice per packet
// (Simmer's dynamic chains, section 4.5). Targets always lie later in the list, so a batch
// crosses the nodes in list order and every node sees every batch once, whatever path its
// packets take.
//
// ChainGraph::view() is its trivially copyable form (core/chain_switch.h), which the per-packet
// switch reads on both backends. config/ builds it from a chain's `path:` and `routes:`
// (config/internal/chain_graph_config.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/chain_switch.h"

namespace gpunfv {

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
