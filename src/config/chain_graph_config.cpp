#include "config/internal/chain_graph_config.h"

#include <algorithm>

#include "core/ipv4_prefix.h"

namespace gpunfv {

ChainGraph parse_chain_graph(const ConfigNode& c, const std::map<std::string, uint16_t>& nf_ids) {
  ChainGraph g;
  std::map<std::string, uint8_t> node_of;
  std::vector<std::vector<ConfigNode>> next_nodes;  // resolved once every node is known
  std::vector<ConfigNode> path_nodes;
  if (auto path = c.get("path")) path_nodes = path->items();
  if (path_nodes.size() > kMaxChainNodes - 1)
    c["path"].fail("a chain holds at most " + std::to_string(kMaxChainNodes - 1) + " NFs");
  for (const ConfigNode& step : path_nodes) {
    std::string nf;
    std::vector<ConfigNode> next;
    if (step.is_map()) {
      step.only_keys({"nf", "next"});
      nf = step.str("nf");
      if (auto n = step.get("next")) next = n->is_sequence() ? n->items() : std::vector{*n};
      if (next.empty()) step["next"].fail("next: needs at least one target (or done)");
      if (next.size() > kMaxBranches)
        step["next"].fail("a branch has at most " + std::to_string(kMaxBranches) + " targets");
    } else {
      nf = step.as_string();
    }
    auto it = nf_ids.find(nf);
    if (it == nf_ids.end()) step.fail("unknown NF '" + nf + "'");
    if (!node_of.emplace(nf, static_cast<uint8_t>(g.nf.size())).second)
      step.fail("NF '" + nf + "' appears twice in this chain (declare a second NF for that)");
    g.nf.push_back(it->second);
    g.name.push_back(nf);
    next_nodes.push_back(std::move(next));
  }
  const auto n = static_cast<uint8_t>(g.nf.size());
  // A target must come later in the list: that keeps every chain acyclic and gives the
  // executor one order in which each node sees each batch.
  auto target = [&](const ConfigNode& t, uint8_t after) -> uint8_t {
    std::string name = t.as_string();
    if (name == "done") return kChainDone;
    auto it = node_of.find(name);
    if (it == node_of.end()) t.fail("'" + name + "' is not an NF of this chain (or done)");
    if (after != kAtIngress && it->second <= after)
      t.fail("'" + name + "' is not after '" + g.name[after] +
             "' in the path: targets must come later, so chains stay acyclic");
    return it->second;
  };
  for (uint8_t k = 0; k < n; ++k) {
    std::vector<uint8_t> next;
    if (next_nodes[k].empty()) {
      if (k + 1 < n) next.push_back(static_cast<uint8_t>(k + 1));
    } else {
      for (const ConfigNode& t : next_nodes[k]) {
        uint8_t id = target(t, k);
        if (std::find(next.begin(), next.end(), id) != next.end()) t.fail("target listed twice");
        next.push_back(id);
      }
      if (next.size() == 1 && next[0] == kChainDone) next.clear();
    }
    g.next.push_back(std::move(next));
  }
  if (auto routes = c.get("routes")) {
    std::vector<ConfigNode> items = routes->items();
    if (items.size() > kMaxChainRoutes)
      routes->fail("at most " + std::to_string(kMaxChainRoutes) + " routes per chain");
    for (const ConfigNode& r : items) {
      r.only_keys({"dst", "at", "next"});
      auto p = parse_ipv4_prefix(r.str("dst"));
      if (!p) r["dst"].fail("expected a prefix a.b.c.d/len with the host bits zero");
      ChainRoute route;
      route.prefix = p->addr;
      route.len = p->len;
      std::string at = r.str_or("at", "ingress");
      if (at == "ingress") {
        route.at = kAtIngress;
      } else {
        auto it = node_of.find(at);
        if (it == node_of.end()) r["at"].fail("'" + at + "' is not an NF of this chain (or ingress)");
        route.at = it->second;
      }
      route.next = target(r["next"], route.at);
      g.routes.push_back(route);
    }
    // Longest prefix first: the switch takes the first entry that matches.
    std::stable_sort(g.routes.begin(), g.routes.end(),
                     [](const ChainRoute& a, const ChainRoute& b) { return a.len > b.len; });
  }
  return g;
}

}  // namespace gpunfv
