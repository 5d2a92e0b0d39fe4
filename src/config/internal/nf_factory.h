// Builds NFs from the `nfs:` section of a chain configuration.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/config_node.h"
#include "nf/network_function.h"

namespace gpunfv {

struct NfContext {
  // Port id of a port name, nullopt if no such port (NFs that choose egress ports use it).
  std::function<std::optional<uint16_t>(const std::string&)> port_id_of;
};

// `node` is one element of `nfs:` (with `name` and `type`). Throws ConfigError.
std::unique_ptr<NetworkFunction> make_nf(const ConfigNode& node, const NfContext& ctx);

}  // namespace gpunfv
