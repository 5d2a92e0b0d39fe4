#include "io/port_factory.h"

#include "io/afpacket_port.h"
#include "io/afxdp_port.h"
#include "io/dpdk_port.h"
#include "io/generator_port.h"
#include "io/discard_port.h"
#include "io/gpuring/gpuring_port.h"
#include "io/pcap_port.h"

namespace gpunfv {

std::unique_ptr<Port> make_port(const ConfigNode& node, uint16_t id, const PortContext& ctx) {
  if (!node.is_map()) node.fail("a port must be a map with name: and type:");
  const ConfigNode type_node = node["type"];
  // YAML reads a bare `null` (or nothing) as no value at all.
  if (type_node.yaml().IsNull())
    type_node.fail("port type is empty or YAML null (a port that consumes packets is `type: discard`)");
  const std::string type = type_node.as_string();
  if (type == "pcap") return std::make_unique<PcapPort>(node, id);
  if (type == "generator") return std::make_unique<GeneratorPort>(node, id, ctx);
  if (type == "discard" || type == "null") return DiscardPort::from_config(node, id);
  if (type == "gpuring") return std::make_unique<GpuRingPort>(node, id, ctx);
  if (type == "afpacket") return std::make_unique<AfPacketPort>(node, id);
  if (type == "afxdp") return make_afxdp_port(node, id);
  if (type == "dpdk") return make_dpdk_port(node, id);
  type_node.fail("unknown port type '" + type +
                 "' (known types: pcap, generator, discard, gpuring, afpacket, afxdp, dpdk)");
}

}  // namespace gpunfv
