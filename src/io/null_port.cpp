#include "io/null_port.h"

namespace gpunfv {

std::unique_ptr<NullPort> NullPort::from_config(const ConfigNode& node, uint16_t id) {
  node.only_keys({"name", "type"});
  return std::make_unique<NullPort>(node.str("name"), id);
}

}  // namespace gpunfv
