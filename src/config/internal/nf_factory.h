// Builds NFs from the `nfs:` section of a chain configuration.
#pragma once

#include <memory>

#include "core/config_node.h"
#include "nf/nf_registry.h"

namespace gpunfv {

// `node` is one element of `nfs:` (with `name` and `type`), built by its type's registered
// factory (nf/nf_registry.h). Throws ConfigError.
std::unique_ptr<NetworkFunction> make_nf(const ConfigNode& node, const NfContext& ctx);

}  // namespace gpunfv
