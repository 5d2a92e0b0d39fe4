#include "config/internal/nf_factory.h"

#include "config/config.h"

namespace gpunfv {

std::string known_nf_types() {
  std::string out;
  for (const auto& t : NfRegistry::types()) out += (out.empty() ? "" : ", ") + t;
  return out;
}

std::unique_ptr<NetworkFunction> make_nf(const ConfigNode& node, const NfContext& ctx) {
  std::string type = node.str("type");
  if (NfFactory make = NfRegistry::find(type)) return make(node, ctx);
  node["type"].fail("unknown NF type '" + type + "' (known: " + known_nf_types() + ")");
}

}  // namespace gpunfv
