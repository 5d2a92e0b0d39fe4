#include "config/internal/nf_factory.h"

#include <stdexcept>

#include "config/config.h"
#include "nf/nf_plugin.h"
#include "nf/nf_process/nf_process.h"
#include "nf/router/router.h"

namespace gpunfv {

std::string known_nf_types() {
  std::string out;
  for (const auto& t : NfRegistry::types()) out += (out.empty() ? "" : ", ") + t;
  return out;
}

namespace {

// `{type: plugin, library: PATH, ...}`: loads the library and reads the entry as one of the
// type it registered, without `library:`, so the NF's own key check sees only its keys. The
// entry's keys and values are shared, not copied, so errors keep their lines.
// The entry without `drop` (keys the framework reads, not the NF), keys and values shared.
ConfigNode without_key(const ConfigNode& node, const std::string& drop) {
  YAML::Node own(YAML::NodeType::Map);
  for (const auto& kv : node.yaml())
    if (kv.first.as<std::string>() != drop) own.force_insert(kv.first, kv.second);
  return node.in_context(own);
}

std::unique_ptr<NetworkFunction> make_plugin_nf(const ConfigNode& node, const NfContext& ctx) {
  const ConfigNode library = node["library"];
  const std::string path = library.as_input_file("NF plugin");
  std::string type;
  try {
    type = load_nf_plugin(path);
  } catch (const std::runtime_error& e) {
    library.fail(e.what());
  }
  YAML::Node own(YAML::NodeType::Map);
  for (const auto& kv : node.yaml()) {
    const std::string key = kv.first.as<std::string>();
    if (key == "type")
      own[key] = type;
    else if (key != "library")
      own.force_insert(kv.first, kv.second);
  }
  return NfRegistry::find(type)(node.in_context(own), ctx);
}

}  // namespace

std::unique_ptr<NetworkFunction> make_nf(const ConfigNode& entry, const NfContext& ctx) {
  const ConfigNode node = entry.has("process") ? without_key(entry, "process") : entry;
  std::string type = node.str("type");
  if (type == "plugin") return make_plugin_nf(node, ctx);
  if (NfFactory make = NfRegistry::find(type)) return make(node, ctx);
  node["type"].fail("unknown NF type '" + type + "' (known: " + known_nf_types() +
                    ", or plugin with library:)");
}

const std::vector<Ipv4Prefix>* router_prefixes(const std::vector<std::unique_ptr<NetworkFunction>>& nfs,
                                               const std::string& name) {
  for (const auto& nf : nfs) {
    if (nf->name() != name) continue;
    const NetworkFunction* f = nf.get();
    if (auto* proxy = dynamic_cast<const NfProcessProxy*>(f)) f = &proxy->shape();
    auto* router = dynamic_cast<const Router*>(f);
    return router ? &router->prefixes() : nullptr;
  }
  return nullptr;
}

}  // namespace gpunfv
