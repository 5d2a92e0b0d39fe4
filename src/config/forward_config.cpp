#include "config/internal/forward_config.h"

#include <fmt/format.h>

#include <set>

#include "io/gpuring/gpuring_port.h"
#include "nf/router/router.h"

namespace gpunfv {

namespace {

// The route of a forward is a Router built from the same `routes:` forms, so the table,
// the file formats and their errors are the router's own.
std::shared_ptr<const Router> build_route(const ConfigNode& route, const ForwardSpec& spec,
                                          const PortIdOf& port_id_of) {
  YAML::Node router;
  router["name"] = "forward " + spec.name;
  router["type"] = "router";
  router["routes"] = route.yaml();
  std::shared_ptr<const Router> r =
      Router::from_config(route.in_context(router), port_id_of);
  for (uint16_t eg : r->egress_ports())
    if (eg != spec.to)
      route.fail("route: a next hop is a port other than the forward's `to` (a forward has one "
                 "egress; use a chain with the router NF to choose among ports)");
  return r;
}

// A forward between two gpuring ports shares one slot pool between them and feeds ring pair r
// of one into ring pair r of the other: their shapes must agree, and batching is theirs.
void check_ring_forward(const ConfigNode& n, const GpuRingPort& a, const GpuRingPort& b, const std::string& variant) {
  for (const char* key : {"mode", "descriptor_batch", "flush_us", "burst", "latency_sample", "count_bytes"})
    if (n.has(key))
      n[key].fail(std::string(key) + ": does not apply to a forward between gpuring ports (the rings hand "
                  "descriptors over; they batch tail updates by the ports' tail_batch and tail_timeout_ns)");
  const gpuring::RingParams& p = a.config().rings;
  const gpuring::RingParams& q = b.config().rings;
  auto differ = [&](const char* key, uint64_t x, uint64_t y) {
    if (x != y)
      n.fail(fmt::format("ports '{}' and '{}' differ in {} ({} vs {}): a forward between gpuring ports "
                         "shares one slot pool, ring pair r of one feeding ring pair r of the other",
                         a.name(), b.name(), key, x, y));
  };
  differ("rings", p.rings, q.rings);
  differ("ring_size", p.ring_size, q.ring_size);
  differ("slot_bytes", p.slot_bytes, q.slot_bytes);
  differ("slots_per_ring", p.slots_per_ring, q.slots_per_ring);
  differ("tail_batch", p.tail_batch, q.tail_batch);
  differ("tail_timeout_ns", p.tail_timeout_ns, q.tail_timeout_ns);
  differ("tx_writeback", p.tx_writeback, q.tx_writeback);
  if (a.config().placement != b.config().placement)
    n.fail("ports '" + a.name() + "' and '" + b.name() + "' differ in placement: the forward's rings lie in "
           "one memory (both device, or both host)");
  if (variant == "bn" && a.config().placement != gpuring::Placement::host)
    n["variant"].fail("variant: bn is the baseline through host memory: it needs placement: host on both ports");
}

}  // namespace

std::vector<ForwardSpec> parse_forwards(const ConfigNode& list, const PortIdOf& port_id_of,
                                        const std::vector<std::unique_ptr<Port>>& ports) {
  std::vector<ForwardSpec> out;
  std::set<uint16_t> froms, tos;
  for (const ConfigNode& n : list.items()) {
    if (!n.is_map()) n.fail("a forward is a map with from: and to:");
    n.only_keys({"from", "to", "mode", "route", "descriptor_batch", "flush_us", "burst",
                 "latency_sample", "integrity", "variant", "count_bytes"});
    ForwardSpec s;
    const std::string from = n.str("from"), to = n.str("to");
    auto from_id = port_id_of(from), to_id = port_id_of(to);
    if (!from_id) n["from"].fail("unknown port '" + from + "'");
    if (!to_id) n["to"].fail("unknown port '" + to + "'");
    if (!ports[*from_id]->has_rx()) n["from"].fail("port '" + from + "' has no rx side");
    if (!ports[*to_id]->has_tx()) n["to"].fail("port '" + to + "' has no tx side");
    if (!froms.insert(*from_id).second)
      n["from"].fail("port '" + from + "' already feeds another forward");
    if (!tos.insert(*to_id).second)
      n["to"].fail("port '" + to + "' is already the target of another forward");
    s.from = *from_id;
    s.to = *to_id;
    s.name = from + "=>" + to;
    const std::string mode = n.str_or("mode", "zerocopy");
    if (mode == "copy")
      s.mode = ForwardMode::copy;
    else if (mode != "zerocopy")
      n["mode"].fail("mode: expected zerocopy or copy, got '" + mode + "'");
    s.descriptor_batch = uint32_t(n.int_or("descriptor_batch", s.descriptor_batch, 1, 4096));
    s.flush_us = uint32_t(n.int_or("flush_us", s.flush_us, 1, 10'000'000));
    s.burst = uint32_t(n.int_or("burst", s.burst, 1, kMaxForwardBurst));
    s.latency_sample = uint32_t(n.int_or("latency_sample", s.latency_sample, 1, 1 << 20));
    if (auto i = n.get("integrity")) s.integrity = i->as_bool();
    if (auto r = n.get("route")) {
      s.route = build_route(*r, s, port_id_of);
      s.hook = route_hook(s.route);
    }
    if (auto c = n.get("count_bytes")) {
      const std::string v = c->as_string();
      if (v == "off")
        s.count_bytes = ByteCounting::off;
      else if (v != "exact")
        c->fail("count_bytes: expected exact or off, got '" + v + "'");
      if (s.count_bytes == ByteCounting::off && (s.route || s.integrity || s.mode == ForwardMode::copy))
        c->fail("count_bytes: off applies to a plain zero-copy forward only (route, integrity and "
                "mode: copy read every frame anyway, and count its bytes exactly)");
    }
    const bool ring_from = ports[*from_id]->type() == "gpuring", ring_to = ports[*to_id]->type() == "gpuring";
    if (auto v = n.get("variant")) {
      if (!ring_from || !ring_to)
        v->fail("variant: applies to a forward between two gpuring ports only (P2PNIC's wr, rd, bn)");
      s.gpu_variant = v->as_string();
      if (s.gpu_variant != "wr" && s.gpu_variant != "rd" && s.gpu_variant != "bn")
        v->fail("variant: expected wr, rd or bn, got '" + s.gpu_variant + "'");
    }
    if (ring_from != ring_to)
      n[ring_from ? "from" : "to"].fail(
          "a gpuring port forwards only to or from another gpuring port (the forward runs on both "
          "ports' rings); to reach a host port, use a chain from the gpuring port");
    if (ring_from) {
      s.on_rings = true;
      check_ring_forward(n, dynamic_cast<const GpuRingPort&>(*ports[*from_id]),
                         dynamic_cast<const GpuRingPort&>(*ports[*to_id]), s.gpu_variant);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gpunfv
