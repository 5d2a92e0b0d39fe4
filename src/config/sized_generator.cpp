#include "config/config.h"

#include <yaml-cpp/yaml.h>

#include "core/config_node.h"
#include "core/error.h"
#include "io/port_factory.h"
#include "config/internal/nf_factory.h"

namespace gpunfv {

std::unique_ptr<Port> sized_generator(const RuntimeConfig& rc, uint32_t size) {
  if (rc.chains.empty()) throw ConfigError(rc.file, "no chain: the profiler takes traffic from the first chain's port");
  const uint16_t id = rc.chains[0].from;
  const std::string& name = rc.ports[id]->name();
  YAML::Node root = YAML::LoadFile(rc.file);
  for (YAML::Node p : root["ports"]) {
    if (!p["name"] || p["name"].as<std::string>() != name) continue;
    ConfigNode node(p, rc.file);
    if (node.str("type") != "generator")
      node.fail("port '" + name + "' is not a generator: the profiler needs one to choose frame "
                "sizes (see bench/nf_bench/*.yaml)");
    p["size"] = std::to_string(size);
    p["rate"] = "0";
    p["count"] = "1000000000000";
    p.remove("duration");
    PortContext ctx;
    ctx.routes_of = [&](const std::string& nf) { return router_prefixes(rc.nfs, nf); };
    return make_port(ConfigNode(p, rc.file), id, ctx);
  }
  throw ConfigError(rc.file, "no port named '" + name + "'");
}

}  // namespace gpunfv
