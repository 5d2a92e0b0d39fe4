// A plain binary trie (one node per prefix bit): the obviously correct LPM the DIR-24-8 tests
// compare against.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ipv4_prefix.h"
#include "nf/router/lpm_dir24_8.h"

namespace gpunfv::router_test {

class ReferenceTrie {
 public:
  ReferenceTrie() : nodes_(1) {}

  // A repeated prefix replaces the earlier next hop (as Dir24_8 does).
  void insert(const Ipv4Prefix& p, uint32_t next_hop) {
    uint32_t n = 0;
    for (int depth = 0; depth < p.len; ++depth) {
      int bit = (p.addr >> (31 - depth)) & 1;
      if (nodes_[n].child[bit] == 0) {
        nodes_[n].child[bit] = uint32_t(nodes_.size());
        nodes_.emplace_back();
      }
      n = nodes_[n].child[bit];
    }
    nodes_[n].next_hop = int64_t(next_hop);
  }

  LpmResult lookup(uint32_t addr) const {
    LpmResult best;
    uint32_t n = 0;
    for (int depth = 0;; ++depth) {
      if (nodes_[n].next_hop >= 0) best = LpmResult{true, uint32_t(nodes_[n].next_hop)};
      if (depth == 32) break;
      uint32_t next = nodes_[n].child[(addr >> (31 - depth)) & 1];
      if (next == 0) break;  // node 0 is the root, never a child
      n = next;
    }
    return best;
  }

 private:
  struct Node {
    uint32_t child[2] = {0, 0};
    int64_t next_hop = -1;
  };
  std::vector<Node> nodes_;
};

}  // namespace gpunfv::router_test
