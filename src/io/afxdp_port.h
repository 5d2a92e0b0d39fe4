// placeholder, replaced below
#pragma once
#include <memory>
#include "core/config_node.h"
#include "io/port.h"
namespace gpunfv {
std::unique_ptr<Port> make_afxdp_port(const ConfigNode& node, uint16_t id);
}
