#include "io/afxdp_port.h"
namespace gpunfv {
std::unique_ptr<Port> make_afxdp_port(const ConfigNode& node, uint16_t) {
  node["type"].fail("afxdp: not built yet");
}
}
