#include "config/internal/nf_factory.h"

#include "config/config.h"
#include "nf/firewall/firewall.h"
#include "nf/ipsec/ipsec.h"
#include "nf/nids/nids.h"
#include "nf/router/router.h"

namespace gpunfv {

const char* known_nf_types() { return "router, firewall, ipsec, nids"; }

std::unique_ptr<NetworkFunction> make_nf(const ConfigNode& node, const NfContext& ctx) {
  std::string type = node.str("type");
  if (type == "router") return Router::from_config(node, ctx.port_id_of);
  if (type == "firewall") return Firewall::from_config(node);
  if (type == "ipsec") return IpsecGateway::from_config(node);
  if (type == "nids") return Nids::from_config(node);
  node["type"].fail("unknown NF type '" + type + "' (known: " + known_nf_types() + ")");
}

}  // namespace gpunfv
