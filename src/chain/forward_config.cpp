#include "chain/forward_config.h"

#include <set>

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
      Router::from_config(ConfigNode(router, route.file()), port_id_of);
  for (uint16_t eg : r->egress_ports())
    if (eg != spec.to)
      route.fail("route: a next hop is a port other than the forward's `to` (a forward has one "
                 "egress; use a chain with the router NF to choose among ports)");
  return r;
}

}  // namespace

std::vector<ForwardSpec> parse_forwards(const ConfigNode& list, const PortIdOf& port_id_of,
                                        const std::vector<std::unique_ptr<Port>>& ports) {
  std::vector<ForwardSpec> out;
  std::set<uint16_t> froms, tos;
  for (const ConfigNode& n : list.items()) {
    if (!n.is_map()) n.fail("a forward is a map with from: and to:");
    n.only_keys({"from", "to", "mode", "route", "descriptor_batch", "flush_us", "burst",
                 "integrity", "variant"});
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
    s.burst = uint32_t(n.int_or("burst", s.burst, 1, 256));
    if (auto i = n.get("integrity")) s.integrity = i->as_bool();
    if (auto r = n.get("route")) s.route = build_route(*r, s, port_id_of);
    if (auto v = n.get("variant")) {
      if (ports[*from_id]->type() != "gpuring" || ports[*to_id]->type() != "gpuring")
        v->fail("variant: applies to a forward between two gpuring ports only (P2PNIC's wr, rd, bn)");
      s.gpu_variant = v->as_string();
      if (s.gpu_variant != "wr" && s.gpu_variant != "rd" && s.gpu_variant != "bn")
        v->fail("variant: expected wr, rd or bn, got '" + s.gpu_variant + "'");
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gpunfv
