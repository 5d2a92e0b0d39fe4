#include "io/port_factory.h"

#include "io/generator_port.h"
#include "io/null_port.h"
#include "io/pcap_port.h"

namespace gpunfv {

std::unique_ptr<Port> make_port(const ConfigNode& node, uint16_t id, const PortContext& ctx) {
  if (!node.is_map()) node.fail("a port must be a map with name: and type:");
  const ConfigNode type_node = node["type"];
  const std::string type = type_node.as_string();
  if (type == "pcap") return std::make_unique<PcapPort>(node, id);
  if (type == "generator") return std::make_unique<GeneratorPort>(node, id, ctx);
  if (type == "null") return NullPort::from_config(node, id);
  type_node.fail("unknown port type '" + type + "' (known types: pcap, generator, null)");
}

}  // namespace gpunfv
