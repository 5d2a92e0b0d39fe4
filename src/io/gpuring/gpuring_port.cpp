#include "io/gpuring/gpuring_port.h"

#include <fmt/core.h>

#include <stdexcept>

namespace gpunfv {

namespace {
// An inline port spec needs no name of its own: it is named after this port.
ConfigNode named(const ConfigNode& spec, const std::string& name) {
  YAML::Node n = spec.yaml();
  if (!static_cast<const YAML::Node&>(n)["name"]) n["name"] = name;
  return ConfigNode(n, spec.file());
}
}  // namespace

GpuRingPort::GpuRingPort(const ConfigNode& node, uint16_t id, const PortContext& ctx)
    : Port(node.str("name"), id), config_(gpuring::GpuRingConfig::parse(node)) {
  // Inline ports get this port's id: their frames enter gpunfv through it.
  if (config_.source_spec) {
    source_ = make_port(named(*config_.source_spec, name() + ".source"), id, ctx);
    if (!source_->has_rx()) config_.source_spec->fail("source: this port has no rx side");
  }
  if (config_.sink_spec) {
    sink_ = make_port(named(*config_.sink_spec, name() + ".sink"), id, ctx);
    if (!sink_->has_tx()) config_.sink_spec->fail("sink: this port has no tx side");
  }
}

GpuRingPort::~GpuRingPort() = default;

uint32_t GpuRingPort::rx_burst(Batch&, uint32_t) {
  throw std::runtime_error("gpuring port '" + name() +
                           "': packets are driven by the ring loops (RingSession, or the chain "
                           "executor through chain/gpuring_feed.h), not by rx_burst");
}

bool GpuRingPort::tx(const BatchView&, uint32_t) {
  throw std::runtime_error("gpuring port '" + name() + "': tx is driven by the GPU ring runner");
}

std::string GpuRingPort::describe() const {
  const auto& p = config_.rings;
  if (config_.real_nic())
    return fmt::format("gpuring rings={} ring_size={} slot_bytes={} tail_batch={} tail_timeout_ns={} tx_writeback={} "
                       "nic={} (a real 82599 through DPDK)",
                       p.rings, p.ring_size, p.slot_bytes, p.tail_batch, p.tail_timeout_ns,
                       p.tx_writeback ? "on" : "off", config_.nic);
  return fmt::format(
      "gpuring rings={} ring_size={} slot_bytes={} tail_batch={} tail_timeout_ns={} tx_writeback={} "
      "placement={} rate={} source={} sink={} (NIC emulated)",
      p.rings, p.ring_size, p.slot_bytes, p.tail_batch, p.tail_timeout_ns, p.tx_writeback ? "on" : "off",
      config_.placement_auto ? "auto" : config_.placement == gpuring::Placement::device ? "device" : "host",
      config_.rate_text,
      source_ ? source_->describe() : (config_.source_name.empty() ? "(none)" : config_.source_name),
      sink_ ? sink_->describe() : (config_.sink_name.empty() ? "(none)" : config_.sink_name));
}

}  // namespace gpunfv
