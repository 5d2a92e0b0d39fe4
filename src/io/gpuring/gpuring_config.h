// Configuration of a `type: gpuring` port (see gpuring_port.h for the YAML).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/config_node.h"
#include "io/gpuring/nic_emu/dma_engine.h"
#include "io/gpuring/ring/ring_params.h"
#include "io/gpuring/ring/ring_set.h"

namespace gpunfv::gpuring {

struct GpuRingConfig {
  RingParams rings;
  Placement placement = Placement::device;
  // placement: auto: device on the GPU backend, host on the CPU backend (a chain's feed decides;
  // the ring benchmark takes it as device).
  bool placement_auto = false;
  std::string where, placement_where;  // file:line of the port and of its placement: key
  double rate_pps = 0;  // NIC emulator's offered rate; 0 = unpaced
  std::string rate_text = "0";
  NicDma dma = NicDma::batch;  // how the emulator moves bytes (dma_engine.h)
  bool flow_control = false;
  uint32_t burst = 32;  // frames the NIC emulator takes per rx step, per ring
  // The source and sink: a port named elsewhere in `ports:`, or a port spec given inline. Which
  // the port needs depends on its role (a port that receives needs a source; one that is only
  // a forward's target has none): config/runtime_config.cpp checks that.
  std::string source_name, sink_name;
  std::optional<ConfigNode> source_spec, sink_spec;
  // A real 82599 instead of the emulator (dpdk_nic.h): its canonical PCI address, the nic:
  // line, and the port's node (its eal: list starts DPDK's EAL). Empty: the NIC is emulated.
  std::string nic, nic_where;
  std::optional<ConfigNode> port_node;

  bool has_source() const { return !source_name.empty() || source_spec.has_value(); }
  bool real_nic() const { return !nic.empty(); }
  // Throws ConfigError naming the file:line of a bad key or value.
  static GpuRingConfig parse(const ConfigNode& node);
};

}  // namespace gpunfv::gpuring
