// Builds NFs from the `nfs:` section of a chain configuration.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config_node.h"
#include "core/ipv4_prefix.h"
#include "nf/nf_registry.h"

namespace gpunfv {

// `node` is one element of `nfs:` (with `name` and `type`), built by its type's registered
// factory (nf/nf_registry.h). Throws ConfigError.
std::unique_ptr<NetworkFunction> make_nf(const ConfigNode& node, const NfContext& ctx);

// The routes of the router NF named `name` among `nfs` (one in an NF process included, as the
// Manager read its entry), for a generator's dst_from; nullptr if there is none.
const std::vector<Ipv4Prefix>* router_prefixes(const std::vector<std::unique_ptr<NetworkFunction>>& nfs,
                                               const std::string& name);

}  // namespace gpunfv
