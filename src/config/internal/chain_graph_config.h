// A chain's graph from its configuration.
// Errors: parse_chain_graph throws ConfigError naming the offending line.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "chain/chain_graph.h"
#include "core/config_node.h"

namespace gpunfv {

// Parses a chain's `path:` (NF names, or {nf: NAME, next: [NAME|done, ...]} for a branch)
// and optional `routes:` ({dst: A.B.C.D/L, at: ingress|NAME, next: NAME|done}).
ChainGraph parse_chain_graph(const ConfigNode& chain, const std::map<std::string, uint16_t>& nf_ids);

}  // namespace gpunfv
