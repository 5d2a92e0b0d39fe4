#include "io/gpuring/gpuring_config.h"

#include <algorithm>

#include "io/generator_config.h"
#include "io/gpuring/nic/nic_precheck.h"

namespace gpunfv::gpuring {

namespace {

bool power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// `nic:` (a real 82599 in place of the emulator): a PCI address; the emulator's own settings
// (what feeds it, where it sends, its pacing and copies) then mean nothing and are refused.
void parse_nic(const ConfigNode& node, GpuRingConfig& c) {
  const ConfigNode n = node["nic"];
  const std::string text = n.as_string();
  const auto address = canonical_pci_address(text);
  if (!address)
    n.fail("nic: '" + text + "' is not a PCI address (dddd:bb:dd.f or bb:dd.f, hex, as lspci -D shows; the "
           "82599 port bound to vfio-pci)");
  for (const char* key : {"source", "sink", "rate", "dma", "flow_control", "burst"})
    if (auto k = node.get(key))
      k->fail(std::string(key) + ": a NIC emulator setting; with nic: the real NIC receives and sends the frames "
              "(leave it out, or drop nic: to emulate)");
  c.nic = *address;
  c.nic_where = n.where();
  c.port_node = node;
}

// `source:`/`sink:`: a port name, or an inline port spec (a map with type:).
void parse_endpoint(const ConfigNode& node, const char* key, std::string& name,
                    std::optional<ConfigNode>& spec) {
  auto n = node.get(key);
  if (!n) return;
  if (n->is_scalar()) {
    name = n->as_string();
    if (name.empty()) n->fail(std::string(key) + ": empty port name");
  } else if (n->is_map()) {
    if (!n->has("type")) n->fail(std::string(key) + ": an inline port needs type:");
    if (n->str("type") == "gpuring") n->fail(std::string(key) + ": a gpuring port cannot feed a gpuring port");
    spec = *n;
  } else {
    n->fail(std::string(key) + ": a port name or an inline port (a map with type:)");
  }
}

}  // namespace

GpuRingConfig GpuRingConfig::parse(const ConfigNode& node) {
  node.only_keys({"name", "type", "rings", "ring_size", "slot_bytes", "slots_per_ring", "tail_batch",
                  "tail_timeout_ns", "tx_writeback", "source", "sink", "rate", "placement",
                  "dma", "burst", "flow_control", "nic", "eal"});
  GpuRingConfig c;
  if (node.has("nic")) parse_nic(node, c);
  else if (auto e = node.get("eal")) e->fail("eal: starts DPDK for a real NIC; it needs nic:");
  RingParams& p = c.rings;
  p.rings = static_cast<uint32_t>(node.int_or("rings", 1, 1, kMaxQueues));
  if (!c.real_nic() && p.rings > 64)
    node["rings"].fail("rings: at most 64 with the NIC emulator (a real 82599, nic:, has 128 queues)");
  p.ring_size = static_cast<uint32_t>(node.int_or("ring_size", 512, 8, 8192));
  if (!power_of_two(p.ring_size)) node["ring_size"].fail("ring_size must be a power of two (8..8192)");
  p.slot_bytes = static_cast<uint32_t>(node.int_or("slot_bytes", 2048, 128, 16384));
  if (p.slot_bytes % 64 != 0) node["slot_bytes"].fail("slot_bytes must be a multiple of 64");
  if (c.real_nic() && (p.slot_bytes % 1024 != 0 || p.slot_bytes < 2048))
    (node.has("slot_bytes") ? node["slot_bytes"] : node)
        .fail("slot_bytes: with nic: a multiple of 1024 (the 82599's SRRCTL.BSIZEPKT counts KiB) and at least "
              "2048 (a 1518-byte frame in one buffer: the ring loops do not chain descriptors)");
  p.slots_per_ring = static_cast<uint32_t>(
      node.int_or("slots_per_ring", 3 * int64_t(p.ring_size), p.ring_size + 1, 1 << 20));
  // Defaults from RingParams (why there); a small ring gets half of itself per tail write.
  const RingParams defaults;
  p.tail_batch = static_cast<uint32_t>(
      node.int_or("tail_batch", std::min(defaults.tail_batch, p.ring_size / 2), 1, p.ring_size - 1));
  p.tail_timeout_ns =
      static_cast<uint64_t>(node.int_or("tail_timeout_ns", int64_t(defaults.tail_timeout_ns), 0, 1'000'000'000));
  if (auto w = node.get("tx_writeback")) p.tx_writeback = w->as_bool();
  p = finish_params(p);

  if (auto r = node.get("rate")) {
    const GeneratorRate rate = parse_generator_rate(*r);
    if (rate.unit == GeneratorRate::Unit::bits_per_sec)
      r->fail("rate: the NIC emulator paces packets; give packets per second (e.g. 2Mpps)");
    c.rate_pps = rate.unit == GeneratorRate::Unit::unlimited ? 0 : rate.per_sec;
    c.rate_text = r->as_string();
  }
  c.where = c.placement_where = node.where();
  if (auto pl = node.get("placement")) {
    const std::string s = pl->as_string();
    c.placement_where = pl->where();
    if (s == "device") c.placement = Placement::device;
    else if (s == "host") c.placement = Placement::host;
    else if (s == "auto") c.placement_auto = true;
    else pl->fail("placement: device (GPU memory, persistent kernels), host (CPU threads) or auto "
                  "(device on the GPU backend, host on the CPU backend)");
    if (c.real_nic() && c.placement == Placement::host && !c.placement_auto)
      pl->fail("placement: host with nic: the NIC's DMA goes to the rings in GPU memory; use device or auto");
  }
  if (auto d = node.get("dma")) {
    const std::string s = d->as_string();
    if (s == "batch") c.dma = NicDma::batch;
    else if (s == "single") c.dma = NicDma::single;
    else if (s == "sm") c.dma = NicDma::sm;
    else d->fail("dma: batch (the copy engine, cudaMemcpyBatchAsync), single (the copy engine, cudaMemcpyAsync "
                 "per frame) or sm (GPU threads: a persistent block runs the copies)");
  }
  if (auto f = node.get("flow_control")) c.flow_control = f->as_bool();
  c.burst = static_cast<uint32_t>(node.int_or("burst", 32, 1, 1024));
  parse_endpoint(node, "source", c.source_name, c.source_spec);
  parse_endpoint(node, "sink", c.sink_name, c.sink_spec);
  return c;
}

}  // namespace gpunfv::gpuring
