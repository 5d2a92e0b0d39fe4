#include "chain/nf_factory.h"

#include "nf/router/router.h"

namespace gpunfv {

const char* known_nf_types() { return "router"; }

std::unique_ptr<NetworkFunction> make_nf(const ConfigNode& node, const NfContext& ctx) {
  std::string type = node.str("type");
  if (type == "router") return Router::from_config(node, ctx.port_id_of);
  node["type"].fail("unknown NF type '" + type + "' (known: " + known_nf_types() + ")");
}

}  // namespace gpunfv
