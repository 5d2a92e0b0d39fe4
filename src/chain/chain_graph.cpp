#include "chain/chain_graph.h"

#include <algorithm>

namespace gpunfv {

ChainView ChainGraph::view() const {
  ChainView v;
  v.n_nodes = static_cast<uint8_t>(nf.size());
  for (size_t k = 0; k < next.size(); ++k) {
    v.nodes[k].n_next = static_cast<uint8_t>(next[k].size());
    std::copy(next[k].begin(), next[k].end(), v.nodes[k].next);
  }
  v.n_routes = static_cast<uint8_t>(routes.size());
  std::copy(routes.begin(), routes.end(), v.routes);
  return v;
}

std::vector<std::vector<uint8_t>> ChainGraph::parents() const {
  std::vector<std::vector<uint8_t>> p(nf.size());
  auto add = [&](uint8_t from, uint8_t to) {
    if (to == kChainDone || from == kAtIngress) return;
    if (std::find(p[to].begin(), p[to].end(), from) == p[to].end()) p[to].push_back(from);
  };
  for (size_t k = 0; k < next.size(); ++k)
    for (uint8_t t : next[k]) add(static_cast<uint8_t>(k), t);
  for (const ChainRoute& r : routes) add(r.at, r.next);
  for (auto& v : p) std::sort(v.begin(), v.end());
  return p;
}

ChainGraph linear_chain_graph(const std::vector<uint16_t>& nfs) {
  ChainGraph g;
  g.nf = nfs;
  for (size_t k = 0; k < nfs.size(); ++k) {
    g.name.push_back("nf" + std::to_string(nfs[k]));
    g.next.push_back(k + 1 < nfs.size() ? std::vector<uint8_t>{uint8_t(k + 1)} : std::vector<uint8_t>{});
  }
  return g;
}

}  // namespace gpunfv
