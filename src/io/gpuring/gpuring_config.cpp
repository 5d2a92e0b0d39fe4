#include "io/gpuring/gpuring_config.h"

#include "io/generator_config.h"

namespace gpunfv::gpuring {

namespace {

bool power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

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
                  "dma", "burst", "flow_control"});
  GpuRingConfig c;
  RingParams& p = c.rings;
  p.rings = static_cast<uint32_t>(node.int_or("rings", 1, 1, 64));
  p.ring_size = static_cast<uint32_t>(node.int_or("ring_size", 512, 8, 8192));
  if (!power_of_two(p.ring_size)) node["ring_size"].fail("ring_size must be a power of two (8..8192)");
  p.slot_bytes = static_cast<uint32_t>(node.int_or("slot_bytes", 2048, 128, 16384));
  if (p.slot_bytes % 64 != 0) node["slot_bytes"].fail("slot_bytes must be a multiple of 64");
  p.slots_per_ring = static_cast<uint32_t>(
      node.int_or("slots_per_ring", 3 * int64_t(p.ring_size), p.ring_size + 1, 1 << 20));
  p.tail_batch = static_cast<uint32_t>(node.int_or("tail_batch", 8, 1, p.ring_size - 1));
  p.tail_timeout_ns = static_cast<uint64_t>(node.int_or("tail_timeout_ns", 2500, 0, 1'000'000'000));
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
  }
  if (auto d = node.get("dma")) {
    const std::string s = d->as_string();
    if (s == "batch") c.batched_dma = true;
    else if (s == "single") c.batched_dma = false;
    else d->fail("dma: batch (cudaMemcpyBatchAsync) or single (cudaMemcpyAsync per frame)");
  }
  if (auto f = node.get("flow_control")) c.flow_control = f->as_bool();
  c.burst = static_cast<uint32_t>(node.int_or("burst", 32, 1, 1024));
  parse_endpoint(node, "source", c.source_name, c.source_spec);
  parse_endpoint(node, "sink", c.sink_name, c.sink_spec);
  return c;
}

}  // namespace gpunfv::gpuring
