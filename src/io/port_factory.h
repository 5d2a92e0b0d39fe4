// Builds ports from the `ports:` section of a chain configuration.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config_node.h"
#include "core/ipv4_prefix.h"
#include "io/port.h"

namespace gpunfv {

struct PortContext {
  // Returns the routes of the router NF named `nf`, or nullptr if there is no such router.
  // The generator draws destination addresses from them (`dst_from:`).
  std::function<const std::vector<Ipv4Prefix>*(const std::string& nf)> routes_of;
};

// `node` is one element of `ports:` (with `name` and `type`). Throws ConfigError.
std::unique_ptr<Port> make_port(const ConfigNode& node, uint16_t id, const PortContext& ctx);

}  // namespace gpunfv
