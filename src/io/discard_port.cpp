#include "io/discard_port.h"

namespace gpunfv {

std::unique_ptr<DiscardPort> DiscardPort::from_config(const ConfigNode& node, uint16_t id) {
  node.only_keys({"name", "type"});
  return std::make_unique<DiscardPort>(node.str("name"), id);
}

}  // namespace gpunfv
